"""A user op's signature (``fuzzer.user.gufunc``): core dims parsed, checked against the op,
bound to operands a prefix at a time, and the results' dims read off them."""

import pytest

from fuzzer.user import gufunc
from fuzzer.user.gufunc import Mismatch, SignatureError

MATMUL = gufunc.parse("(m,n),(n,p)->(m,p)", 2, 1)


def test_a_signature_binds_its_letters_and_gives_the_results_dims():
    assert MATMUL.bind([("s0", "s1"), ("s1", "s2")]) == {"m": "s0", "n": "s1", "p": "s2"}
    assert MATMUL.results([("s0", "s1"), ("s1", "s2")], 1) == [("s0", "s2")]
    assert MATMUL.bind([("s0", "s1")]) == {"m": "s0", "n": "s1"}  # a prefix is checked alone
    assert MATMUL.letters == ["m", "n", "p"]
    assert MATMUL.shapes(lambda letter: {"m": 2, "n": 3, "p": 4}[letter]) == [(2, 3), (3, 4)]


@pytest.mark.parametrize("operands, words", [
    ([("s0",), ("s1", "s2")], "rank"),
    ([("s0", "s1"), ("s2", "s3")], "'n' is s1 and s2"),
])
def test_operands_that_do_not_fit_are_named(operands, words):
    with pytest.raises(Mismatch, match=words):
        MATMUL.bind(operands)


def test_a_fixed_size_and_a_same_shape_op():
    packed = gufunc.parse("(n,4)->(n)", 1, 1)
    assert packed.bind([("s0", "4")]) == {"n": "s0"}
    with pytest.raises(Mismatch):
        packed.bind([("s0", "s1")])
    same = gufunc.parse(None, 2, 1)
    assert same.same_shape and same.results([("s0",), ("s0",)], 2) == [("s0",), ("s0",)]
    assert same.shapes(lambda letter: 1) is None
    with pytest.raises(Mismatch, match="differ"):
        same.bind([("s0",), ("s1",)])


@pytest.mark.parametrize("text, words", [
    ("(m,n)", "reads like"),
    ("(m,n)->(m)", "takes 2 tensors"),
    ("(m,n),(n,p)->(m,q)", "not dims of any input"),
    ("(m,n),(n,p!)->(m)", "dims are names or digits"),
    ("m,n,(n,p)->(m)", "expected tuples"),
])
def test_a_signature_that_does_not_parse_or_fit_the_op_is_refused(text, words):
    with pytest.raises(SignatureError, match=words):
        gufunc.parse(text, 2, 1)
