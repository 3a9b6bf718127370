"""One trial: execute a case, judge it, and confirm what diverged before believing it.

Confirmation is what keeps the corpus honest.  A divergence counts as a finding
only if (a) eager agreed with itself (checked by the oracle), and (b) the same kind
of divergence recurs after a fresh compile (``torch._dynamo.reset()``); otherwise
it is counted as flaky and never saved.

The confirmation replays the case only up to the binding on which each reported
kind first appeared (``confirmation_case``).  Bindings run in order through one
compiled function, so what happened on binding ``j`` depends only on bindings
``0..j``: the shorter replay repeats the same experiment, without the later
bindings' runs and the recompiles they trigger (about two compiles a program).
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field

from fuzzer import oracle, signature
from fuzzer.execute import dynamo_frames, execute, fresh_compile_state
from fuzzer.oracle import Divergence, Verdict
from fuzzer.program import Case

FINDING = "finding"
CLEAN = "clean"
FLAKY = "flaky"


@dataclass
class Finding:
    """A confirmed divergence of one kind on one case."""

    kind: str
    signature: str
    case: Case
    divergences: list[Divergence]
    device: str
    backend: str

    @property
    def is_performance(self) -> bool:
        return self.kind in oracle.PERFORMANCE_KINDS


@dataclass
class TrialResult:
    status: str  # clean | finding | flaky | invalid | nondeterministic
    verdict: Verdict
    findings: list[Finding] = field(default_factory=list)
    flaky_kinds: list[str] = field(default_factory=list)
    seconds: float = 0.0
    #: dynamo recompilations of the program over its bindings (first judgement only)
    recompiles: int = 0


def _kinds_to_report(verdict: Verdict) -> list[str]:
    """At most one correctness kind (the most severe) plus the performance kind."""
    kinds = []
    if verdict.correctness_kind:
        kinds.append(verdict.correctness_kind)
    kinds += [k for k in verdict.kinds() if k in oracle.PERFORMANCE_KINDS]
    return kinds


def confirmation_case(case: Case, verdict: Verdict, kinds: list[str]) -> Case:
    """``case`` cut after the last binding the confirmation needs.

    Each reported kind must recur; it first appeared on some binding, and that
    binding's outcome is fixed by the bindings before it, so the replay stops at
    the latest of those first appearances.
    """
    last = max(min(d.binding for d in verdict.of_kind(kind)) for kind in kinds)
    return dataclasses.replace(case, bindings=case.bindings[:last + 1])


def judge_fresh(case: Case, device: str, backend: str = "inductor") -> Verdict:
    """Execute and judge ``case`` starting from an empty dynamo cache."""
    fresh_compile_state()
    return oracle.judge(case, execute(case, device, backend=backend))


def run_trial(case: Case, device: str, backend: str = "inductor", confirm: bool = True) -> TrialResult:
    start = time.perf_counter()
    frames = dynamo_frames()
    verdict = judge_fresh(case, device, backend)
    recompiles = max(0, dynamo_frames() - frames - 1)
    if verdict.status != oracle.OK:
        return TrialResult(verdict.status, verdict, seconds=time.perf_counter() - start,
                           recompiles=recompiles)
    kinds = _kinds_to_report(verdict)
    if not kinds:
        return TrialResult(CLEAN, verdict, seconds=time.perf_counter() - start, recompiles=recompiles)
    again = judge_fresh(confirmation_case(case, verdict, kinds), device, backend) if confirm else verdict
    findings, flaky = [], []
    for kind in kinds:
        if again.status == oracle.OK and again.of_kind(kind):
            divs = verdict.of_kind(kind)
            findings.append(Finding(kind, signature.of(kind, case, divs), case, divs, device, backend))
        else:
            flaky.append(kind)
    status = FINDING if findings else FLAKY
    return TrialResult(status, verdict, findings, flaky, time.perf_counter() - start, recompiles)
