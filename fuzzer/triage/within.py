"""A target's own finding, localised within the target's pipeline.

A finding of ``export``, ``aoti`` or ``compiled-autograd`` whose program shows the bug
through ``compile`` too (compiled autograd off) is localised there, with torch's
debugging backends and switches (``entries.culprit_of``).  One that ``compile`` does
not show is the target's own, and nothing of ``torch.compile``'s can place it; but
each of these pipelines has pieces of its own, each runnable alone
(``targets.PIECES``, each beside its target: ``Target.walk``).  Export's
(``exporting.Lowering``):

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

Compiled autograd's (``targets.CompiledAutogradPiece``): the forward compiled with the
finding's backend, as the target compiles it, and the backward graph compiled autograd
captures compiled by each of torch's debugging backends in turn, up to the finding's:

1. ``compiled-autograd-eager``: Dynamo's trace of compiled autograd's graph, run as
   captured: what compiled autograd's capture (and Dynamo on its graph) made;
2. ``compiled-autograd-aot_eager``: AOTAutograd on that graph too (functionalization,
   effect tokens);
3. ``compiled-autograd-aot_eager_decomp_partition``: Inductor's decompositions and the
   partitioner on it;
4. ``compiled-autograd-inductor``: Inductor compiling it (the target itself, with
   Inductor as its backend).

The walk replays the finding's case through each piece up to its own target, with a
fresh export or compile each time, and blames the first that shows the same bug (as
``fuzzer.triage.stage.walk`` does over torch's debugging backends): a bug the graph
already shows is export's tracing's, one only ``.module()`` shows is its unlifting's,
one the decomposed graph shows first is the decompositions' (or functionalization's),
one only the package shows is AOTInductor's; a compiled-autograd bug the ``eager``
backward shows is its capture's, one that needs Inductor on the backward is
Inductor's on compiled autograd's graph.  The finding's own target (compiled
autograd's: the piece of the finding's backend) is not run again: the case was judged
showing the bug there by a fresh run already (the trial's confirmation, or the
shrink's oracle on the candidate it kept).

The blame names the piece (its ``Target.blame``, :func:`blames`), so a target's own bugs group by where in
its pipeline they show, and, for a wrong value, by what the program does
(``bugs.key_of``, as for a stage with no switch): not each entry a bug of its own.
"""

from __future__ import annotations

import torch

from fuzzer.judge import targets
from fuzzer.limits import TRIAGE, OracleBudget
from fuzzer.triage.culprit import Culprit
from fuzzer.triage.probe import BudgetSpent, Outcome, Probe


def blames() -> dict[str, str]:
    """What a culprit's stage says of each piece, by piece (each one's ``Target.blame``):
    where in the pipeline the bug is made."""
    return {t.name: t.blame for t in targets.every() if t.blame}


def blamed(stage: str | None) -> str | None:
    """The piece a culprit's ``stage`` blames (None: no piece's)."""
    return next((piece for piece, blame in blames().items() if blame == stage), None)


def walk_of(target: str) -> tuple[str, ...]:
    """The pieces a finding of ``target`` that ``compile`` does not show is walked over,
    in pipeline order, its own last (``Target.walk``; (): none, or no such target)."""
    return targets.get(target).walk if target in targets.TARGETS else ()


def walks(target: str) -> bool:
    """Whether a finding of ``target`` that ``compile`` does not show is localised here."""
    return bool(walk_of(target))


def pieces_for(target: str, backend: str) -> tuple[str, ...]:
    """The pieces a finding of ``target`` found on ``backend`` is walked over, its own
    last: a piece that compiles with a backend of its own (``backward``: compiled
    autograd's) is walked up to the finding's backend, whose piece is the target itself."""
    walk = walk_of(target)
    backends = [getattr(targets.get(piece), "backward", None) for piece in walk]
    return walk[:backends.index(backend) + 1] if backend in backends else walk


def localise(entry, device: str, budget: OracleBudget = TRIAGE.budget) -> Culprit:
    """The piece of ``entry``'s target's pipeline its bug first shows in (see the
    module's docstring), within ``budget``: its culprit blames nothing where the budget
    ran out before a piece was placed."""
    pieces = pieces_for(entry.target, entry.backend)
    probe = Probe(entry.case, entry.kind, entry.bug_class, device, budget, entry.spots)
    found = None
    try:
        found = next((piece for piece in pieces[:-1]
                      if probe.outcome(entry.backend, target=piece) is Outcome.STAYS), pieces[-1])
    except BudgetSpent:
        pass
    return Culprit(stage=targets.get(found).blame if found else None, kind=entry.kind, oracle_calls=probe.calls,
                   seconds=probe.seconds, budget_exhausted=probe.exhausted, torch_version=torch.__version__)
