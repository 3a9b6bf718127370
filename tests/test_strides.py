"""A fake impl's strides against its kernel's (``fuzzer.user.strides``): on inputs
transposed in memory, a result laid out otherwise by the fake is named; an op of our
own that lies, and the example library's honest ops."""

from pathlib import Path

import torch

from fuzzer.program.custom_ops import PURE
from fuzzer.user import library, strides
from fuzzer.user.declared import Argument, UserOp

OPSLIB = str(Path(__file__).resolve().parent.parent / "examples" / "user_ops" / "opslib.py")


@torch.library.custom_op("dcefuzz_modtest::keep_layout", mutates_args=())
def keep_layout(x: torch.Tensor) -> torch.Tensor:
    return x.clone()  # keeps a transposed input's strides


@keep_layout.register_fake
def _(x):
    return torch.empty(x.shape)  # contiguous: a lie for a transposed input


def test_a_fake_that_lays_its_result_out_otherwise_is_named():
    op = UserOp("dcefuzz_modtest::keep_layout", PURE, (Argument("x", "Tensor"),), 1)
    said = strides.fake_strides_differ(op, "cpu")
    assert said is not None and "its fake impl gives result 0 strides" in said


def test_honest_fakes_and_ops_of_no_matrix_pass():
    library.load(OPSLIB)
    for name in ("opslib::matmul", "opslib::scaled_tanh", "opslib::accumulate"):
        assert strides.fake_strides_differ(library.op(name), "cpu") is None, name
    assert strides._layout(torch.ones(1, 4)) == (1,)
