"""Reads through ``view(dtype)`` across later writes (feature ``dtype-reads``,
``fuzzer.program.dtype_reads``).

What the reads compute in eager torch for every dtype a program may have, the overlap
rule over the slice writes (both sides), the contract judging a read moved below the
write that follows it (stand-ins, as in ``test_contract``), generation, the follow-up
write, shrinking.
"""

import pytest
import torch
from helpers import case, prog
from test_contract import verdict

from fuzzer.judge import contract
from fuzzer.program import dtype_reads, features, forms
from fuzzer.program.generate import generate
from fuzzer.program.ir import InvalidProgram, check
from fuzzer.reduce.passes.rewrite import statement_edits

X = {"x0": ("s0", "s1"), "x1": ("s0", "s1")}


def _eval(form: str, x: torch.Tensor, y=None, attrs=None):
    f = forms.form(form)
    text = f.render(["x", "y"][:f.arity], attrs or {}, [tuple(x.shape)] * f.arity)
    scope = {"torch": torch, "x": x, "y": y}
    if f.returns:
        return eval(text, scope)
    exec(text, scope)
    return x


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32, torch.float64])
def test_the_reads_are_the_values_read_through_an_integer_view(dtype):
    """The same text for every dtype a program (or its float64 reference) has: the sign
    bit cleared is ``abs``, the bits copied are the values; neither is a view."""
    x = torch.randn(4, 3).to(dtype).t()  # any strides: an integer of the same size
    cleared, copied = _eval("sign_clear", x), _eval("bits_copy", x)
    assert torch.equal(cleared, x.abs()) and torch.equal(copied, x)
    assert cleared.untyped_storage().data_ptr() != x.untyped_storage().data_ptr() != copied.untyped_storage().data_ptr()


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32])
def test_trim_clears_two_mantissa_bits_of_each_word_and_the_reference_clears_the_same(dtype):
    """The float32's bits with the two lowest of each 16-bit word cleared: sign and
    exponent kept, a fresh tensor; the float64 reference of the same exact input (the
    program's values raised to float64) gives the same numbers."""
    x = torch.randn(4, 6).to(dtype)
    trimmed = _eval("trim_bits", x)
    words = x.float().view(torch.int16).clone()
    expected = (words & ~3).view(torch.float32).to(dtype)
    assert torch.equal(trimmed, expected) and not torch.equal(trimmed.float(), x.float())
    assert torch.equal(trimmed.float().sign(), x.float().sign()) and torch.isfinite(trimmed).all()
    assert trimmed.untyped_storage().data_ptr() != x.untyped_storage().data_ptr()
    assert torch.equal(_eval("trim_bits", x.double()).to(dtype), trimmed)


def test_trim_reads_exact_values_only():
    """A computed float one ulp off eager's may truncate across a cleared bit."""
    check(prog(X, [("trim_bits", ["x0"], "v0", {})], outputs=["v0"]))
    with pytest.raises(InvalidProgram, match="exact"):
        check(prog(X, [("scale", ["x0"], "v0", {"c": 1.5}), ("trim_bits", ["v0"], "v1", {})], outputs=["v1"]))


def test_the_slice_writes_write_halves_of_the_dim():
    x = _eval("slice_set", torch.zeros(4, 3), torch.ones(4, 3), {"dim": 0})
    assert x[:2].eq(1).all() and x[2:].eq(0).all()
    x = _eval("slice_fill", torch.zeros(3, 5), attrs={"dim": 1, "c": 2.0})
    assert x[:, :2].eq(0).all() and x[:, 2:].eq(2).all()


# ------------------------------------------------------------- the overlap rule

def test_a_slice_write_of_a_value_overlapping_what_it_writes_is_refused():
    check(prog(X, [("slice_set", ["x0", "x1"], None, {"dim": 0})]))
    with pytest.raises(InvalidProgram, match="shares storage"):
        check(prog(X, [("transpose", ["x0"], "v0", {}), ("transpose", ["v0"], "v1", {}),
                       ("slice_set", ["x0", "v1"], None, {"dim": 1})]))


