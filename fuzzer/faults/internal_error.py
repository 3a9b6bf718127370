"""Test-only fault: dcefuzz's own judge raises.

It is not a compiler regression: it breaks dcefuzz itself, to prove that an exception
of dcefuzz's own code is an internal error (``fuzzer.internal``), counted and shown,
and never a finding.  The contract's ``judge_runs`` raises on every program, as a
bug in the contract would (the float64 reference of a program with a size from data
once had another shape than eager's, and the numeric rule raised on it).

``test-device-lost`` raises what torch raises once a CUDA kernel has faulted (an
illegal memory access, reported by whichever CUDA call comes next): on a GPU every
later program of the process would raise it too, so the pool replaces the worker.
"""

from __future__ import annotations

from fuzzer.faults._fault import Fault

JUDGE_RUNS = "fuzzer.judge.contract:judge_runs"
MESSAGE = "dcefuzz test fault: the judge itself failed"
#: torch's words for a CUDA kernel that faulted (``torch.AcceleratorError`` since 2.8)
DEVICE_LOST_MESSAGE = "CUDA error: an illegal memory access was encountered"


def _build(current):
    def judge_runs(*args, **kwargs):
        raise RuntimeError(MESSAGE)

    return {JUDGE_RUNS: judge_runs}


def _build_device_lost(current):
    def judge_runs(*args, **kwargs):
        raise RuntimeError(DEVICE_LOST_MESSAGE)

    return {JUDGE_RUNS: judge_runs}


FAULTS = (
    Fault(name="test-internal-error", bug_class="internal", expected_kind="internal-error", dynamic_only=False,
          description="test only: dcefuzz's own judge raises on every program (an internal error, never a finding)",
          targets=(JUDGE_RUNS,), build=_build),
    Fault(name="test-device-lost", bug_class="internal", expected_kind="internal-error", dynamic_only=False,
          description="test only: the judge raises a CUDA error that leaves the device unusable (an internal "
                      "error; the worker is replaced)",
          targets=(JUDGE_RUNS,), build=_build_device_lost),
)
