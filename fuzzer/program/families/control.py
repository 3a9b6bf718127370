"""Effects and writes inside control flow and backward (feature ``hop-effects``).

The first library's ``torch.cond`` calls a pure op in each branch.  Libraries put
more there: a logging op or an in-place update inside a branch, a loop body
(``while_loop``), a ``map`` over the rows or a ``scan``; and an op whose backward
logs.  The forms here call the library's own ops there:

* ``cond_tap`` / ``cond_log``: an ORDERED effect in each branch (one that returns,
  one that returns nothing beside the branch's value); which branch ran decides
  which event the log must hold, and eager shows it;
* ``cond_scale`` / ``while_scale``: a mutating op writing a fresh intermediate of
  the branch or body (what torch documents a branch and a body may write; a write
  to an operand is refused by eager, and to a loop's carried value documented out);
* ``while_tap``: an effect in a loop body run a fixed three times, its trip count a
  tensor counter;
* ``map_tap``: an effect per row of a ``map``;
* ``scan_tap``: an effect in a ``scan``'s combine function, which torch documents
  must have none (``Form.limit``): such a program is untested, never judged;
* ``p_gradlog``: a pure op whose ``register_autograd`` backward calls ``e_log``, an
  ORDERED effect in backward; once per program at most (``Form.once``: the order
  autograd runs two independent backwards in is not documented).

The calls inside a branch or body are ``Form.nested``: ``missed-dce`` does not
judge them.  Every higher-order op here is one eager traces with Dynamo
(``forms.EAGER_TRACED``).
"""

from __future__ import annotations

from fuzzer.program import sizes
from fuzzer.program.feature_record import Feature
from fuzzer.program.form_record import (
    COND,
    MAP,
    SCAN,
    TWIN,
    WHILE,
    Form,
    Illegal,
    Shrink,
    custom_form,
    infer_same,
    known_dim,
    need_rank,
    op_text,
)
from fuzzer.program.op_record import PURE, CustomOp
from fuzzer.program.op_snippets import FIRST

FEATURE = "hop-effects"
#: how many times a loop body runs
TRIPS = 3


def _unavailable() -> str | None:
    """Effects inside higher-order ops need ``torch.cond`` and the ``while_loop``, ``map``
    and ``scan`` of ``torch._higher_order_ops``."""
    import torch
    import torch._higher_order_ops as hops

    lacking = [op for op in ("while_loop", "map", "scan") if not callable(getattr(hops, op, None))]
    if not hasattr(torch, "cond") or lacking:
        return f"this torch lacks torch.cond or torch._higher_order_ops.{', '.join(lacking) or 'while_loop'}"
    return None


FEATURES: tuple[Feature, ...] = (
    Feature(FEATURE, 0.25, "effectful and mutating custom ops inside torch.cond branches, while_loop "
            "bodies, map and scan; an op whose register_autograd backward logs an ORDERED effect",
            unavailable=_unavailable),
)

OPS: tuple[CustomOp, ...] = (
    CustomOp("p_gradlog", PURE, doc="x * 1.5; its backward logs the gradient it is given (an ORDERED effect)",
             source='''
@torch.library.custom_op("dcefuzz::p_gradlog", mutates_args=())
def p_gradlog(x: torch.Tensor, site: int) -> torch.Tensor:
    _hit("p_gradlog", site)
    return (x * 1.5).contiguous()


@p_gradlog.register_fake
def _(x, site):
    return x.new_empty(x.shape)


def _p_gradlog_setup(ctx, inputs, output):
    ctx.at = inputs[1:]  # where the op is called from, when it is told


def _p_gradlog_backward(ctx, grad):
    torch.ops.dcefuzz.e_log(grad, *ctx.at)
    return grad * 1.5, None


p_gradlog.register_autograd(_p_gradlog_backward, setup_context=_p_gradlog_setup)
'''.lstrip("\n")),
)


def call(op: str, args: str, site, plain: bool) -> str:
    """A library op's call in a helper's text (``plain``: without its site)."""
    return f"torch.ops.dcefuzz.{op}({args}{'' if plain else f', {site}'})"


def infer_rows(t, attrs, m):
    """A ``map`` or ``scan`` runs over dim 0, which must hold a row for every binding."""
    need_rank(t[0], 1)
    if sizes.smallest(known_dim(t[0][0]), m) < 1:
        raise Illegal(f"a map or scan needs dim {t[0][0]!r} >= 1 for every binding")
    return t[0]


def _helper(name: str, params: str, *lines: str) -> tuple[str, str]:
    """A helper function of a statement's text, by name: ``def name(params):`` over ``lines``."""
    return name, f"def {name}({params}):\n" + "".join(f"    {line}\n" for line in lines)


def _cond_log_helpers(stmt, plain: bool) -> dict[str, str]:
    s, s2 = stmt.attrs["site"], stmt.attrs["site2"]
    return dict((_helper(f"log_then_sin{s}", "t", call("e_log", "t", s, plain), "return t.sin()"),
                 _helper(f"log_then_cos{s2}", "t", call("e_log", "t * 0.5", s2, plain), "return t.cos()")))