def test_a_slice_write_beside_a_disjoint_part_of_its_storage_is_legal():
    check(prog(X, [("head", ["x0"], "v0", {"dim": 0}), ("tail", ["x0"], "v1", {"dim": 0}),
                   ("slice_set", ["v0", "v1"], None, {"dim": 1})]))


# ------------------------------------------------------------- the contract

#: x0's bits read (its sign cleared), then x0 written through a slice
READ_THEN_WRITTEN = case(prog(X, [("sign_clear", ["x0"], "v0", {}), ("slice_set", ["x0", "x1"], None, {"dim": 0})],
                              outputs=["v0"]))


def _faithful(x0, x1):
    v0 = (x0.view(torch.int32) & 0x7FFFFFFF).view(x0.dtype)
    x0[:x0.size(0) // 2] = x1[:x0.size(0) // 2]
    return (v0,)


def _read_after_the_write(x0, x1):
    x0[:x0.size(0) // 2] = x1[:x0.size(0) // 2]
    return ((x0.view(torch.int32) & 0x7FFFFFFF).view(x0.dtype),)  # the bits read late


def test_a_read_through_an_integer_view_moved_below_a_later_write_is_a_wrong_output():
    assert verdict(_faithful, READ_THEN_WRITTEN).kinds() == []
    assert verdict(_read_after_the_write, READ_THEN_WRITTEN).kinds() == [contract.WRONG_OUTPUT]


#: x0's bits trimmed through 16-bit words, then the half of x0 along its last dim written
TRIMMED_THEN_FILLED = case(prog(X, [("trim_bits", ["x0"], "v0", {}),
                                    ("slice_fill", ["x0"], None, {"dim": 1, "c": 2.0})], outputs=["v0"]))


def _trim(x):
    return x.float().view(torch.int16).bitwise_and(-2).bitwise_and_(-3).view(torch.float32).to(x.dtype)


def _trimmed_faithful(x0, x1):
    v0 = _trim(x0)
    x0[:, x0.size(1) // 2:] = 2.0
    return (v0,)


def _trimmed_after_the_fill(x0, x1):
    x0[:, x0.size(1) // 2:] = 2.0
    return (_trim(x0),)  # the words read late, as Inductor did (pytorch/pytorch#198101)


def test_a_trim_through_16_bit_words_moved_below_a_later_write_is_a_wrong_output():
    assert verdict(_trimmed_faithful, TRIMMED_THEN_FILLED).kinds() == []
    assert verdict(_trimmed_after_the_fill, TRIMMED_THEN_FILLED).kinds() == [contract.WRONG_OUTPUT]


# ------------------------------------------------------------- generation, shrinking

def test_generated_programs_with_the_feature_are_legal_use_every_form_and_write_what_they_read():
    table = features.parse("dtype-reads=1.0")
    used, followed = set(), 0
    for seed in range(60):
        body = generate(seed, features=table).program.body
        used |= {s.form for s in body}
        followed += any(forms.form(a.form).then == dtype_reads.AFTER_READ and b.form in dtype_reads.AFTER_READ
                        and b.args[0] == a.args[0] for a, b in zip(body, body[1:]))
    assert {n for n, f in forms.FORMS.items() if f.feature == features.DTYPE_READS} <= used
    assert followed >= 10


@pytest.mark.parametrize("form,plain", [("sign_clear", "bits_copy"), ("bits_copy", "clone"), ("trim_bits", "bits_copy"),
                                        ("slice_set", "copy_"),
                                        ("slice_fill", "mul_")])
def test_a_dtype_read_or_slice_write_shrinks_toward_the_plain_form(form, plain):
    f = forms.form(form)
    attrs = {"dim": 0, "c": 2.0} if form == "slice_fill" else {"dim": 0} if f.draw is not None else {}
    c = case(prog(X, [(form, ["x0", "x1"][:f.arity], "v0" if f.returns else None, attrs)]))
    assert plain in {s.form for e in statement_edits(c) for s in e.program.body}
