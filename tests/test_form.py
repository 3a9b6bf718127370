"""A user's op as a statement form (``fuzzer.user.form``): its typing by the signature and
the scalars it takes, its call's text, and the attributes it draws; the example library,
no compile."""

import random
from pathlib import Path

import pytest

from fuzzer.program.form_record import NO_BACKWARD, Illegal
from fuzzer.user import form, library
from fuzzer.user.declared import Argument, UserOp

OPSLIB = str(Path(__file__).resolve().parent.parent / "examples" / "user_ops" / "opslib.py")


def _form(name):
    library.load(OPSLIB)
    return form.form_of(library.op(name))


def test_a_signature_types_the_call_and_a_mismatch_is_illegal():
    matmul = _form("opslib::matmul")
    assert matmul.infer([("s0", "s1"), ("s1", "s2")], {}, {}) == ("s0", "s2")
    with pytest.raises(Illegal, match="opslib::matmul"):
        matmul.infer([("s0", "s1"), ("s2", "s1")], {}, {})
    assert matmul.fits([("s0", "s1")]) and not matmul.fits([("s0",)])


def test_a_scalar_takes_only_its_values_and_is_written_into_the_call():
    tanh = _form("opslib::scaled_tanh")
    attrs = tanh.draw(random.Random(0), ("s0",), "u0")
    assert attrs[form.SCALARS]["alpha"] in (0.5, 2.0)
    assert tanh.infer([("s0",)], attrs, {}) == ("s0",)
    with pytest.raises(Illegal, match="alpha=3.0"):
        tanh.infer([("s0",)], {form.SCALARS: {"alpha": 3.0}}, {})
    assert tanh.render(["x0"], {form.SCALARS: {"alpha": 2.0}}, [("s0",)]) == "torch.ops.opslib.scaled_tanh(x0, 2.0)"


def test_the_form_says_what_the_op_declares_and_no_site():
    acc, log = _form("opslib::accumulate"), _form("opslib::log_sum")
    assert acc.mutates == (0,) and not acc.returns and not acc.site_traced and acc.custom == "opslib::accumulate"
    assert log.is_effectful and log.grad == NO_BACKWARD


def test_an_op_whose_result_is_a_written_argument_lists_that_argument_first():
    tensors = (Argument("lo", "Tensor", written=True), Argument("hi", "Tensor", written=True))
    op = UserOp("ns::split", "mutating", tensors, 2, aliases=(1, 0))
    assert form.operand_order(op, 0) == (1, 0) and form.operand_order(op, 1) == (0, 1)
    assert form.form_name(op, 0) == "ns::split" and form.form_name(op, 1) == "ns::split[1]"
