"""Real compiles on CUDA (skipped where no GPU is present).

The same contract as on CPU: a faithful compile of a program with effects, input
writes through views and a dead pure call is clean of correctness kinds; planted
faults are caught on the device too.
"""

import pytest
import torch
from helpers import case, prog

from fuzzer import faults
from fuzzer.judge import contract
from fuzzer.judge.trial import judge_fresh

pytestmark = [pytest.mark.cuda, pytest.mark.compile,
              pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")]

PROGRAM = prog({"x0": ("s0", "s1"), "x1": ("s0", "s1")}, [
    ("p_sin", ["x0"], "v0", {"site": 0}),                 # dead pure call
    ("head", ["x0"], "v1", {"dim": 0}),
    ("m_scale", ["v1"], None, {"site": 1}),               # write through a view of an input
    ("e_log", ["x0"], None, {"site": 2}),
    ("m_addto", ["x1", "x0"], None, {"site": 3}),
    ("e_tap", ["x1"], "v2", {"site": 4}),
], outputs=["v2"])
CASE = case(PROGRAM, [{"s0": 6, "s1": 4}, {"s0": 7, "s1": 3}, {"s0": 2, "s1": 5}])


def test_faithful_compile_on_cuda_is_correct():
    v = judge_fresh(CASE, "cuda")
    assert v.status == contract.OK, v.reason
    wrong = [d.line() for d in v.divergences if d.kind in contract.CORRECTNESS_KINDS]
    assert not wrong, wrong


@pytest.mark.parametrize("name", ["effect-dce", "mutation-lost"])
def test_planted_fault_is_caught_on_cuda(name):
    fault = faults.get(name)
    with faults.planted(name):
        v = judge_fresh(CASE, "cuda")
    assert v.of_kind(fault.expected_kind), [d.line() for d in v.divergences]
