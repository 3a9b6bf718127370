"""The shrinker's order (``fuzzer.reduce.order``): what each form may become and how
complicated it reads, read off the forms themselves (``form_record.Shrink``).

The tables below are what ``order.py`` held by form name before the forms carried
them, with the forms it had no path for: what the forms say of themselves must equal
them, so shrinking is what it was.  A form added since says its own (its module is the
one place), and the rules every form keeps hold for it too.
"""

import dataclasses

import pytest
from helpers import case, prog

from fuzzer.program import forms
from fuzzer.program.form_record import CONSTANTS, DEFAULT_COMPLEXITY
from fuzzer.program.ir import Mode
from fuzzer.reduce.edits import simpler_stmt
from fuzzer.reduce.order import complexity, form_complexity, mode_complexity, simpler_forms, simpler_modes

SIMPLER = {
    "p_mix": ("p_sin",), "p_head": ("p_sin",), "p_rowsum": ("p_sin",), "m_swap": ("m_addto", "m_scale"),
    "m_shift": ("m_addto", "m_scale"), "m_addto": ("m_scale",), "m_cumrow": ("m_scale",), "e_tap": ("e_log",),
    "add": ("clone",), "mul": ("clone",), "scale": ("clone",), "unary": ("clone",), "sum": ("clone",),
    "copy_": ("mul_",), "add_": ("mul_",), "p_pair": ("p_sin",), "p_opt": ("p_opt_none", "p_sin"),
    "p_opt_none": ("p_sin",), "p_affine": ("p_sin",), "m_unknown": ("m_addto", "m_scale"), "m_list": ("m_scale",),
    "cond_sin": ("p_sin",), "in_region_p_sin": ("p_sin",), "in_region_e_tap": ("e_tap",),
    "in_region_m_scale": ("m_scale",), "t_scale": ("m_scale",), "t_addto": ("m_addto", "m_scale", "t_scale"),
    "t_sin_out": ("m_addto", "m_scale"), "t_split_out": ("t_sin_out", "m_addto", "m_scale"),
    "t_split_out_hi": ("t_sin_out", "m_addto", "m_scale"), "s_mix": ("p_mix", "p_sin"),
    "s_addto": ("m_addto", "m_scale"), "s_scale": ("m_scale",), "s_list": ("m_list", "m_scale"),
    "s_pair": ("m_shift", "m_addto", "m_scale"), "s_opt": ("s_opt_none",),
    "s_inplace": ("s_addto", "m_addto", "m_scale"),
    "s_optlist": ("s_opt", "s_optlist_none"), "s_optlist_none": ("s_opt_none",), "s_silu": ("p_sin",),
    "s_silu_out": ("t_sin_out", "m_addto", "m_scale"), "c_sinmix": ("p_mix", "p_sin"),
    "c_scaleadd": ("m_addto", "m_scale"), "c_two": ("m_shift", "m_addto", "m_scale"), "cond_tap": ("e_tap",),
    "cond_log": ("e_log", "e_tap"), "cond_scale": ("m_scale", "clone"), "while_tap": ("e_tap",),
    "while_scale": ("m_scale", "clone"), "map_tap": ("e_tap",), "scan_tap": ("e_tap",), "p_gradlog": ("p_sin",),
    "fn_pure": ("p_sin",), "fn_scale": ("m_scale", "clone"), "fn_dirty": ("m_scale", "clone"),
    "fn_pair": ("fn_pure", "p_mix"), "fn_linear": ("fn_pair", "p_mix"), "fn_gradbuf": ("fn_pure", "p_sin"),
    "fn_saved": ("fn_scale", "m_scale", "clone"), "as_strided": ("head", "alias"), "unfold_gap": ("slice_step",),
    "dtype_view": ("alias",), "T": ("transpose",), "mT": ("transpose",), "tail": ("head",),
    "set_alias": ("alias",), "swap": ("set_alias", "alias"), "set_clone": ("clone",), "resize_copy": ("clone",),
    "resize_head": ("head",), "r_resize": ("m_addto", "m_scale"), "r_setw": ("m_scale",), "r_workspace": ("p_sin",),
    "width_view": ("dtype_view", "alias"),
    **{name: ("clone",) for name in ("masked_fill_mask", "where_mask", "mul_bool", "mul_int64", "gather")},
    "less": ("positive",), "logic": ("invert",),
}
#: the forms that read other than ``DEFAULT_COMPLEXITY``
COMPLEXITY = {
    "p_sin": 0, "m_scale": 0, "e_log": 0, "clone": 0, "mul_": 0, "m_addto": 1, "t_scale": 1, "t_split_out": 3,
    "t_split_out_hi": 3,
    **{name: 3 for name in ("s_mix", "s_addto", "s_scale", "s_list", "s_pair", "s_opt", "c_sinmix", "c_scaleadd",
                            "c_two", "cond_tap", "cond_log", "cond_scale", "while_tap", "while_scale", "map_tap",
                            "scan_tap", "p_gradlog", "fn_pure", "fn_scale", "fn_dirty", "s_optlist_none", "s_silu")},
    "s_inplace": 4, "s_optlist": 4, "s_silu_out": 4, "as_strided": 4, "unfold_gap": 3, "dtype_view": 3, "T": 3,
    "mT": 3, "tail": 3,
    **{name: 3 for name in ("set_alias", "set_clone", "resize_copy", "resize_head", "r_resize", "r_setw",
                            "r_workspace")},
    "swap": 4, "width_view": 4,
    **{name: 3 for name in ("masked_fill_mask", "where_mask", "mul_bool", "mul_int64", "gather", "less", "logic")},
    "fn_pair": 4, "fn_gradbuf": 4, "fn_saved": 4, "fn_linear": 5,
}


