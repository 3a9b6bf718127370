"""A target's own finding, localised within the target's pipeline.

A finding of ``export`` or ``aoti`` whose program shows the bug through ``compile``
too is localised there, with torch's debugging backends and switches
(``entries.culprit_of``).  One that ``compile`` does not show is the target's own,
and nothing of ``torch.compile``'s can place it; but export's pipeline has pieces of
its own, each runnable alone (``targets.PIECES``, ``exporting.LOWERINGS``):

1. ``export-graph``: the exported program's graph (export's training IR: writes kept
   in place, effects inline), called without ``.module()`` (``exporting.GraphRun``):
   what export's tracing made;
2. ``export``: the same program run as its ``.module()``, which unlifts it and checks
   its guards;
3. ``export-decomposed-graph``: the program after ``run_decompositions()``
   (functionalized, to the core ATen set AOTInductor lowers: writes become outputs,
   effects thread tokens), its graph called without ``.module()``, the writes copied
   back as unlifting would;
4. ``export-decomposed``: that program as its ``.module()``, whose unlifting inserts
   the copies back and removes the tokens;
5. ``aoti``: the package AOTInductor compiles from the exported program.

The walk replays the finding's case through each piece up to its own target, with a
fresh export each time, and blames the first that shows the same bug (as
``fuzzer.triage.stage.walk`` does over torch's debugging backends): a bug the graph
already shows is export's tracing's, one only ``.module()`` shows is its unlifting's,
one the decomposed graph shows first is the decompositions' (or functionalization's),
one only the package shows is AOTInductor's.  The finding's own target is not run
again: the case was judged showing the bug there by a fresh run already (the trial's
confirmation, or the shrink's oracle on the candidate it kept).

The blame names the piece (:data:`BLAMES`), so a target's own bugs group by where in
its pipeline they show, and, for a wrong value, by what the program does
(``bugs.key_of``, as for a stage with no switch): not each entry a bug of its own.
"""

from __future__ import annotations

import torch

from fuzzer.limits import TRIAGE, OracleBudget
from fuzzer.triage.culprit import Culprit
from fuzzer.triage.probe import BudgetSpent, Outcome, Probe

#: the pieces a target's own finding is walked over, in pipeline order, its own last
WALKS: dict[str, tuple[str, ...]] = {
    "export": ("export-graph", "export"),
    "aoti": ("export-graph", "export", "export-decomposed-graph", "export-decomposed", "aoti"),
}
#: what a culprit's stage says of each piece: where in the pipeline the bug is made
BLAMES: dict[str, str] = {
    "export-graph": "export-trace",
    "export": "export-unlift",
    "export-decomposed-graph": "export-decompositions",
    "export-decomposed": "export-decomposed-unlift",
    "aoti": "aoti",
}


def walks(target: str) -> bool:
    """Whether a finding of ``target`` that ``compile`` does not show is localised here."""
    return target in WALKS


def localise(entry, device: str, budget: OracleBudget = TRIAGE.budget) -> Culprit:
    """The piece of ``entry``'s target's pipeline its bug first shows in (see the
    module's docstring), within ``budget``: its culprit blames nothing where the budget
    ran out before a piece was placed."""
    pieces = WALKS[entry.target]
    probe = Probe(entry.case, entry.kind, entry.bug_class, device, budget, entry.spots)
    found = None
    try:
        found = next((piece for piece in pieces[:-1]
                      if probe.outcome(entry.backend, target=piece) is Outcome.STAYS), pieces[-1])
    except BudgetSpent:
        pass
    return Culprit(stage=BLAMES[found] if found else None, kind=entry.kind, oracle_calls=probe.calls,
                   seconds=probe.seconds, budget_exhausted=probe.exhausted, torch_version=torch.__version__)
