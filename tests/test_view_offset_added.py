"""The view-offset-added fault (``fuzzer.faults.view_offset_added``): which views it moves
an ``as_strided`` of, and that it moves nothing else.  Planted on a real compile:
``tests/test_faults.py`` (its program on the ``base-offsets`` path)."""

import pytest
import torch

from fuzzer import faults
from fuzzer.faults import view_offset_added


def _views():
    from torch._inductor import ir
    storage = ir.StorageBox(ir.InputBuffer(name="x", layout=ir.FixedLayout(torch.device("cpu"), torch.float32,
                                                                             [6, 5], [5, 1])))
    whole = ir.TensorBox(storage)
    return whole, ir.TensorBox(ir.ReinterpretView(data=storage, layout=ir.FixedLayout(
        torch.device("cpu"), torch.float32, [5, 5], [5, 1], 5)))


def test_only_a_view_with_an_offset_of_its_own_is_moved():
    whole, narrowed = _views()
    assert view_offset_added.view_offset(narrowed) == 5
    assert view_offset_added.view_offset(whole) is None


def _narrowed_as_strided(x):
    return torch.as_strided(x.narrow(0, 1, 5), (3, 5), (5, 1), 0) * 2


def _plain_as_strided(x):
    return x.as_strided((3, 5), (5, 1), 5) * 2


@pytest.mark.compile
def test_an_as_strided_of_a_narrowed_view_reads_elsewhere_under_the_fault_and_one_of_the_input_does_not():
    x = torch.randn(6, 5)
    undo = faults.get("view-offset-added").install()
    try:
        torch._dynamo.reset()
        moved = torch.compile(_narrowed_as_strided, backend="inductor")(x)
        torch._dynamo.reset()
        kept = torch.compile(_plain_as_strided, backend="inductor")(x)
    finally:
        undo()
        torch._dynamo.reset()
    assert not torch.equal(moved, _narrowed_as_strided(x))
    assert torch.equal(kept, _plain_as_strided(x))
