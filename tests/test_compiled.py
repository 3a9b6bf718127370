"""What the compiled program does with a user's op (``fuzzer.user.compiled``): called,
traced through, decomposed or lowered, read off this torch's tables; real ops."""

import torch

from fuzzer.program import custom_ops
from fuzzer.user import compiled
from fuzzer.user.compiled import Treatment


def test_a_custom_op_is_called_and_only_a_call_is_opaque():
    custom_ops.install()
    assert compiled.treatment("dcefuzz::p_sin") is Treatment.CALLED
    assert compiled.treatment(torch.ops.dcefuzz.p_sin.default) is Treatment.CALLED
    assert Treatment.CALLED.opaque and not any(t.opaque for t in Treatment if t is not Treatment.CALLED)


def test_torchs_own_ops_are_lowered_decomposed_or_traced():
    assert compiled.treatment("aten::sin") is Treatment.LOWERED
    assert compiled.treatment("aten::gelu") is Treatment.DECOMPOSED
    assert compiled.is_composite("aten::linear") and compiled.treatment("aten::linear") is Treatment.TRACED


def test_an_overload_is_found_by_name():
    assert compiled.overload_of("aten::add.Tensor") is torch.ops.aten.add.Tensor
    assert compiled.overload_of("aten::sin") is torch.ops.aten.sin.default