def _cond_scale_helpers(stmt, plain: bool) -> dict[str, str]:
    s, s2 = stmt.attrs["site"], stmt.attrs["site2"]
    return dict((_helper(f"scale_double{s}", "t", "u = t * 2.0", call("m_scale", "u", s, plain), "return u"),
                 _helper(f"scale_half{s2}", "t", "u = t * 0.5", call("m_scale", "u", s2, plain), "return u")))


def _while_scale_helpers(stmt, plain: bool) -> dict[str, str]:
    s = stmt.attrs["site"]
    return dict((_helper(f"scale_step{s}", "i, t", "u = t.clone()", call("m_scale", "u", s, plain),
                         "return i + 1, u"),))


def _loop(a: str, body: str) -> str:
    counter = f"{a}.new_zeros((), dtype=torch.int64)"
    # a contiguous copy: the body's value must have the strides of the one carried in
    carried = f"{a}.clone(memory_format=torch.contiguous_format)"
    return f"torch._higher_order_ops.while_loop(lambda i, t: i < {TRIPS}, {body}, ({counter}, {carried}))[1]"


def _render_cond_tap(a, at, d):
    tap = op_text("e_tap")
    return (f"torch.cond({a[0]}.sum() > 0, lambda t: {tap}(t, {at['site']}), "
            f"lambda t: {tap}(t * 0.5, {at['site2']}), ({a[0]},))")


def _render_cond_log(a, at, d):
    return f"torch.cond({a[0]}.sum() > 0, log_then_sin{at['site']}, log_then_cos{at['site2']}, ({a[0]},))"


def _render_cond_scale(a, at, d):
    return f"torch.cond({a[0]}.sum() > 0, scale_double{at['site']}, scale_half{at['site2']}, ({a[0]},))"


def _render_while_tap(a, at, d):
    return _loop(a[0], f"lambda i, t: (i + 1, {op_text('e_tap')}(t, {at['site']}))")


def _render_while_scale(a, at, d):
    return _loop(a[0], f"scale_step{at['site']}")


def _render_map(op: str):
    def render(a, at, d):
        return f"torch._higher_order_ops.map(lambda t: {op_text(op)}(t, {at['site']}), {a[0]})"
    return render


def _render_scan_tap(a, at, d):
    return (f"torch._higher_order_ops.scan(lambda c, x: ((c + x).contiguous(), {op_text('e_tap')}(x, {at['site']})), "
            f"{a[0]}.new_zeros({a[0]}.shape[1:]), {a[0]})[1]")


def _nested(op: str, infer, render, form: str, **fields) -> Form:
    """A form calling the first library's op ``op`` inside a higher-order op: its calls
    are nested, and the form returns the higher-order op's value."""
    return custom_form(FIRST[op], 1, infer, form=form, feature=FEATURE, render=render, nested=True, returns=True,
                       **fields)


#: the family's forms, each toward the bare call it wraps (of its op's kind); where that
#: has no result and the form's is read, the plain clone, which drops the call
FORMS: tuple[Form, ...] = (
    _nested("e_tap", infer_same, _render_cond_tap, "cond_tap", branches=True, hop=COND, opaque=False,
            shrink=Shrink(("e_tap",), 3)),
    _nested("e_log", infer_same, _render_cond_log, "cond_log", branches=True, hop=COND, opaque=False,
            helpers=_cond_log_helpers, shrink=Shrink(("e_log", "e_tap"), 3)),
    _nested("m_scale", infer_same, _render_cond_scale, "cond_scale", branches=True, hop=COND, opaque=False,
            helpers=_cond_scale_helpers, shrink=Shrink(("m_scale", "clone"), 3)),
    _nested("e_tap", infer_same, _render_while_tap, "while_tap", hop=WHILE, shrink=Shrink(("e_tap",), 3)),
    _nested("m_scale", infer_same, _render_while_scale, "while_scale", hop=WHILE, helpers=_while_scale_helpers,
            shrink=Shrink(("m_scale", "clone"), 3)),
    _nested("e_tap", infer_rows, _render_map("e_tap"), "map_tap", hop=MAP, shrink=Shrink(("e_tap",), 3)),
    # map_tap's twin with no effect in its body, never drawn (``fuzzer.triage.causes``)
    _nested("p_sin", infer_rows, _render_map("p_sin"), "map_sin", hop=MAP, drawn_as=TWIN),
    _nested("e_tap", infer_rows, _render_scan_tap, "scan_tap", hop=SCAN,
            limit="torch._higher_order_ops.scan documents that its combine_fn may not have side effects",
            shrink=Shrink(("e_tap",), 3)),
    custom_form(OPS[0], 1, infer_same, feature=FEATURE, also_calls=("e_log",), backward_logs=("e_log",), once=True,
                shrink=Shrink(("p_sin",), 3)),
)