#: the forms ``order.py`` had no simpler form for
NO_PATH = frozenset({
    "clone", "head", "narrow", "transpose", "unsqueeze", "mul_", "graph_break", "select_pos", "head_pos", "permute",
    "select", "slice_step", "chunk", "diagonal", "movedim", "alias", "squeeze", "flip", "index_select", "take_even",
    "where", "masked_fill", "index_add_", "index_copy_", "masked_fill_", "index_put_", "zero_", "fill_", "clamp_",
    "sub_", "div_", "unary_", "lerp_", "p_sin", "m_scale", "e_log", "p_pos", "s_opt_none", "map_sin", "k_put",
    "r_stat", "argmax", "argsort", "count_nonzero", "positive", "to_int32", "invert", "count", "mask_bytes",
    "widen_uint8", "widen_int32", "words", "nonzero", "add_int64", "bitwise_int64", "sum_int64", "positive_int64",
    "divmod_int64", "divmod_int32", "index_select_int64", "index_select_int32", "mask_select",
})


def test_the_tables_read_off_the_forms_are_those_the_shrinker_had():
    had = set(SIMPLER) | NO_PATH
    assert had <= set(forms.FORMS)
    assert {name: simpler_forms(name) for name in had if simpler_forms(name)} == SIMPLER
    assert {name: form_complexity(name) for name in had} == {
        name: COMPLEXITY.get(name, DEFAULT_COMPLEXITY) for name in had}


@pytest.mark.parametrize("name", sorted(SIMPLER))
def test_a_form_shrinks_only_to_existing_forms_that_read_no_more_complicated(name):
    for simpler in simpler_forms(name):
        assert simpler in forms.FORMS and simpler != name
        assert form_complexity(simpler) <= form_complexity(name)


def test_a_form_the_table_does_not_know_has_no_simpler_form_and_reads_as_the_default():
    assert simpler_forms("mylib::op") == ()
    assert form_complexity("mylib::op") == DEFAULT_COMPLEXITY


