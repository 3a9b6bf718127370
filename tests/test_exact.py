"""Exactness (``fuzzer.program.exact``): which values the compiler computes, so which
fixed-dtype tensors may be made from them; hand-built statements, no compile."""

import dataclasses

import pytest

from fuzzer.program import forms
from fuzzer.program.exact import ExactRules
from fuzzer.program.ir import Stmt

ROOT = {"x0": "x0", "v0": "v0", "v1": "v1"}


def _admit(rules, form, args, out=None, attrs=None, root=ROOT, fixed=frozenset()):
    rules.admit(Stmt(form, tuple(args), out, attrs or {}), forms.form(form), root, set(fixed))


def test_what_an_aten_form_computes_is_inexact_and_a_custom_ops_result_is_exact():
    rules = ExactRules()
    _admit(rules, "add", ["x0", "x0"], "v0")
    _admit(rules, "p_sin", ["x0"], "v1", {"site": 0})
    assert not rules.is_exact("v0", ROOT)
    assert rules.is_exact("v1", ROOT)


def test_an_integer_made_from_a_computed_float_is_refused_and_from_an_input_admitted():
    rules = ExactRules()
    _admit(rules, "add", ["x0", "x0"], "v0")
    with pytest.raises(forms.Illegal, match="compiler computes"):
        _admit(rules, "argmax", ["v0"], "v1", {"dim": 0})
    _admit(ExactRules(), "argmax", ["x0"], "v1", {"dim": 0})


def test_a_fixed_dtype_result_the_compiler_computes_is_refused_even_from_exact_values():
    not_opaque = dataclasses.replace(forms.form("argmax"), opaque=False)
    with pytest.raises(forms.Illegal, match="not opaque"):
        ExactRules().check(Stmt("argmax", ("x0",), "v1", {"dim": 0}), not_opaque, ROOT, set())


def test_a_computed_write_leaves_its_storage_inexact_and_a_view_of_it_too():
    rules = ExactRules()
    _admit(rules, "mul_", ["x0"], None, {"c": 2.0})
    root = {**ROOT, "v0": "x0"}
    _admit(rules, "head", ["x0"], "v0", {"dim": 0}, root=root)
    assert not rules.is_exact("x0", root) and not rules.is_exact("v0", root)


def test_a_view_of_an_exact_value_is_exact():
    rules = ExactRules()
    root = {**ROOT, "v0": "x0"}
    _admit(rules, "head", ["x0"], "v0", {"dim": 0}, root=root)
    assert rules.is_exact("v0", root)
