"""What autograd allows a program that takes gradients (``fuzzer.program.grad``),
statement by statement, on hand-built statements."""

import pytest

from fuzzer.program import forms
from fuzzer.program.grad import GradRules
from fuzzer.program.ir import Stmt

INPUTS = {"x0"}


def _rules():
    rules = GradRules()
    rules.add_input("x0")
    return rules


def _admit(rules, form, args, out=None, attrs=None, root=None):
    root = root or {a: a for a in (*args, *([out] if out else []))}
    rules.admit(Stmt(form, tuple(args), out, attrs or {}), forms.form(form), root, INPUTS)


def test_a_result_computed_from_an_input_requires_grad_and_one_under_no_grad_does_not():
    rules = _rules()
    _admit(rules, "p_sin", ["x0"], "v0", {"site": 0})
    _admit(rules, "p_sin", ["x0"], "v1", {"site": 1, "no_grad": True})
    assert rules.requires["v0"] and not rules.requires["v1"]


def test_an_input_is_never_written():
    rules = _rules()
    with pytest.raises(forms.Illegal, match="forbids writing x0"):
        _admit(rules, "mul_", ["x0"], None, {"c": 2.0, "no_grad": True})


def test_a_write_outside_no_grad_may_not_read_a_value_that_requires_grad():
    rules = _rules()
    _admit(rules, "p_sin", ["x0"], "v0", {"site": 0, "no_grad": True})
    with pytest.raises(forms.Illegal, match="reads a value that requires grad"):
        _admit(rules, "add_", ["v0", "x0"])
    _admit(rules, "add_", ["v0", "x0"], attrs={"no_grad": True})


def test_a_value_read_by_what_requires_grad_is_not_written_after():
    rules = _rules()
    _admit(rules, "p_sin", ["x0"], "v0", {"site": 0, "no_grad": True})
    _admit(rules, "p_mix", ["x0", "v0"], "v1", {"site": 1})  # backward saved v0
    with pytest.raises(forms.Illegal, match="forbids writing v0"):
        _admit(rules, "mul_", ["v0"], None, {"c": 2.0, "no_grad": True})


def test_a_form_without_backward_may_not_return_from_a_value_that_requires_grad_but_a_log_may_read_it():
    rules = _rules()
    with pytest.raises(forms.Illegal, match="no backward"):
        _admit(rules, "p_pos", ["x0"], "v0", {"site": 0})
    _admit(rules, "e_log", ["x0"], None, {"site": 1})


def test_no_view_under_no_grad_of_a_value_that_requires_grad():
    rules = _rules()
    with pytest.raises(forms.Illegal, match="no_grad"):
        _admit(rules, "head", ["x0"], "v0", {"dim": 0, "no_grad": True}, root={"x0": "x0", "v0": "x0"})


def test_a_function_that_marks_its_input_dirty_may_write_a_computed_value_that_requires_grad():
    rules = _rules()
    _admit(rules, "p_sin", ["x0"], "v0", {"site": 0})
    _admit(rules, "fn_dirty", ["v0"], "v1", {"site": 1}, root={"v0": "v0", "v1": "v0"})
    assert rules.requires["v1"]
    with pytest.raises(forms.Illegal, match="forbids writing x0"):
        _admit(rules, "fn_dirty", ["x0"], "v2", {"site": 2}, root={"x0": "x0", "v2": "x0"})


@pytest.mark.parametrize("fn", ["sigmoid", "tanh", "relu"])
def test_a_result_its_own_backward_keeps_is_never_marked_dirty(fn):
    """``sigmoid``, ``tanh`` and ``relu`` save their output for backward: a Function that
    writes it, dirty or not, makes eager's backward raise, so it is never drawn; ``sin``
    keeps its input only, and its result may be written so."""
    rules = _rules()
    _admit(rules, "unary", ["x0"], "v0", {"fn": fn})
    with pytest.raises(forms.Illegal, match="forbids writing v0"):
        _admit(rules, "fn_dirty", ["v0"], "v1", {"site": 1}, root={"v0": "v0", "v1": "v0"})
    rules = _rules()
    _admit(rules, "unary", ["x0"], "v0", {"fn": "sin"})
    _admit(rules, "fn_dirty", ["v0"], "v1", {"site": 1}, root={"v0": "v0", "v1": "v0"})


@pytest.mark.parametrize("form", ["as_strided", "as_strided_fn"])
def test_an_as_strided_box_under_grad_is_taken_of_its_root_not_of_a_view_of_it(form):
    """The box is over the root's storage: of a view that requires grad it may read what
    the view does not cover, which as_strided's backward gives no gradient (eager drops
    it, a compiled program regenerating the alias from the base does not): the
    campaign entry wrong-output-5b6c3a7f7669, x[:n].as_strided((n,), (2,), 0)."""
    box = {"base": ["s0"], "pieces": ["evens"], "order": [0]}
    rules = _rules()
    _admit(rules, "head", ["x0"], "v0", {"dim": 0}, root={"x0": "x0", "v0": "x0"})
    root = {"x0": "x0", "v0": "x0", "v1": "x0"}
    with pytest.raises(forms.Illegal, match="outside the view v0"):
        _admit(rules, form, ["v0"], "v1", box, root=root)
    _admit(rules, form, ["x0"], "v1", box, root=root)  # of the root itself: inside it
    # a view that requires no grad (made from a value computed under no_grad) may have its box
    _admit(rules, "p_sin", ["x0"], "v2", {"site": 0, "no_grad": True})
    _admit(rules, "head", ["v2"], "v3", {"dim": 0}, root={"v2": "v2", "v3": "v2"})
    _admit(rules, form, ["v3"], "v4", box, root={"v2": "v2", "v3": "v2", "v4": "v2"})
