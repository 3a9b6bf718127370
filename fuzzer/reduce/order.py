"""The order the shrinker moves down, and the simpler forms it tries.

Every accepted step of a shrink strictly decreases :func:`complexity`, a tuple
compared in order (statements first, then returned values, inputs, ranks, symbols,
bindings, the mode, simpler forms, operands defined earlier, simpler attributes,
smaller sizes): a well-founded order, so the passes cannot cycle and the fixpoint is
reached.  ``SIMPLER`` says which op may replace which, of the same declared kind, and
which bare call a form that wraps one (a branch, a loop, an ``autograd.Function``) may
become.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

from fuzzer.program.form_record import CONSTANTS, UNARY_FUNCTIONS
from fuzzer.program.ir import Case, Mode

#: Simpler ops of the same declared kind, tried in order (arity may drop: extra
#: operands are discarded).
SIMPLER: dict[str, tuple[str, ...]] = {
    "p_mix": ("p_sin",),
    "p_head": ("p_sin",),
    "p_rowsum": ("p_sin",),
    "m_swap": ("m_addto", "m_scale"),
    "m_shift": ("m_addto", "m_scale"),
    "m_addto": ("m_scale",),
    "m_cumrow": ("m_scale",),
    "e_tap": ("e_log",),
    "add": ("clone",),
    "mul": ("clone",),
    "scale": ("clone",),
    "unary": ("clone",),
    "sum": ("clone",),
    "copy_": ("mul_",),
    "add_": ("mul_",),
    "p_pair": ("p_sin",),
    "p_opt": ("p_opt_none", "p_sin"),
    "p_opt_none": ("p_sin",),
    "p_affine": ("p_sin",),
    "m_unknown": ("m_addto", "m_scale"),
    "m_list": ("m_scale",),
    "cond_sin": ("p_sin",),
    "in_region_p_sin": ("p_sin",),
    "in_region_e_tap": ("e_tap",),
    "in_region_m_scale": ("m_scale",),
    # a tagged op toward the plain mutating op of its argument (its result read as the
    # argument, ``passes.rewrite``), a second buffer or operand dropped on the way
    "t_scale": ("m_scale",),
    "t_addto": ("m_addto", "m_scale", "t_scale"),
    "t_sin_out": ("m_addto", "m_scale"),
    "t_split_out": ("t_sin_out", "m_addto", "m_scale"),
    "t_split_out_hi": ("t_sin_out", "m_addto", "m_scale"),
    # hand-written schemas and calls between ops, toward the plain custom_op forms
    "s_mix": ("p_mix", "p_sin"),
    "s_addto": ("m_addto", "m_scale"),
    "s_scale": ("m_scale",),
    "s_list": ("m_list", "m_scale"),
    "s_pair": ("m_shift", "m_addto", "m_scale"),
    "s_opt": ("s_opt_none",),
    "s_inplace": ("s_addto", "m_addto", "m_scale"),
    # an optional written list toward the optional tensor (its first element), and its
    # call with None toward that one's; a functional op with an out overload toward the
    # plain pure op, its overload called with a buffer toward the tagged out= op
    "s_optlist": ("s_opt", "s_optlist_none"),
    "s_optlist_none": ("s_opt_none",),
    "s_silu": ("p_sin",),
    "s_silu_out": ("t_sin_out", "m_addto", "m_scale"),
    "c_sinmix": ("p_mix", "p_sin"),
    "c_scaleadd": ("m_addto", "m_scale"),
    "c_two": ("m_shift", "m_addto", "m_scale"),
    # a branch, a loop body, a map or scan, an autograd.Function: the bare call it
    # wraps (of its op's kind); where that has no result and the form's is read, the
    # plain clone, which drops the call
    "cond_tap": ("e_tap",),
    "cond_log": ("e_log", "e_tap"),
    "cond_scale": ("m_scale", "clone"),
    "while_tap": ("e_tap",),
    "while_scale": ("m_scale", "clone"),
    "map_tap": ("e_tap",),
    "scan_tap": ("e_tap",),
    "p_gradlog": ("p_sin",),
    "fn_pure": ("p_sin",),
    "fn_scale": ("m_scale", "clone"),
    "fn_dirty": ("m_scale", "clone"),
    # the Functions as libraries write them: toward a Function of one argument that
    # writes nothing in backward, then the bare call
    "fn_pair": ("fn_pure", "p_mix"),
    "fn_linear": ("fn_pair", "p_mix"),
    "fn_gradbuf": ("fn_pure", "p_sin"),
    "fn_saved": ("fn_scale", "m_scale", "clone"),
    # the strided views, toward the plain views: an as_strided to a slice or the whole
    "as_strided": ("head", "alias"),
    "unfold_gap": ("slice_step",),
    "dtype_view": ("alias",),
    "T": ("transpose",),
    "mT": ("transpose",),
    "tail": ("head",),
    # the storage swaps, toward the plain forms: a tensor set onto a storage to the view
    # or the clone it reads, a swapped value to that view (the swapped operand dropped),
    # a resized buffer to the clone or the slice it holds, the ops to the plain ops
    "set_alias": ("alias",),
    "swap": ("set_alias", "alias"),
    "set_clone": ("clone",),
    "resize_copy": ("clone",),
    "resize_head": ("head",),
    "r_resize": ("m_addto", "m_scale"),
    "r_setw": ("m_scale",),
    "r_workspace": ("p_sin",),
    # a view through other widths toward one through its own, then none; a mask or an
    # index away (the float it fed as a copy), two masks toward one
    "width_view": ("dtype_view", "alias"),
    **{name: ("clone",) for name in ("masked_fill_mask", "where_mask", "mul_bool", "mul_int64", "gather")},
    "less": ("positive",),
    "logic": ("invert",),
}
#: (a keyword-only scalar's simplest value is None: left to its default)
SIMPLEST_ATTRS = {"c": CONSTANTS[0], "fn": UNARY_FUNCTIONS[0], "dim": 0, "alpha": None, "beta": None}

#: How complicated a form reads: the targets of ``SIMPLER`` rank lowest.
FORM_COMPLEXITY = {"p_sin": 0, "m_scale": 0, "e_log": 0, "clone": 0, "mul_": 0, "m_addto": 1, "t_scale": 1,
                   "t_split_out": 3, "t_split_out_hi": 3,
                   # the forms of hand-written schemas and calls between ops rank above
                   # the plain forms they shrink to, and a form that wraps a call (a
                   # branch, a loop, an autograd.Function) reads as more than the bare call
                   **{name: 3 for name in ("s_mix", "s_addto", "s_scale", "s_list", "s_pair", "s_opt", "c_sinmix",
                                           "c_scaleadd", "c_two", "cond_tap", "cond_log", "cond_scale", "while_tap",
                                           "while_scale", "map_tap", "scan_tap", "p_gradlog", "fn_pure", "fn_scale",
                                           "fn_dirty", "s_optlist_none", "s_silu")}, "s_inplace": 4,
                   "s_optlist": 4, "s_silu_out": 4,
                   # the strided views rank above the plain views they shrink to
                   "as_strided": 4, "unfold_gap": 3, "dtype_view": 3, "T": 3, "mT": 3, "tail": 3,
                   # and the storage swaps above the plain forms they shrink to
                   **{name: 3 for name in ("set_alias", "set_clone", "resize_copy", "resize_head", "r_resize",
                                           "r_setw", "r_workspace")}, "swap": 4,
                   # and the width views and the integer forms above theirs
                   "width_view": 4, **{name: 3 for name in ("masked_fill_mask", "where_mask", "mul_bool", "mul_int64",
                                                            "gather", "less", "logic")},
                   # and the Functions as libraries write them above the ones they shrink to
                   "fn_pair": 4, "fn_gradbuf": 4, "fn_saved": 4, "fn_linear": 5}
DEFAULT_FORM_COMPLEXITY = 2


def complexity(case: Case) -> tuple:
    """A well-founded order on cases: the shrinker only ever moves down it.

    Statements first, then returned values, inputs, ranks, symbols, bindings, then
    finer things: simpler forms, operands defined earlier, simpler attributes,
    smaller sizes.  Because every accepted step strictly decreases this key, the
    passes cannot cycle and the fixpoint is reached.
    """
    p = case.program
    order = {i.name: n for n, i in enumerate(p.inputs)}
    operand_pos = 0
    for s in p.body:
        operand_pos += sum(order.get(a, len(order)) for a in s.args)
        if s.out is not None:
            order[s.out] = len(order)

    def attr_cost(k, v):
        if k == "c":
            return CONSTANTS.index(v) if v in CONSTANTS else len(CONSTANTS)
        if k == "fn":
            return UNARY_FUNCTIONS.index(v) if v in UNARY_FUNCTIONS else len(UNARY_FUNCTIONS)
        if k == "dim":
            return v if isinstance(v, int) else 0
        if k in ("alpha", "beta"):
            return v is not None
        return 0

    return (
        len(p.body),
        len(p.outputs),
        len(p.inputs),
        sum(len(i.dims) for i in p.inputs),
        len(p.symbols),
        len(case.bindings),
        mode_complexity(p.mode),
        sum(FORM_COMPLEXITY.get(s.form, DEFAULT_FORM_COMPLEXITY) for s in p.body),
        operand_pos,
        sum(attr_cost(k, v) for s in p.body for k, v in s.attrs.items() if k != "site"),
        sum(v for b in case.bindings for v in b.values()),
        sum(p.sym_min.values()),
    )


def mode_complexity(mode: Mode) -> int:
    """How much of a mode there is: each mark, strided, aliased, buffer, laid-out or windowed input, gradients, a
    dtype other than float32, automatic dynamic and a carried state count one."""
    return (len(mode.marks) + len(mode.strided) + len(mode.aliases) + mode.grad + (mode.dtype != "float32")
            + (mode.dynamic != "true") + len(mode.module) + mode.carry + len(mode.layouts) + len(mode.windows)
            + bool(mode.window_calls))


def simpler_modes(mode: Mode) -> Iterator[Mode]:
    """Each single simplification of a mode."""
    if mode.grad:
        yield dataclasses.replace(mode, grad=False)
    if mode.dynamic != "true":
        yield dataclasses.replace(mode, dynamic="true")
    if mode.dtype != "float32":
        yield dataclasses.replace(mode, dtype="float32")
    for m in mode.marks:
        yield dataclasses.replace(mode, marks=tuple(x for x in mode.marks if x != m))
    for n in mode.strided:
        yield dataclasses.replace(mode, strided=tuple(x for x in mode.strided if x != n))
    for a in mode.aliases:
        yield dataclasses.replace(mode, aliases=tuple(x for x in mode.aliases if x != a))
    if mode.carry:  # a state loaded before each call, not carried from the call before
        yield dataclasses.replace(mode, carry=False)
    for n in mode.module if not mode.carry else ():  # a buffer back to an input: a module toward a function
        yield dataclasses.replace(mode, module=tuple(x for x in mode.module if x != n))
    for x in mode.layouts:
        yield dataclasses.replace(mode, layouts=tuple(y for y in mode.layouts if y != x))
    if mode.window_calls:  # the same inputs at every call
        yield dataclasses.replace(mode, window_calls="")
    for w in mode.windows:  # a window toward an input of its own: the pair toward distinct inputs
        rest = tuple(y for y in mode.windows if y != w)
        yield dataclasses.replace(mode, windows=rest, window_calls=mode.window_calls if rest else "")
