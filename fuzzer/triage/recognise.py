"""A finding recognised as a known bug: the facts the bug's key reads, checked one by
one with the probes that answer them, before the finding is triaged or shrunk in full.

A bug's key (``fuzzer.corpus.bugs.key_of``, ``Culprit.key``) is built from a few
facts: the family of the bug class, the first stage that shows it, whether static
shapes show it too, and inside Inductor the switch to blame with the rewriting
switches whose throwing also removes it.  A whole triage (``culprit.localise``)
*discovers* those facts: it walks every stage, throws every switch, pairs them and
bisects.  To say that a finding is a given known bug needs less: each fact the
known bug's key names is *checked*, and a probe whose answer the key cannot read
is not made.  The answers are put in a :class:`Culprit` and its key made by the
same code as any culprit's, so a finding is recognised only when the key its own
probes give is, character for character, the known one: recognition never
guesses a fact, it only leaves out the probes that cannot change the key.

What is left out, and why the key cannot change:

- the compile on the finding's own backend, the last step of the stage walk: the
  case was judged showing the bug there by a fresh compile already (the trial's
  confirmation, or the shrink's oracle on the candidate it kept), so the walk's
  answer there is known;
- the switches before the blamed one that only move the computation
  (``switches.Role.MOVES``): the blame is the *last* switch that removes the bug,
  and the key names only rewriting ones besides it (``switches.also_needed``);
- the pairs of switches, probed only where no switch alone removes the bug, and
  the bisection, run for a wrong value only where no switch is blamed.

Only one shape of key is checked so (:func:`checkable`): a wrong value (or effect
log) on Inductor blamed on one switch, alone, not the no-op removal (whose blame is
refined by per-op rules that take a probe each).  Any other key (an error, whose
blame is the bisector's pass and needs the bisection itself; a stage alone, keyed
by what the program does, which an unshrunk program does more of) is not
recognised here, and the finding goes the way it went before.  A probe that
disagrees with the key ends the check at once, so a finding of another bug of the
same family costs only the probes up to the first that tells them apart.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import torch

from fuzzer.judge import contract
from fuzzer.program.ir import Case
from fuzzer.triage import rules, stage, switches
from fuzzer.triage.culprit import Culprit
from fuzzer.triage.family import family
from fuzzer.triage.probe import BudgetSpent, Outcome, Probe, TriageBudget

#: the stage whose switches a checked key blames
INDUCTOR = "inductor"
#: how a key marks a bug that needs dynamic shapes (``Culprit.key``)
DYNAMIC_ONLY = " [dynamic shapes only]"


def blamed_switch(key: str, fam: str) -> str | None:
    """The switch a key of family ``fam`` blames on Inductor, where that is the whole of
    its blame and a switch recognition can check (None: any other key)."""
    prefix = f"{fam} @ {INDUCTOR}:"
    if not key.startswith(prefix):
        return None
    name = key[len(prefix):].partition(" ")[0]
    if name not in switches.BY_NAME or name == rules.NOOP_SWITCH:
        return None  # a pair (``a+b``), a rule (``op[rule]``), a pass, or the refined no-op removal
    return name


def checkable(kind: str, bug_class: str, backend: str, keys: Iterable[str]) -> list[str]:
    """The keys among ``keys`` that a finding of ``kind`` and ``bug_class``, found on
    ``backend``, could be checked against (see the module docstring)."""
    if kind in contract.ERROR_KINDS or kind in contract.PROCESS_KINDS or backend != INDUCTOR:
        return []
    fam = family(bug_class)
    return [key for key in keys if blamed_switch(key, fam) is not None]


def recognise(case: Case, kind: str, bug_class: str, device: str, keys: Iterable[str],
              key_of: Callable[[Culprit], str], budget: TriageBudget = TriageBudget(),
              backend: str = INDUCTOR) -> Culprit | None:
    """The culprit whose key is one of ``keys``, checked on ``case`` (None: none is,
    or the probes could not say; the finding then goes its usual way).

    ``key_of`` makes the key of the finding with a culprit (``bugs.key_of`` of its
    entry), so the key compared is made as any entry's is.  Each candidate key is
    checked in turn, the probes shared: a switch answers once.
    """
    probe = Probe(case, kind, bug_class, device, budget)
    answers: dict[tuple[str, bool], Outcome] = {}

    def outcome(name: str | None, dynamic: bool = True) -> Outcome:
        """Inductor's answer with switch ``name`` thrown (None: none), asked once."""
        if (name or "", dynamic) not in answers:
            patch = switches.BY_NAME[name].patch if name else None
            answers[name or "", dynamic] = probe.outcome(INDUCTOR, patch, dynamic=dynamic)
        return answers[name or "", dynamic]

    try:
        candidates = checkable(kind, bug_class, backend, keys)
        if not candidates or not _first_on_inductor(probe, kind, backend):
            return None
        for key in candidates:
            blamed = blamed_switch(key, family(bug_class))
            found = _switches_for(blamed, outcome)
            if found is None:
                continue
            static = outcome(None, dynamic=False)
            culprit = Culprit(stage=INDUCTOR, kind=kind, switches=found,
                              dynamic_only={Outcome.GONE: True, Outcome.STAYS: False}.get(static),
                              oracle_calls=probe.calls, seconds=probe.seconds,
                              torch_version=torch.__version__, key_only=True)
            if key_of(culprit) == key:
                return culprit
    except BudgetSpent:
        return None
    return None


def _first_on_inductor(probe: Probe, kind: str, backend: str) -> bool:
    """Whether Inductor is the first stage that shows the bug: no stage before it does
    (each compiled), and Inductor does (the case was judged so already)."""
    for name in stage.stages_for(kind, backend)[:-1]:
        if probe.outcome(name) is Outcome.STAYS:
            return False
    return True


def _switches_for(blamed: str, outcome: Callable[[str], Outcome]) -> dict[str, str] | None:
    """The switches' outcomes that make ``blamed`` the blame, or None as soon as one
    says otherwise: ``blamed`` thrown removes the bug, no switch after it does, and
    each rewriting switch before it is asked (the key names those that remove it)."""
    order = [s.name for s in switches.available()]
    if blamed not in order:
        return None
    at = order.index(blamed)
    found = {blamed: outcome(blamed).value}
    if found[blamed] != Outcome.GONE.value:
        return None
    for name in order[at + 1:]:
        found[name] = outcome(name).value
        if found[name] == Outcome.GONE.value:
            return None  # a later switch removes it: the blame is that one
    for name in order[:at]:
        if switches.BY_NAME[name].role is switches.Role.REWRITES:
            found[name] = outcome(name).value
    return found
