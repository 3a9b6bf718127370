"""The ordinary (aten) statement forms every program may draw, and those of two
features: a graph break the program asks for (``graph-break``) and sizes only the data
knows (``data-dependent``: a nonzero-like selection, an ``.item()`` feeding a view).

A form here is plain tensor code: its category (``ATEN``, ``VIEW``, ``INPLACE``,
``CONTROL``) says what it does to its operands (``fuzzer.program.form_record``).
"""

from __future__ import annotations

from fuzzer.program import sizes
from fuzzer.program.feature_record import Feature
from fuzzer.program.form_record import (
    ATEN,
    CONSTANTS,
    CONTROL,
    INPLACE,
    NO_BACKWARD,
    VIEW,
    Form,
    Illegal,
    Shrink,
    data_size,
    dim_attr,
    draw_const,
    draw_dim,
    draw_fn,
    draw_size,
    infer_binary,
    infer_inplace_binary,
    infer_inplace_scale,
    infer_none,
    infer_same,
    infer_scaled,
    infer_unary,
    known_dim,
    need_rank,
    py_dim,
    replace_dim,
)
from fuzzer.program.storage import Affine

GRAPH_BREAK = "graph-break"
DATA_DEPENDENT = "data-dependent"

FEATURES: tuple[Feature, ...] = (
    Feature(GRAPH_BREAK, 0.25, "explicit torch._dynamo.graph_break() between statements (fullgraph=False)"),
    Feature(DATA_DEPENDENT, 0.3, "sizes from data: masked_select, .item() feeding a slice, a custom op "
            "whose fake impl uses new_dynamic_size()"),
)


def _slice_text(arg: str, dim: int, stop: str) -> str:
    return f"{arg}[{':, ' * dim}: {stop}]"


def _infer_sum(t, attrs, m):
    return replace_dim(t[0], dim_attr(attrs, t[0]), None)


def _infer_head(t, attrs, m):
    dim = dim_attr(attrs, t[0])
    return replace_dim(t[0], dim, sizes.half(known_dim(t[0][dim])))


def _infer_narrow(t, attrs, m):
    dim = dim_attr(attrs, t[0])
    known_dim(t[0][dim])
    if sizes.smallest(t[0][dim], m) < 1:
        raise Illegal(f"narrow needs dim {t[0][dim]!r} >= 1 for every binding")
    return replace_dim(t[0], dim, sizes.minus_one(t[0][dim]))


def _infer_transpose(t, attrs, m):
    need_rank(t[0], 2)
    return (t[0][1], t[0][0]) + tuple(t[0][2:])


def _infer_unsqueeze(t, attrs, m):
    return ("1",) + tuple(t[0])


def _infer_select_pos(t, attrs, m):
    return data_size(attrs)


def _infer_head_pos(t, attrs, m):
    if len(t[0]) != 1:
        raise Illegal("head_pos takes a rank-1 operand")
    return data_size(attrs)


#: a form that shrinks to a plain copy of its operand
TO_CLONE = Shrink(("clone",))
#: what a statement rewritten into a form with a constant starts with
SIMPLEST_CONSTANT = (("c", CONSTANTS[0]),)

FORMS: tuple[Form, ...] = (
    # the fresh results shrink to a copy, the writes to a scaling in place
    Form("add", ATEN, 2, infer_binary, lambda a, at, d: f"{a[0]} + {a[1]}", broadcasts=True, shrink=TO_CLONE),
    Form("mul", ATEN, 2, infer_binary, lambda a, at, d: f"{a[0]} * {a[1]}", broadcasts=True, shrink=TO_CLONE),
    Form("scale", ATEN, 1, infer_scaled, lambda a, at, d: f"{a[0]} * {at['c']}", draw=draw_const,
         shrink=Shrink(("clone",), start=SIMPLEST_CONSTANT)),
    Form("unary", ATEN, 1, infer_unary, lambda a, at, d: f"torch.{at['fn']}({a[0]})", draw=draw_fn, shrink=TO_CLONE),
    Form("sum", ATEN, 1, _infer_sum, lambda a, at, d: f"{a[0]}.sum({at['dim']})", draw=draw_dim, shrink=TO_CLONE),
    Form("clone", ATEN, 1, infer_same, lambda a, at, d: f"{a[0]}.clone()", shrink=Shrink(complexity=0)),
    Form("head", VIEW, 1, _infer_head,
         lambda a, at, d: _slice_text(a[0], at["dim"], sizes.half(d[0][at["dim"]])), draw=draw_dim,
         footprint=lambda f, at, d: f.slice(at.get("dim", 0), Affine(), 1, d[at.get("dim", 0)])),
    Form("narrow", VIEW, 1, _infer_narrow,
         lambda a, at, d: f"{a[0]}.narrow({at['dim']}, 1, {py_dim(d[0][at['dim']])} - 1)", draw=draw_dim,
         footprint=lambda f, at, d: f.slice(at.get("dim", 0), Affine(1), 1, d[at.get("dim", 0)])),
    Form("transpose", VIEW, 1, _infer_transpose, lambda a, at, d: f"{a[0]}.transpose(0, 1)",
         footprint=lambda f, at, d: f.permute((1, 0) + tuple(range(2, len(d))))),
    Form("unsqueeze", VIEW, 1, _infer_unsqueeze,
         lambda a, at, d: f"{a[0]}.unsqueeze(0)", footprint=lambda f, at, d: f.unsqueeze(0)),
    Form("add_", INPLACE, 2, infer_inplace_binary, lambda a, at, d: f"{a[0]}.add_({a[1]})",
         mutates=(0,), returns=False, broadcasts=True, shrink=Shrink(("mul_",))),
    Form("mul_", INPLACE, 1, infer_inplace_scale, lambda a, at, d: f"{a[0]}.mul_({at['c']})",
         mutates=(0,), returns=False, draw=draw_const, shrink=Shrink(complexity=0, start=SIMPLEST_CONSTANT)),
    Form("copy_", INPLACE, 2, infer_inplace_binary, lambda a, at, d: f"{a[0]}.copy_({a[1]})",
         mutates=(0,), returns=False, broadcasts=True, shrink=Shrink(("mul_",))),
    # graph breaks the program asks for (fullgraph=False): not a reason to call it untested
    Form("graph_break", CONTROL, 0, infer_none, lambda a, at, d: "torch._dynamo.graph_break()",
         returns=False, feature=GRAPH_BREAK, grad=NO_BACKWARD),
    # sizes only the data knows: a nonzero-like selection, and an .item() feeding a view
    Form("select_pos", ATEN, 1, _infer_select_pos,
         lambda a, at, d: f"torch.masked_select({a[0]}, {a[0]} > 0)", feature=DATA_DEPENDENT, draw=draw_size),
    Form("head_pos", VIEW, 1, _infer_head_pos,
         lambda a, at, d: f"{a[0]}[: ({a[0]} > 0).sum().item()]", feature=DATA_DEPENDENT, draw=draw_size,
         footprint=lambda f, at, d: f.slice(0, Affine(), 1, d[0])),
)
