"""The test-only faults that kill or stall a process (``fuzzer.faults.process``): what
each does to a graph, and when it acts; the action stood in, no process killed."""

import pytest
import torch

from fuzzer.faults import process
from fuzzer.program import custom_ops


def _graph(*ops):
    custom_ops.install()
    g = torch.fx.Graph()
    x = g.placeholder("x")
    for k, op in enumerate(ops):
        g.call_function(getattr(torch.ops.dcefuzz, op).default, (x, k))
    g.output((x,))
    return torch.fx.GraphModule(torch.nn.Module(), g)


def _ops(gm):
    return [str(n.target) for n in gm.graph.nodes if n.op == "call_function"]


@pytest.fixture
def acted(monkeypatch):
    """Each planted action (segfault, hang, ...) recorded instead of done."""
    done = []
    monkeypatch.setattr(process, "_segfault", lambda: done.append("segfault"))
    return done


def _compile_fx(fault):
    return fault.build({process.COMPILE_FX: lambda gm, *a, **k: _ops(gm)}.__getitem__)[process.COMPILE_FX]


def test_a_fault_acts_on_a_graph_that_calls_e_log_only():
    done = []
    fault = process._fault("x", "acts", lambda: done.append("acted"), "crash")
    compile_fx = _compile_fx(fault)
    assert compile_fx(_graph("p_sin")) == ["dcefuzz.p_sin.default"] and done == []
    compile_fx(_graph("p_sin", "e_log"))
    assert done == ["acted"]


def test_the_candidate_fault_drops_logs_beside_other_calls_and_dies_on_logs_alone(acted):
    fault = next(f for f in process.FAULTS if f.name == "test-candidate-segfault")
    compile_fx = _compile_fx(fault)
    assert compile_fx(_graph("p_sin", "e_log")) == ["dcefuzz.p_sin.default"] and acted == []
    compile_fx(_graph("e_log"))
    assert acted == ["segfault"]


def test_the_triage_fault_dies_only_with_the_peak_memory_reordering_off(acted):
    from torch._inductor import config

    fault = next(f for f in process.FAULTS if f.name == "test-triage-segfault")
    compile_fx = _compile_fx(fault)
    with config.patch(reorder_for_peak_memory=True):
        assert compile_fx(_graph("p_sin", "e_log")) == ["dcefuzz.p_sin.default"] and acted == []
    with config.patch(reorder_for_peak_memory=False):
        compile_fx(_graph("p_sin"))
    assert acted == ["segfault"]


def test_every_process_fault_is_test_only_of_a_death():
    assert {f.expected_kind for f in process.FAULTS} == {"crash", "timeout"}
    assert all(f.bug_class == "process" and f.unavailable() is None for f in process.FAULTS)
