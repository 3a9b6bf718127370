"""Statement forms: what a program statement may be, how it types and how it reads.

A form is an op spec in the NNSmith sense: it knows its category, how many tensor
operands it takes, which of them it writes, whether its result aliases its first
operand, the output dims it produces (or :class:`Illegal` when operands don't fit),
and the Python text it lowers to.  The generator (``generate``) decides *which*
operands to pick; the forms decide what is legal, so a shrunk or hand-written
program is checked by exactly the same rules as a generated one.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from fuzzer.program import custom_ops, families, sizes
from fuzzer.program.form_record import (  # noqa: F401 - the record and its rules, read as forms.X
    ATEN,
    BACKWARD,
    CONSTANTS,
    CONTROL,
    INPLACE,
    INTEGER,
    INTEGER_SOURCE,
    NO_BACKWARD,
    UNARY_FUNCTIONS,
    VIEW,
    Form,
    Illegal,
    broadcast_into,
    const,
    data_size,
    dim_attr,
    draw_const,
    draw_dim,
    draw_fn,
    draw_size,
    infer_binary,
    infer_inplace_binary,
    infer_inplace_scale,
    infer_unary,
    known_dim,
    need_rank,
    replace_dim,
    same_dims,
)
from fuzzer.program.form_record import COND, MAP, REGION, SCAN, WHILE  # noqa: F401 - the HOPs forms ask for
from fuzzer.program.form_record import custom_call, custom_form, infer_same2, op_text, py_dim
from fuzzer.program.sizes import Dims
from fuzzer.program.storage import Affine
from fuzzer.program.strided_forms import DTYPE_VIEW_FORMS, STRIDED_FORMS, STRIDED_VIEWS  # noqa: F401
from fuzzer.program.swap_forms import STORAGE_SWAPS, SWAP_FORMS  # noqa: F401
from fuzzer.program.tensor_forms import INDEXING, INDEXING_FORMS, VIEW_FORMS, VIEWS  # noqa: F401
from fuzzer.program.int_forms import INT_FORMS
from fuzzer.program.op_snippets import FIRST


def _slice_text(arg: str, dim: int, stop: str) -> str:
    return f"{arg}[{':, ' * dim}: {stop}]"


# ------------------------------------------------------------------- aten forms

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




def _infer_head_pos(t, attrs, m):
    if len(t[0]) != 1:
        raise Illegal("head_pos takes a rank-1 operand")
    return data_size(attrs)




ATEN_FORMS: tuple[Form, ...] = (
    Form("add", ATEN, 2, infer_binary, lambda a, at, d: f"{a[0]} + {a[1]}"),
    Form("mul", ATEN, 2, infer_binary, lambda a, at, d: f"{a[0]} * {a[1]}"),
    Form("scale", ATEN, 1, lambda t, at, m: (const(at), t[0])[1],
         lambda a, at, d: f"{a[0]} * {at['c']}", draw=draw_const),
    Form("unary", ATEN, 1, infer_unary, lambda a, at, d: f"torch.{at['fn']}({a[0]})", draw=draw_fn),
    Form("sum", ATEN, 1, _infer_sum, lambda a, at, d: f"{a[0]}.sum({at['dim']})", draw=draw_dim),
    Form("clone", ATEN, 1, lambda t, at, m: t[0], lambda a, at, d: f"{a[0]}.clone()"),
    Form("head", VIEW, 1, _infer_head,
         lambda a, at, d: _slice_text(a[0], at["dim"], sizes.half(d[0][at["dim"]])), draw=draw_dim,
         footprint=lambda f, at, d: f.slice(at.get("dim", 0), Affine(), 1, d[at.get("dim", 0)])),
    Form("narrow", VIEW, 1, _infer_narrow,
         lambda a, at, d: f"{a[0]}.narrow({at['dim']}, 1, {py_dim(d[0][at['dim']])} - 1)", draw=draw_dim,
         footprint=lambda f, at, d: f.slice(at.get("dim", 0), Affine(1), 1, d[at.get("dim", 0)])),
    Form("transpose", VIEW, 1, _infer_transpose, lambda a, at, d: f"{a[0]}.transpose(0, 1)",
         footprint=lambda f, at, d: f.permute((1, 0) + tuple(range(2, len(d))))),
    Form("unsqueeze", VIEW, 1, lambda t, at, m: ("1",) + tuple(t[0]),
         lambda a, at, d: f"{a[0]}.unsqueeze(0)", footprint=lambda f, at, d: f.unsqueeze(0)),
    Form("add_", INPLACE, 2, infer_inplace_binary, lambda a, at, d: f"{a[0]}.add_({a[1]})",
         mutates=(0,), returns=False),
    Form("mul_", INPLACE, 1, infer_inplace_scale, lambda a, at, d: f"{a[0]}.mul_({at['c']})",
         mutates=(0,), returns=False, draw=draw_const),
    Form("copy_", INPLACE, 2, infer_inplace_binary, lambda a, at, d: f"{a[0]}.copy_({a[1]})",
         mutates=(0,), returns=False),
    # graph breaks the program asks for (fullgraph=False): not a reason to call it untested
    Form("graph_break", CONTROL, 0, lambda t, at, m: None, lambda a, at, d: "torch._dynamo.graph_break()",
         returns=False, feature="graph-break", grad=NO_BACKWARD),
    # sizes only the data knows: a nonzero-like selection, and an .item() feeding a view
    Form("select_pos", ATEN, 1, lambda t, at, m: data_size(at),
         lambda a, at, d: f"torch.masked_select({a[0]}, {a[0]} > 0)", feature="data-dependent", draw=draw_size),
    Form("head_pos", VIEW, 1, _infer_head_pos,
         lambda a, at, d: f"{a[0]}[: ({a[0]} > 0).sum().item()]", feature="data-dependent", draw=draw_size,
         footprint=lambda f, at, d: f.slice(0, Affine(), 1, d[0])),
)

#: binary forms whose second operand may broadcast into the first (the others take
#: two operands of the same dims)
BROADCAST_FORMS = frozenset({"add", "mul", "add_", "copy_", "where", "sub_", "lerp_"})


# ----------------------------------------------------------------- custom forms

def _infer_rowsum(t, attrs, m):
    need_rank(t[0], 1)
    return tuple(t[0][:-1])


def _infer_p_head(t, attrs, m):
    need_rank(t[0], 1)
    return (sizes.half(known_dim(t[0][0])),) + tuple(t[0][1:])


def _infer_rank1(result):
    def infer(t, attrs, m):
        need_rank(t[0], 1)
        return result(t)
    return infer


def _infer_take(t, attrs, m):
    if attrs.get("take") not in (0, 1):
        raise Illegal(f"take must be 0 or 1, got {attrs.get('take')!r}")
    return t[0]


#: the int and bool scalars ``p_affine`` is called with
INTS = (0, 1, 3)


def _draw_take(rng, dims, fresh) -> dict:
    return {"take": rng.randrange(2)}


def _draw_affine(rng, dims, fresh) -> dict:
    return dict(a=rng.choice(CONSTANTS), k=rng.choice(INTS), flag=rng.random() < 0.5)


def _infer_affine(t, attrs, m):
    const({"c": attrs.get("a")})
    if attrs.get("k") not in INTS or not isinstance(attrs.get("flag"), bool):
        raise Illegal(f"bad scalars {attrs!r}")
    return t[0]


def _render_affine(a, at, d):
    return f"{op_text('p_affine')}({a[0]}, {at['a']}, {at['k']}, {at['flag']}, {at['site']})"


def _render_cond(a, at, d):
    return (f"torch.cond({a[0]}.sum() > 0, lambda t: {op_text('p_sin')}(t, {at['site']}), "
            f"lambda t: {op_text('p_sin')}(t * 0.5, {at['site2']}), ({a[0]},))")


def region_function(name: str, site: int) -> str:
    """The ``nested_compile_region`` function that calls op ``name`` at ``site``: one per
    site, since Dynamo inlines a region called with a Python int (the site) rather
    than trace it as a subgraph; an identical call reuses its subgraph."""
    return f"in_region_{name}_{site}"


def _region_of(name: str):
    def render(a, at, d):
        return f"{region_function(name, at['site'])}({', '.join(a)})"
    return render


#: the ops a program may call inside ``torch.compiler.nested_compile_region``
REGION_OPS = ("p_sin", "e_tap", "m_scale")
#: the higher-order ops whose eager call is traced by Dynamo, branches and body: an
#: eager run of one cannot be recorded under a dispatch mode (``observe.reference_runs``),
#: and a ``mark_unbacked`` reaches its trace, which refuses it (``drawn_mode.draw``); the
#: repro's driver names them again (``fuzzer.render.driver``)
EAGER_TRACED = frozenset({COND, WHILE, SCAN, MAP})


def eager_traces(body) -> bool:
    """Whether statements ``body`` call a higher-order op that eager runs through Dynamo."""
    return any(form(s.form).hop in EAGER_TRACED for s in body)


#: the higher-order ops whose eager call compiles a function that a mark reaches and
#: that specialises the marked dims: eager ``scan`` compiles its ``combine_fn``, and
#: raises ``ConstraintViolationError`` for a dim marked dynamic (``GuardOnDataDependentSymNode``
#: for one marked unbacked), so a program with one has only ``maybe_mark_dynamic`` marks
EAGER_SPECIALISED = frozenset({SCAN})


def mark_substitutes(body) -> dict[str, str]:
    """The marks (``mode.MARKS``) an eager run of ``body`` cannot take, each with the
    one drawn in its place: under a ``scan``, only ``maybe``; under another op eager
    traces, or a user's op that takes a size as a plain int (``Form.specialises``),
    ``dynamic`` for ``unbacked``; else none."""
    if any(form(s.form).hop in EAGER_SPECIALISED for s in body):
        return {"dynamic": "maybe", "unbacked": "maybe"}
    if eager_traces(body) or any(form(s.form).specialises for s in body):
        return {"unbacked": "dynamic"}
    return {}


CUSTOM_FORMS: tuple[Form, ...] = (
    custom_form(FIRST["p_sin"], 1, lambda t, at, m: t[0]),
    custom_form(FIRST["p_mix"], 2, infer_same2(True)),
    custom_form(FIRST["p_rowsum"], 1, _infer_rowsum),
    custom_form(FIRST["p_head"], 1, _infer_p_head, extra=lambda d, at: py_dim(sizes.half(d[0][0]))),
    custom_form(FIRST["m_addto"], 2, infer_same2(False), mutates=(0,)),
    custom_form(FIRST["m_scale"], 1, lambda t, at, m: None, mutates=(0,)),
    custom_form(FIRST["m_shift"], 2, lambda t, at, m: (need_rank(t[0], 1), same_dims(t[0], t[1]))[1],
            mutates=(0,)),
    custom_form(FIRST["m_cumrow"], 1, _infer_rank1(lambda t: None), mutates=(0,)),
    custom_form(FIRST["m_swap"], 2, lambda t, at, m: (need_rank(t[0], 1), same_dims(t[0], t[1]))[1][1:],
            mutates=(0, 1)),
    custom_form(FIRST["e_log"], 1, lambda t, at, m: None),
    custom_form(FIRST["e_tap"], 1, lambda t, at, m: t[0]),
    # richer signatures
    custom_form(FIRST["p_pair"], 1, _infer_take, feature="signatures",
            render=lambda a, at, d: f"{op_text('p_pair')}({a[0]}, {at['site']})[{at['take']}]", draw=_draw_take),
    custom_form(FIRST["p_opt"], 2, infer_same2(True), feature="signatures"),
    custom_form(FIRST["p_opt"], 1, lambda t, at, m: t[0], form="p_opt_none", feature="signatures",
            render=lambda a, at, d: f"{op_text('p_opt')}({a[0]}, None, {at['site']})"),
    custom_form(FIRST["p_affine"], 1, _infer_affine, feature="signatures", render=_render_affine, draw=_draw_affine),
    custom_form(FIRST["p_pos"], 1, lambda t, at, m: data_size(at), feature="data-dependent", grad=NO_BACKWARD, draw=draw_size),
    custom_form(FIRST["m_list"], 2, infer_same2(False), mutates=(0, 1), feature="signatures",
            render=lambda a, at, d: f"{op_text('m_list')}([{a[0]}, {a[1]}], {at['site']})"),
    custom_form(FIRST["m_unknown"], 2, infer_same2(True), mutates=(0, 1), feature="signatures"),
    # higher-order ops around custom calls; a cond is not opaque: the compiler computes
    # its predicate (a sum) and its false branch's operand (t * 0.5), so which call
    # runs, and on what, is the compiler's arithmetic
    dataclasses.replace(custom_form(FIRST["p_sin"], 1, lambda t, at, m: t[0], form="cond_sin", feature="hops",
                                render=_render_cond), branches=True, hop=COND, opaque=False),
    *(dataclasses.replace(
        custom_form(FIRST[name], 1, (lambda t, at, m: t[0]) if FIRST[name].returns else (lambda t, at, m: None),
                mutates=(0,) if FIRST[name].declaration == custom_ops.MUTATING else (),
                form=f"in_region_{name}", feature="hops", render=_region_of(name)), hop=REGION)
      for name in REGION_OPS),
)

#: the op families' forms (``fuzzer.program.families``) come after the first library's
CUSTOM_FORMS += families.FORMS
#: the strided views come last, then the storage swaps, the integer forms and the views
#: to other widths: a program without their features draws as before they existed
_ALL = (ATEN_FORMS + VIEW_FORMS + INDEXING_FORMS + CUSTOM_FORMS + STRIDED_FORMS + SWAP_FORMS + INT_FORMS
        + DTYPE_VIEW_FORMS)
FORMS: dict[str, Form] = {f.name: f for f in _ALL}

assert {f.custom for f in CUSTOM_FORMS} == set(custom_ops.BY_NAME), "every custom op needs a form"
assert len(FORMS) == len(_ALL), "form names are unique"


def add(new: Form) -> None:
    """Register a form defined at run time (a user's op, ``fuzzer.user``): the same one
    again is a no-op, another under a taken name an error."""
    old = FORMS.get(new.name)
    if old is not None and old.custom != new.custom:
        raise ValueError(f"statement form {new.name!r} is taken")
    FORMS[new.name] = new


def form(name: str) -> Form:
    try:
        return FORMS[name]
    except KeyError:
        hint = " (a user's op: load its module with --ops)" if "::" in name else ""
        raise Illegal(f"unknown statement form {name!r}{hint}") from None


def category_of(name: str) -> str:
    """A form's category: what its custom op declares, or its aten category."""
    return form(name).category
