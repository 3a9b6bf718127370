"""Test-only fault: dcefuzz's own judge raises.

It is not a compiler regression: it breaks dcefuzz itself, to prove that an exception
of dcefuzz's own code is an internal error (``fuzzer.internal``), counted and shown,
and never a finding.  The contract's ``judge_runs`` raises on every program, as a
bug in the contract would (the float64 reference of a program with a size from data
once had another shape than eager's, and the numeric rule raised on it).
"""

from __future__ import annotations

from fuzzer.faults._fault import Fault

JUDGE_RUNS = "fuzzer.judge.contract:judge_runs"
MESSAGE = "dcefuzz test fault: the judge itself failed"


def _build(current):
    def judge_runs(*args, **kwargs):
        raise RuntimeError(MESSAGE)

    return {JUDGE_RUNS: judge_runs}


FAULTS = (
    Fault(name="test-internal-error", bug_class="internal", expected_kind="internal-error", dynamic_only=False,
          description="test only: dcefuzz's own judge raises on every program (an internal error, never a finding)",
          targets=(JUDGE_RUNS,), build=_build),
)
