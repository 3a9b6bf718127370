"""A crash or timeout's culprit: the first stage whose fresh process dies so.

Other findings are triaged in the triaging process (``fuzzer.triage.probe``); a crash
cannot be: a probe that kills its process would take the triage with it.  So its stage
is found from outside, by the same walk (``fuzzer.triage.stage``): the case runs on
each of torch's debugging backends in turn, up to the one it was found on, each in a
fresh process (``fuzzer.isolation.deaths``) with its heap checked
(``fuzzer.isolation.heapcheck``), and the first whose process dies so
(``Death.confirms``: the same death, or, for a heap corruption, any death a corrupted
heap is met by) is its stage.  A stage before it whose process died another death, or
ran but could not judge its run, is kept as ``otherwise``, as for any finding.

Each process is one oracle call of the triage's budget (``--triage-budget``); the walk
stops before a call once either the calls or the seconds are spent.  A timeout's
process gets ``PoolLimits.casualty_candidate_seconds``, as its shrink candidates do (a
stage that hangs would cost the campaign's whole limit).  One process per stage: a
corrupted heap that kills only some processes may be placed a stage late, never early
(a stage is named only by a death of its own).

The culprit records the stage and its cost; a crash's key stays its innermost frame of
torch (``fuzzer.corpus.bugs``), and the stage is shown beside it.
"""

from __future__ import annotations

import dataclasses
import threading
import time

import torch

from fuzzer.isolation.deaths import IsolatedJudge
from fuzzer.judge import contract
from fuzzer.limits import OracleBudget, PoolLimits
from fuzzer.triage import stage
from fuzzer.triage.culprit import Culprit
from fuzzer.triage.probe import BudgetSpent, Outcome


def walks(kind: str, backend: str) -> bool:
    """Whether a finding of ``kind`` found on ``backend`` is localised here."""
    return kind in contract.PROCESS_KINDS and backend in stage.STAGES


@dataclasses.dataclass
class DeathProbe:
    """The stage walk's probe for a crash or timeout entry (``stage.walk`` asks it what
    ``Probe`` is asked): each ``outcome`` runs the case in a fresh, checked process on
    one backend, within the budget."""

    entry: object
    device: str
    budget: OracleBudget
    limits: PoolLimits = PoolLimits()
    stop: threading.Event | None = None
    calls: int = 0
    seconds: float = 0.0
    exhausted: bool = False
    #: what the last process showed instead of the death looked for (another death, or
    #: why its run could not be judged); empty where it ran clean or died so
    seen: tuple[str, ...] = ()

    def outcome(self, backend: str) -> Outcome:
        if self.calls >= self.budget.oracle_calls or self.seconds >= self.budget.seconds:
            self.exhausted = True
            raise BudgetSpent
        start = time.monotonic()
        seconds = (self.limits.casualty_candidate_seconds if self.entry.kind == contract.TIMEOUT
                   else self.limits.program_seconds)
        try:
            with IsolatedJudge(self.device, backend, self.entry.fault, self.limits, seconds, self.stop,
                               checked=True) as judge:
                death = judge.run(self.entry.case)
        finally:
            self.calls += 1
            self.seconds += time.monotonic() - start
        self.seen = ()
        if death.confirms(self.entry.bug_class):
            return Outcome.STAYS
        if death.judged:
            return Outcome.GONE
        if death.kind is not None:  # another death; or this one, before eager was done (invalid)
            self.seen = (contract.bug_class(death.kind, [death.divergence()]).text if death.after_eager
                         else contract.INVALID,)
        else:  # it ran, and its run could not be judged
            self.seen = (death.status or contract.INVALID,)
        return Outcome.CHANGED


def localise(entry, device: str, budget: OracleBudget, limits: PoolLimits = PoolLimits(),
             stop: threading.Event | None = None) -> Culprit:
    """The culprit of a crash or timeout ``entry`` (``fuzzer.corpus.entry.Entry``): the
    first stage, up to the one it was found on, whose fresh process dies so; within
    ``budget`` (a walk cut short keeps what it found and says so).  Raises ``Aborted``
    when ``stop`` is set."""
    probe = DeathProbe(entry, device, budget, limits, stop)
    otherwise: dict[str, tuple[str, ...]] = {}
    found = None
    try:
        found = stage.walk(probe, stage.stages_for(entry.kind, entry.backend), otherwise)
    except BudgetSpent:
        pass
    return Culprit(stage=found, kind=entry.kind, oracle_calls=probe.calls, seconds=probe.seconds,
                   budget_exhausted=probe.exhausted, torch_version=torch.__version__,
                   otherwise=otherwise if found is not None else {})
