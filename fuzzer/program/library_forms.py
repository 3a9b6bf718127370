"""The statement forms that call the first custom-op library (``fuzzer.program.op_snippets``):
one plain call per op, and those of two features: richer signatures (``signatures``: two
results, ``Tensor?``, scalars, a written ``Tensor[]``, ``mutates_args="unknown"``) and the
higher-order ops around a call (``hops``: a ``torch.cond`` of two calls, a call inside
``torch.compiler.nested_compile_region``).

A custom form's category is what its op declares (``form_record.custom_form``).  The op
families' forms are in their modules (``fuzzer.program.families``).
"""

from __future__ import annotations

from fuzzer.program import sizes
from fuzzer.program.aten_forms import DATA_DEPENDENT
from fuzzer.program.feature_record import Feature
from fuzzer.program.form_record import (
    CONSTANTS,
    COND,
    NO_BACKWARD,
    REGION,
    Form,
    Illegal,
    Shrink,
    attr_arguments,
    const,
    custom_form,
    data_size,
    draw_size,
    infer_none,
    infer_same,
    infer_same2,
    known_dim,
    need_rank,
    none_argument,
    op_text,
    py_dim,
    same_dims,
)
from fuzzer.program.op_record import MUTATING
from fuzzer.program.op_snippets import FIRST

SIGNATURES = "signatures"
HOPS = "hops"


def _hops_unavailable() -> str | None:
    """Higher-order ops need ``torch.cond`` and ``torch.compiler.nested_compile_region``."""
    import torch

    if not hasattr(torch, "cond") or not hasattr(torch.compiler, "nested_compile_region"):
        return "this torch lacks torch.cond or torch.compiler.nested_compile_region"
    return None


FEATURES: tuple[Feature, ...] = (
    Feature(SIGNATURES, 0.4, "custom ops with two results, Tensor?, float/int/bool scalars, Tensor[] "
            "written, mutates_args='unknown'"),
    Feature(HOPS, 0.15, "torch.cond branches and torch.compiler.nested_compile_region around custom calls",
            unavailable=_hops_unavailable),
)


def _infer_rowsum(t, attrs, m):
    need_rank(t[0], 1)
    return tuple(t[0][:-1])


def _infer_p_head(t, attrs, m):
    need_rank(t[0], 1)
    return (sizes.half(known_dim(t[0][0])),) + tuple(t[0][1:])


def _extra_p_head(dims, attrs) -> str:
    return py_dim(sizes.half(dims[0][0]))


def _infer_shift(t, attrs, m):
    need_rank(t[0], 1)
    return same_dims(t[0], t[1])


def _infer_cumrow(t, attrs, m):
    need_rank(t[0], 1)
    return None


def _infer_swap(t, attrs, m):
    need_rank(t[0], 1)
    return same_dims(t[0], t[1])[1:]


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


def _infer_pos(t, attrs, m):
    return data_size(attrs)


def _render_pair(a, at, d):
    return f"{op_text('p_pair')}({a[0]}, {at['site']})[{at['take']}]"


def _render_list(a, at, d):
    return f"{op_text('m_list')}([{a[0]}, {a[1]}], {at['site']})"


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


def _in_region(name: str) -> Form:
    """The call of op ``name`` inside its ``nested_compile_region`` function, which
    shrinks to the bare call."""
    op = FIRST[name]
    return custom_form(op, 1, infer_same if op.returns else infer_none,
                       mutates=(0,) if op.declaration == MUTATING else (), form=f"in_region_{name}", feature=HOPS,
                       render=_region_of(name), hop=REGION, shrink=Shrink((name,)))


#: a pure call that shrinks to the plainest one, ``p_sin``
TO_SIN = Shrink(("p_sin",))
#: a mutating call that shrinks to a write of its first operand from a second, then alone
TO_ADDTO = Shrink(("m_addto", "m_scale"))

# each op toward the plainest op of its declared kind (pure ``p_sin``, mutating
# ``m_scale``, effectful ``e_log``), through ``m_addto`` where it reads a second operand
FORMS: tuple[Form, ...] = (
    custom_form(FIRST["p_sin"], 1, infer_same, shrink=Shrink(complexity=0)),
    custom_form(FIRST["p_mix"], 2, infer_same2(True), shrink=TO_SIN),
    custom_form(FIRST["p_rowsum"], 1, _infer_rowsum, shrink=TO_SIN),
    custom_form(FIRST["p_head"], 1, _infer_p_head, extra=_extra_p_head, shrink=TO_SIN),
    custom_form(FIRST["m_addto"], 2, infer_same2(False), mutates=(0,), shrink=Shrink(("m_scale",), 1)),
    custom_form(FIRST["m_scale"], 1, infer_none, mutates=(0,), shrink=Shrink(complexity=0)),
    custom_form(FIRST["m_shift"], 2, _infer_shift, mutates=(0,), shrink=TO_ADDTO),
    custom_form(FIRST["m_cumrow"], 1, _infer_cumrow, mutates=(0,), shrink=Shrink(("m_scale",))),
    custom_form(FIRST["m_swap"], 2, _infer_swap, mutates=(0, 1), shrink=TO_ADDTO),
    custom_form(FIRST["e_log"], 1, infer_none, shrink=Shrink(complexity=0)),
    custom_form(FIRST["e_tap"], 1, infer_same, shrink=Shrink(("e_log",))),
    # richer signatures
    custom_form(FIRST["p_pair"], 1, _infer_take, feature=SIGNATURES, render=_render_pair, draw=_draw_take,
                shrink=TO_SIN),
    custom_form(FIRST["p_opt"], 2, infer_same2(True), feature=SIGNATURES, shrink=Shrink(("p_opt_none", "p_sin"))),
    custom_form(FIRST["p_opt"], 1, infer_same, form="p_opt_none", feature=SIGNATURES, extra=none_argument,
                shrink=TO_SIN),
    custom_form(FIRST["p_affine"], 1, _infer_affine, feature=SIGNATURES, extra=attr_arguments("a", "k", "flag"),
                draw=_draw_affine, shrink=TO_SIN),
    custom_form(FIRST["p_pos"], 1, _infer_pos, feature=DATA_DEPENDENT, grad=NO_BACKWARD, draw=draw_size),
    custom_form(FIRST["m_list"], 2, infer_same2(False), mutates=(0, 1), feature=SIGNATURES, render=_render_list,
                shrink=Shrink(("m_scale",))),
    custom_form(FIRST["m_unknown"], 2, infer_same2(True), mutates=(0, 1), feature=SIGNATURES, shrink=TO_ADDTO),
    # higher-order ops around custom calls, toward the bare call; a cond is not opaque:
    # the compiler computes its predicate (a sum) and its false branch's operand
    # (t * 0.5), so which call runs, and on what, is the compiler's arithmetic
    custom_form(FIRST["p_sin"], 1, infer_same, form="cond_sin", feature=HOPS, render=_render_cond, branches=True,
                hop=COND, opaque=False, shrink=TO_SIN),
    *(_in_region(name) for name in REGION_OPS),
)
