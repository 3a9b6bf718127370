"""Symbolic sizes (``fuzzer.program.sizes``): dim expressions built, renamed, evaluated
and their least values, on hand-written expressions."""

import pytest

from fuzzer.program import sizes


def test_symbols_and_sizes_from_data_are_told_apart():
    assert sizes.is_symbol("s0") and sizes.is_symbol("s12")
    assert not sizes.is_symbol("s0 // 2") and not sizes.is_symbol("u0") and not sizes.is_symbol("3")
    assert sizes.is_unbacked("u3") and not sizes.is_unbacked("s3")
    assert sizes.has_unbacked("(u1 + 1) // 2") and not sizes.has_unbacked("s1 - 1")


@pytest.mark.parametrize("build, expr, binding, value", [
    (sizes.half, "s0", {"s0": 7}, 3),
    (sizes.half, "s0 - 1", {"s0": 7}, 3),
    (sizes.ceil_half, "s0", {"s0": 7}, 4),
    (sizes.minus_one, "s1 // 2", {"s1": 9}, 3),
])
def test_derived_dims_evaluate_to_what_the_slice_gives(build, expr, binding, value):
    assert sizes.evaluate(build(expr), binding) == value


def test_a_literal_dim_stays_a_literal():
    assert sizes.half("7") == "3"
    assert sizes.ceil_half("7") == "4"
    assert sizes.minus_one("7") == "6"


def test_a_compound_operand_is_parenthesised_before_it_is_divided():
    assert sizes.half("s0 - 1") == "(s0 - 1) // 2"
    assert sizes.half("s0") == "s0 // 2"


def test_rename_maps_only_the_named_symbols():
    assert sizes.rename("s0 + s1 // s10", {"s1": "s0", "s10": "s2"}) == "s0 + s0 // s2"
    assert sizes.symbols_in("(s0 + 1) // s3") == {"s0", "s3"}


def test_evaluate_refuses_text_that_is_no_dim_and_unbound_symbols():
    with pytest.raises(ValueError, match="not a dim expression"):
        sizes.evaluate("__import__('os')", {})
    with pytest.raises(ValueError, match="unbound"):
        sizes.evaluate("s0 + s1", {"s0": 1})
    assert sizes.concrete(("s0", "s0 // 2", "1"), {"s0": 5}) == (5, 2, 1)


def test_the_least_value_is_taken_at_the_minimums_and_a_size_from_data_may_be_zero():
    assert sizes.smallest("s0 - 1", {"s0": 2}) == 1
    assert sizes.smallest("s0 // 2", {}) == 0  # a symbol without a minimum may be 0
    assert sizes.smallest("u0 + s1", {"s1": 3}) == 3
