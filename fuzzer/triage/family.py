"""A bug class's family: what triage localises and bugs group by.

One root cause shows as a different kind depending on where its corrupted value
goes: returned (``wrong-output|values``), written to an input
(``wrong-mutation|values``) or seen by an effectful op (``effect-log|data``).  Those
are one family, ``corrupted-value|values``.  An effect log whose order changed keeps
its order symptoms: ``effect-log|data,reordered`` is the family
``effect-log|reordered``, since the order of effects is what no value bug explains.
An error's family is its class: where torch raised it (``raised.raised_at``), or,
for a death or an error of no frame of torch, its message normalised afresh
(Inductor's operation names, ``op10``, are the program's, like ``buf10``).

A finding's class can hold two bugs at once (a program whose effect log is both
reordered and sees wrong data; the shrinker keeps both symptoms, as the class
demands).  Triage localises the family's part: a probe that removes it but leaves
the rest of what the finding already showed has removed *this* bug
(:func:`leftover`).
"""

from __future__ import annotations

from fuzzer.judge import contract
from fuzzer.judge.contract import BugClass
from fuzzer.judge.raised import SITE_PREFIX

#: the family of wrong values, wherever they land
CORRUPTED = "corrupted-value"
#: symptoms of a value that is there, with the right shape, but wrong
_VALUE_SYMPTOMS = {contract.VALUES, contract.NON_FINITE, contract.DATA}


def symptoms(bug_class: BugClass) -> tuple[str, set[str]]:
    """The kind and the symptom words of a (non-error) bug class."""
    return bug_class.kind, bug_class.words


#: the kinds a wrong value shows as: one family wherever they land; where their blame
#: names only a stage, what the program does joins their key (``bugs.does``); the only
#: kinds asked whether their inputs' aliasing changed (``fuzzer.triage.aliasing``)
VALUE_KINDS = contract.VALUE_KINDS


#: the stale-cache labels whose ``:aspect`` is dropped from the family: ``fake-changed:shape``
#: and ``:stride`` are one key missing one fake impl, where ``config-changed:SETTING``
#: names the setting a key missed, and two settings are two bugs
ASPECT_DROPPED = ("fake-changed",)


def _stale_family(words: set[str]) -> BugClass:
    """A stale-cache class (the variant's label, the kind, its symptoms) with wrong
    values made one, as for a single compile, the label without its aspect (where
    ``ASPECT_DROPPED``) and an error without its message: the variant and the cache say
    which bug it is, while the message says what the stale code tripped over in this
    program."""
    words = {w.partition(":")[0] if w.partition(":")[0] in ASPECT_DROPPED else w for w in words if " " not in w}
    others = words - set(VALUE_KINDS) - _VALUE_SYMPTOMS
    if not words & set(VALUE_KINDS) or words & {contract.MISSING, contract.EXTRA, contract.DUPLICATED,
                                            contract.REORDERED}:
        return BugClass(contract.STALE_CACHE, tuple(sorted(words)))
    return BugClass(contract.STALE_CACHE, tuple(sorted(others | {CORRUPTED})))


def family(bug_class: BugClass) -> BugClass:
    """The bug class with returned, written and logged wrong values made one."""
    kind, words = bug_class.kind, bug_class.words
    corrupted = BugClass(CORRUPTED, (contract.VALUES,))
    if kind == contract.STALE_CACHE:
        return _stale_family(words)
    if kind in contract.ERROR_KINDS:
        said = bug_class.symptoms[0] if bug_class.symptoms else ""
        if said.startswith(SITE_PREFIX):
            return bug_class  # classed by where it was raised: nothing in it is the program's
        # normalised again: entries saved before a name pattern was known keep it
        return BugClass(kind, (contract.normalise_message(said),))
    if kind not in VALUE_KINDS:
        return bug_class
    if kind == contract.EFFECT_LOG:
        order = tuple(sorted(words - {contract.DATA}))
        return BugClass(kind, order) if order else corrupted
    return corrupted if words <= _VALUE_SYMPTOMS else bug_class


def leftover(found: BugClass, seen: BugClass) -> bool:
    """``seen`` is what remains of ``found`` once its family's part is gone: the same
    kind, a strict part of its symptoms, and another family."""
    if family(seen) == family(found) or found.kind in contract.ERROR_KINDS:
        return False
    (kind, had), (seen_kind, has) = symptoms(found), symptoms(seen)
    return kind == seen_kind and bool(has) and has < had
