"""The graphs Dynamo hands its backend (``fuzzer.judge.graphs``): what a graph calls,
and the call sites a runtime assert keeps; FX graphs built by hand, no compile."""

import torch

from fuzzer.judge import graphs
from fuzzer.program import custom_ops


def _module():
    """x -> p_sin(x, 3) -> its numel asserted; p_sin(x, 5) read by nothing."""
    custom_ops.install()
    g = torch.fx.Graph()
    x = g.placeholder("x")
    kept = g.call_function(torch.ops.dcefuzz.p_sin.default, (x, 3))
    g.call_function(torch.ops.dcefuzz.p_sin.default, (x, 5))
    size = g.call_function(torch.ops.aten.sym_numel.default, (kept,))
    g.call_function(torch.ops.aten._assert_scalar.default, (size, "u0 >= 0"))
    g.output((kept,))
    return torch.fx.GraphModule(torch.nn.Module(), g)


def test_only_the_sites_a_runtime_assert_reads_are_asserted():
    assert graphs._asserted_sites(_module().graph) == (3,)


def test_a_graph_records_what_it_calls_and_no_higher_order_op():
    graph = graphs._graph_of(_module())
    assert graph.ops == ("p_sin.default", "p_sin.default", "sym_numel.default", "_assert_scalar.default")
    assert graph.hops == () and graph.asserted == (3,)


def test_the_log_keeps_each_graph_handed_to_the_backend_and_installs_once(monkeypatch):
    from torch._dynamo.output_graph import OutputGraph

    handed = []
    monkeypatch.setattr(OutputGraph, "call_user_compiler", lambda self, gm, inputs: handed.append(gm) or "fn")
    log = graphs.GraphLog()
    log.install()
    log.install()
    gm = _module()
    assert OutputGraph.call_user_compiler(None, gm, []) == "fn"
    assert handed == [gm] and len(log.graphs) == 1 and log.observed
