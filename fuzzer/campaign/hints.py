"""Hints: the candidates a shrink of a finding tries first, from what the keys of the
bugs held say of their 1-minimal programs.

A wrong value at a stage the bisector has no subsystems for (``eager``, ``aot_eager``)
is keyed by what its 1-minimal program does (``bugs.key_of``'s ``{does ...}``: its
forms and the words of its mode).  No probe of a larger program can match such a key
(``fuzzer.triage.recognise`` passes it over), so every repeat of such a bug was shrunk
in full, dozens of candidates, before it could be told from a new one: in a one-hour
campaign, effects missing inside ``torch.cond`` behind a known Inductor error were 14 %
of its time.  A hint is the finding's own case cut toward what the held bug's key says
(:func:`toward`): the statements of its forms, the statements they read replaced by
their operands where that is legal, and the mode simplified as far as the key's words
allow.  The shrinker takes a hint only as it takes any candidate (simpler, the same bug
class where the finding showed it, ``fuzzer.judge.spots``, judged afresh), and its
passes go on from there, so the result is as minimal as without hints and a finding of
another bug is not made one of these by its hint: a hint that writes another input
wrong, or loses another call, shows another divergence of the class and is refused.

What a hint does change is which bug a program that holds two of one class yields: a
program whose missing effect both a held bug's forms and another form show is shrunk to
the held bug, where the passes alone would have kept one of the two by their order.
The other is still found by the programs that lack the held bug's forms, which get no
hint; the masked search (``fuzzer.campaign.masked``) looks for a bug of another stage,
not this.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from fuzzer.corpus.bugs import BugKey, Does, mode_words
from fuzzer.judge import contract
from fuzzer.judge.trial import Finding
from fuzzer.limits import TRIAGE
from fuzzer.program.ir import Case, InvalidProgram
from fuzzer.program.rewire import read_as_operand
from fuzzer.reduce.edits import keeping_forms, with_mode
from fuzzer.reduce.order import simpler_modes
from fuzzer.triage.family import family


def hints_for(finding: Finding, held: Mapping[BugKey, int]) -> tuple[Case, ...]:
    """The hints for ``finding``: for each held bug of its family whose key says what its
    1-minimal program does, with forms all in the finding's program, the cases
    :func:`toward` it that the IR accepts; at most ``TRIAGE.shrink_hints``, each costing
    one candidate."""
    case = finding.case
    fam = family(contract.bug_class(finding.kind, finding.divergences))
    present = {stmt.form for stmt in case.program.body}
    hints: list[Case] = []
    for key in held:
        does = Does.of_key(key)
        if does is None or not does.forms or not set(does.forms) <= present or key.family != fam:
            continue
        for hint in toward(case, does):
            if hint != case and hint not in hints and _legal(hint):
                hints.append(hint)
    return tuple(hints[:TRIAGE.shrink_hints])


def toward(case: Case, does: Does) -> list[Case]:
    """``case`` cut toward a program that does ``does``, boldest first: the statements of
    its forms reading, in place of what other statements made, those statements'
    operands; then the same statements with what they read kept; each with the mode
    simplified as far as ``does.mode`` allows (a mode word the key lacks, its 1-minimal
    program's mode lacks)."""
    kept = keeping_forms(case, does.forms)
    bold = kept
    for n in reversed(range(len(kept.program.body))):
        stmt = bold.program.body[n]
        if stmt.form not in does.forms and stmt.out is not None and stmt.args:
            bold = dataclasses.replace(bold, program=read_as_operand(bold.program, n))
    return [_simpler_mode(bold, does.mode), _simpler_mode(kept, does.mode)]


def _simpler_mode(case: Case, words: tuple[str, ...]) -> Case:
    """``case`` with each single simplification of its mode taken while the mode still
    says every one of ``words`` (``bugs.mode_words``)."""
    mode, wanted = case.program.mode, set(words)
    changed = True
    while changed:
        changed = False
        for simpler in simpler_modes(mode):
            if wanted <= set(mode_words(simpler)):
                mode, changed = simpler, True
                break
    return with_mode(case, mode)


def _legal(case: Case) -> bool:
    """Whether the IR accepts ``case`` (one it refuses costs the shrink nothing, but is
    no hint)."""
    try:
        case.validate()
    except InvalidProgram:
        return False
    return True

