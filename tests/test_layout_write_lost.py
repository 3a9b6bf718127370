"""The layout-write-lost fault (``fuzzer.faults.layout_write_lost``): which ops it
misbehaves for, and what its patched ``tag_to_layout_constraint`` hands back.  Planted
on a real compile: ``tests/test_faults.py`` (its program on the ``layout-tags`` path)."""

import torch

from fuzzer import faults
from fuzzer.faults import layout_write_lost
from fuzzer.program import custom_ops

custom_ops.install()
ops = torch.ops.dcefuzz


def test_only_a_custom_op_with_a_layout_tag_of_its_own_loses_its_write():
    assert layout_write_lost._tagged(ops.l_exact_.default)
    assert layout_write_lost._tagged(ops.l_order_.default)
    assert not layout_write_lost._tagged(ops.l_default.default)  # untagged: the release's default
    assert not layout_write_lost._tagged(ops.m_scale.default)
    assert not layout_write_lost._tagged(torch.ops.aten.sin.default)


def test_a_tag_that_constrains_gets_copies_and_flexible_layout_gets_nothing():
    from torch._inductor import lowering

    undo = faults.get("layout-write-lost").install()
    try:
        assert lowering.tag_to_layout_constraint(torch.Tag.flexible_layout) is None
        for tag in (torch.Tag.needs_exact_strides, torch.Tag.needs_fixed_stride_order,
                    torch.Tag.needs_contiguous_strides):
            constrain = lowering.tag_to_layout_constraint(tag)
            assert constrain.__name__ == "copy_then_constrain", tag
    finally:
        undo()
    assert lowering.tag_to_layout_constraint(torch.Tag.needs_exact_strides) is lowering.constrain_to_fake_tensors
