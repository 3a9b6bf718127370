"""mutation-lost-export (``fuzzer.faults.export_mutation_lost``): with the fault, the
exported module's graph loses each mutating custom call no node reads, and keeps the
rest; a hand-built graph, no export."""

import torch

from fuzzer.faults import export_mutation_lost
from fuzzer.program import custom_ops


def _module():
    custom_ops.install()
    g = torch.fx.Graph()
    x = g.placeholder("x")
    g.call_function(torch.ops.dcefuzz.m_scale.default, (x, 0))
    kept = g.call_function(torch.ops.dcefuzz.p_sin.default, (x, 1))
    g.call_function(torch.ops.dcefuzz.p_sin.default, (x, 2))
    g.output((kept,))
    return torch.fx.GraphModule(torch.nn.Module(), g)


def test_an_unread_mutating_call_is_dropped_and_every_other_call_kept():
    (fault,) = export_mutation_lost.FAULTS
    module = fault.build({export_mutation_lost.MODULE: lambda self: _module()}.__getitem__)[
        export_mutation_lost.MODULE]
    gm = module(None)
    calls = [(str(n.target), n.args[1]) for n in gm.graph.nodes if n.op == "call_function"]
    assert calls == [("dcefuzz.p_sin.default", 1), ("dcefuzz.p_sin.default", 2)]
    x = torch.ones(3)
    gm(x)
    assert torch.equal(x, torch.ones(3))  # the write is lost
    assert fault.pipelines == ("export",) and fault.unavailable() is None
