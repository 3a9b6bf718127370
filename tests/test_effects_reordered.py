"""effects-reordered (``fuzzer.faults.effects_reordered``): with the fault, the scheduler's
sort walks from the newest node where an effectful custom kernel is among them, and as
torch's otherwise; stand-in scheduler nodes, no compile."""

from types import SimpleNamespace

import torch

from fuzzer.faults import effects_reordered
from fuzzer.program import custom_ops


def _node(name, op):
    return SimpleNamespace(get_name=lambda: name, node=SimpleNamespace(op_overload=op, inputs=[torch.ones(1)]))


def test_the_creation_index_is_read_off_the_nodes_name():
    assert effects_reordered._creation_index(_node("op12", None)) == 12
    assert effects_reordered._creation_index(_node("buf3", None)) == 0


def test_nodes_with_an_effectful_custom_kernel_are_sorted_newest_first():
    custom_ops.install()
    plain, dynamic = effects_reordered.FAULTS
    sort = plain.build({effects_reordered.TOPO_SORT: lambda self, nodes: [n.get_name() for n in nodes]}.__getitem__)
    sort = sort[effects_reordered.TOPO_SORT]
    log, add = torch.ops.dcefuzz.e_log.default, torch.ops.aten.add.Tensor
    nodes = [_node("op1", log), _node("op3", add), _node("op2", log)]
    assert sort(None, nodes) == ["op3", "op2", "op1"]
    plain_nodes = [_node("op1", add), _node("op3", add)]
    assert sort(None, plain_nodes) == ["op1", "op3"]
    # the dynamic variant: not for kernels whose inputs have no symbolic size
    sort = dynamic.build({effects_reordered.TOPO_SORT: lambda self, ns: [n.get_name() for n in ns]}.__getitem__)
    assert sort[effects_reordered.TOPO_SORT](None, nodes) == ["op1", "op3", "op2"]