def test_a_simpler_form_lowers_the_order_where_the_rest_of_the_case_stays():
    body = [("s_addto", ["x0", "x1"], None, {"site": 0})]
    before = case(prog({"x0": ("s0",), "x1": ("s0",)}, body))
    after = case(prog({"x0": ("s0",), "x1": ("s0",)}, [("m_addto", ["x0", "x1"], None, {"site": 0})]))
    assert complexity(after) < complexity(before)


def test_a_statement_rewritten_into_a_form_starts_with_its_attributes_and_keeps_its_dim():
    """``mul_`` starts with the simplest constant (``Shrink.start``); a view along a dim
    keeps the dim it had (``Form.kept_attrs``); a custom call keeps its site."""
    assert simpler_stmt(prog({"x0": ("s0",)}, [("add_", ["x0", "x0"], None, {})]).body[0], "mul_").attrs == {"c": 0.5}
    tail = prog({"x0": ("s0", "s1")}, [("tail", ["x0"], "v0", {"dim": 1})]).body[0]
    assert simpler_stmt(tail, "head").attrs == {"dim": 1}
    tap = prog({"x0": ("s0",)}, [("cond_tap", ["x0"], "v0", {"site": 3, "site2": 4})]).body[0]
    assert simpler_stmt(tap, "e_tap").attrs == {"site": 3}


P = prog({"x0": ("s0", "s1")}, [("p_mix", ["x0", "x0"], "v0", {"site": 0}), ("scale", ["v0"], "v1",
                                                                           {"c": CONSTANTS[-1]})],
         outputs=["v1"])


def test_fewer_statements_outrank_everything_after_them():
    shorter = prog({"x0": ("s0", "s1")}, [("p_mix", ["x0", "x0"], "v0", {"site": 0})], outputs=["v0"])
    many_bindings = case(shorter, [{"s0": 9, "s1": 9}] * 1 + [{"s0": n, "s1": n} for n in (2, 3, 4, 5)])
    assert complexity(many_bindings) < complexity(case(P))
    one_returning_two = prog({"x0": ("s0", "s1")}, [("p_sin", ["x0"], "v0", {"site": 0})], outputs=["v0", "x0"])
    two_returning_none = prog({"x0": ("s0", "s1")}, [("p_sin", ["x0"], "v0", {"site": 0}),
                                                     ("p_sin", ["x0"], "v1", {"site": 1})])
    assert complexity(case(one_returning_two)) < complexity(case(two_returning_none))


def test_a_simpler_form_an_earlier_operand_a_simpler_constant_and_smaller_sizes_each_order_lower():
    base = complexity(case(P))
    simpler_op = dataclasses.replace(P, body=(P.body[0].__class__("p_sin", ("x0",), "v0", {"site": 0}), P.body[1]))
    simpler_c = dataclasses.replace(P, body=(P.body[0], dataclasses.replace(P.body[1],
                                                                            attrs={"c": CONSTANTS[0]})))
    assert complexity(case(simpler_op)) < base
    assert complexity(case(simpler_c)) < base
    assert complexity(case(P, [{"s0": 2, "s1": 2}] * 3)) < complexity(case(P, [{"s0": 3, "s1": 3}] * 3))


def test_each_simplification_of_a_mode_is_one_step_down():
    mode = Mode(dynamic="auto", dtype="float16", marks=(("x0", 0, "dynamic"),), strided=("x0",), grad=True,
                layouts=(("x1", "transposed"),), windows=(("x2", "x3", 0, "row"),), window_calls="later")
    assert mode_complexity(Mode()) == 0 and mode_complexity(mode) == 8
    simpler = list(simpler_modes(mode))
    assert len(simpler) == 8
    assert all(mode_complexity(m) < mode_complexity(mode) for m in simpler)
    assert list(simpler_modes(Mode())) == []
    carried = Mode(module=("x0",), carry=True)
    assert list(simpler_modes(carried)) == [Mode(module=("x0",))]  # carried first: a buffer stays till then
