"""Which stage of the compiler a finding's bug appears in.

torch ships debugging backends that stop the compile at successive stages:
``eager`` runs Dynamo's captured graph as is, ``aot_eager`` adds AOTAutograd
(functionalization, the effect tokens), ``aot_eager_decomp_partition`` adds
Inductor's decompositions and the partitioner, and ``inductor`` is the whole
compiler.  Replaying a finding's case on each in turn, with fresh, cache-free
compiles, the first on which the same bug class shows is the stage to blame: a
bug that needs ``inductor`` lives in Inductor's own passes, lowerings or
scheduler, not in tracing or functionalization.  An earlier stage may fail
*otherwise*: an Inductor compile error whose program ``aot_eager`` runs to wrong
values is a wrong value at ``aot_eager`` that Inductor's crash hides.  The walk keeps
what such a stage showed, so the report does not say that stage is clean.
"""

from __future__ import annotations

from collections.abc import Sequence

from fuzzer.judge import contract, targets
from fuzzer.triage.probe import Outcome, Probe

#: torch's debugging backends, from the least of the compiler to all of it
STAGES: tuple[str, ...] = targets.DEBUG_BACKENDS


#: the stages that run Dynamo's graph without removing a dead call, so that say nothing
#: of a ``missed-dce``: the eager backend runs every node Dynamo captured, and Dynamo
#: keeps a custom-op call whatever its result's use (it cannot know the op is pure)
NO_DCE: tuple[str, ...] = ("eager",)


def stages_for(kind: str, backend: str = "inductor") -> tuple[str, ...]:
    """The stages a finding of ``kind`` found on ``backend`` is walked over: those up to
    ``backend``, less, for a ``missed-dce``, those where no dead call is removed (the
    bug is where a call should have gone, never where nothing removes calls)."""
    stages = STAGES[:STAGES.index(backend) + 1]
    if kind in contract.PERFORMANCE_KINDS:
        stages = tuple(s for s in stages if s not in NO_DCE)
    return stages


def walk(probe: Probe, stages: Sequence[str] = STAGES,
         otherwise: dict[str, tuple[str, ...]] | None = None) -> str | None:
    """The first of ``stages`` on which ``probe``'s bug shows (None: none).  Into
    ``otherwise``, each stage before it that was not clean: the finding kinds it
    showed instead (another bug, or an error that kept this one from being judged),
    or the status that kept the program from being judged at all."""
    for stage in stages:
        outcome = probe.outcome(stage)
        if outcome is Outcome.STAYS:
            return stage
        if probe.seen and otherwise is not None:  # not clean: another bug, an error
            otherwise[stage] = probe.seen
    return None
