"""Custom ops with a ``register_vmap`` rule, called under ``torch.func.vmap`` (feature
``vmap-rules``).

A library that wants its op to batch registers a vmap rule
(``CustomOpDef.register_vmap``): a Python function of ``(info, in_dims, *args)`` that
computes the whole batch and says where its batch dim is.  torch registers it at the
``FuncTorchBatched`` key (``torch._library.custom_ops``) and calls it through
``torch._functorch.autograd_function.custom_function_call_vmap_helper``, which hands
it the unwrapped tensors, and calls the op itself where no argument is batched at
that level.  Dynamo inlines ``torch.func.vmap`` (``trace_rules``: ``vmap_impl`` is a
``FunctorchHigherOrderVariable``), so the rule runs while the program is traced and
compiled code runs what it computed: the views it takes of the batch and one call of
the op on all of it.

The ops, each written as torch's own examples write a rule:

* ``v_sin`` (pure): elementwise, so the rule calls the op on the batch as it is and
  says the batch dim stays where it was;
* ``v_mix`` (pure, two operands): the rule moves each batch dim to the front and
  broadcasts an unbatched operand over the batch (``expand``), as the documentation's
  ``numpy_mul`` does;
* ``v_rowsum`` (pure): a reduction over the last dim; the rule moves the batch dim to
  the front, so the dim reduced is each example's last;
* ``v_scale`` (mutating): elementwise and in place, the whole batch written by one
  call;
* ``v_addto`` (mutating, ``a += b``): the rule moves ``a``'s batch dim to the front
  and broadcasts an unbatched ``b``; it raises where ``a`` is unbatched and ``b`` is
  not, as torch's own in-place ops do under vmap (the "vmap limitations" of
  ``torch.func``'s documentation), and the generator never draws that.

The forms call them under ``torch.func.vmap`` of a ``lambda`` that passes the call
site, over a drawn dim (``in_dims``) with the batch put where ``out`` says
(``out_dims``), one level or two (``vmap2_sin``), each operand batched or one row
broadcast to every example (``*_row``).  What compiled code must keep is what eager
under the same ``vmap`` computes: the existing clauses judge it.  The pure ops have a
backward (``register_autograd``, kept apart: ``CustomOp.backward``), as a library's op
that trains has: autograd records the call on the whole batch and the rule's views,
``backward()`` runs the formula on the batch; the mutating ops have none and read no value that requires grad.  The compiler
computes the rule's views, so a result is not opaque (``fuzzer.program.exact``).

Each form shrinks toward a loop over the batch (a ``torch.stack`` of the op's calls
on each example, or a ``for`` of writes; twins never drawn, for a batch dim that is at
least 1 in every binding, as an empty stack is no tensor), then toward the op called
on the whole tensor without vmap, then toward the first library's op of its kind.
"""

from __future__ import annotations

from fuzzer.program import sizes
from fuzzer.program.feature_record import Feature
from fuzzer.program.form_record import (
    TRANSFORM,
    TWIN,
    Form,
    Illegal,
    Shrink,
    custom_form,
    infer_none,
    infer_same,
    infer_same2,
    known_dim,
    op_text,
    same_dims,
)
from fuzzer.program.op_record import MUTATING, PURE, CustomOp, op_maker

FEATURE = "vmap-rules"


def _unavailable() -> str | None:
    """A vmap rule needs ``CustomOpDef.register_vmap`` and ``torch.func.vmap``."""
    import torch
    from torch._library.custom_ops import CustomOpDef

    if not hasattr(CustomOpDef, "register_vmap") or not hasattr(torch, "func"):
        return "this torch has no CustomOpDef.register_vmap or torch.func.vmap"
    return None


FEATURES: tuple[Feature, ...] = (
    Feature(FEATURE, 0.2, "custom ops with a register_vmap rule (pure, a reduction, two operands one of them "
            "maybe unbatched, in place) called under torch.func.vmap over a drawn dim, one level or two",
            unavailable=_unavailable),
)


_op = op_maker(FEATURE)


OPS: tuple[CustomOp, ...] = (
    _op("v_sin", PURE, "elementwise sin; its vmap rule calls it on the whole batch", '''
@torch.library.custom_op("dcefuzz::v_sin", mutates_args=())
def v_sin(x: torch.Tensor, site: int) -> torch.Tensor:
    _hit("v_sin", site)
    return torch.sin(x).contiguous()


@v_sin.register_fake
def _(x, site):
    return x.new_empty(x.shape)


@v_sin.register_vmap
def _v_sin_vmap(info, in_dims, x, site):
    # elementwise: one call on the whole batch, whose dim stays where it was
    return torch.ops.dcefuzz.v_sin(x, site), in_dims[0]
''', backward='''
def _v_sin_setup(ctx, inputs, output):
    ctx.save_for_backward(inputs[0])


def _v_sin_backward(ctx, grad):
    (x,) = ctx.saved_tensors
    return grad * torch.cos(x), None


v_sin.register_autograd(_v_sin_backward, setup_context=_v_sin_setup)
'''),
    _op("v_mix", PURE, "x * 0.5 + tanh(y); its vmap rule batches at the front and broadcasts an unbatched operand",
        '''
@torch.library.custom_op("dcefuzz::v_mix", mutates_args=())
def v_mix(x: torch.Tensor, y: torch.Tensor, site: int) -> torch.Tensor:
    _hit("v_mix", site)
    return (x * 0.5 + torch.tanh(y)).contiguous()


@v_mix.register_fake
def _(x, y, site):
    return x.new_empty(x.shape)


@v_mix.register_vmap
def _v_mix_vmap(info, in_dims, x, y, site):
    # each batch dim to the front; an operand without one broadcast over the batch
    x = x.movedim(in_dims[0], 0) if in_dims[0] is not None else x.expand(info.batch_size, *x.shape)
    y = y.movedim(in_dims[1], 0) if in_dims[1] is not None else y.expand(info.batch_size, *y.shape)
    return torch.ops.dcefuzz.v_mix(x, y, site), 0
''', backward='''
def _v_mix_setup(ctx, inputs, output):
    ctx.save_for_backward(inputs[1])


def _v_mix_backward(ctx, grad):
    (y,) = ctx.saved_tensors
    return grad * 0.5, grad * (1 - torch.tanh(y) ** 2), None


v_mix.register_autograd(_v_mix_backward, setup_context=_v_mix_setup)
'''),
    _op("v_rowsum", PURE, "sum over the last dim; its vmap rule moves the batch dim to the front", '''
@torch.library.custom_op("dcefuzz::v_rowsum", mutates_args=())
def v_rowsum(x: torch.Tensor, site: int) -> torch.Tensor:
    _hit("v_rowsum", site)
    return x.sum(-1).contiguous()


@v_rowsum.register_fake
def _(x, site):
    return x.new_empty(x.shape[:-1])


@v_rowsum.register_vmap
def _v_rowsum_vmap(info, in_dims, x, site):
    # the batch dim to the front, so the last dim is each example's last
    return torch.ops.dcefuzz.v_rowsum(x.movedim(in_dims[0], 0), site), 0
''', backward='''
def _v_rowsum_setup(ctx, inputs, output):
    ctx.shape = inputs[0].shape


def _v_rowsum_backward(ctx, grad):
    return grad.unsqueeze(-1).expand(ctx.shape).contiguous(), None


v_rowsum.register_autograd(_v_rowsum_backward, setup_context=_v_rowsum_setup)
'''),
    _op("v_scale", MUTATING, "a = a * 0.5 + 1 in place; its vmap rule writes the whole batch in one call", '''
@torch.library.custom_op("dcefuzz::v_scale", mutates_args=("a",))
def v_scale(a: torch.Tensor, site: int) -> None:
    _hit("v_scale", site)
    a.mul_(0.5).add_(1.0)


@v_scale.register_fake
def _(a, site):
    return None


@v_scale.register_vmap
def _v_scale_vmap(info, in_dims, a, site):
    # elementwise and in place: the whole batch written by one call
    torch.ops.dcefuzz.v_scale(a, site)
    return None, None
'''),
    _op("v_addto", MUTATING, "a += b; its vmap rule refuses a batched b into an unbatched a", '''
@torch.library.custom_op("dcefuzz::v_addto", mutates_args=("a",))
def v_addto(a: torch.Tensor, b: torch.Tensor, site: int) -> None:
    _hit("v_addto", site)
    a.add_(b)


@v_addto.register_fake
def _(a, b, site):
    return None


@v_addto.register_vmap
def _v_addto_vmap(info, in_dims, a, b, site):
    # as torch's in-place ops under vmap: a batch cannot be written into a tensor without one
    if in_dims[0] is None:
        raise ValueError("vmap: v_addto cannot write a batched b into an unbatched a")
    a = a.movedim(in_dims[0], 0)
    b = b.movedim(in_dims[1], 0) if in_dims[1] is not None else b.expand(a.shape)
    torch.ops.dcefuzz.v_addto(a, b, site)
    return None, None
'''),
)

OP = {op.name: op for op in OPS}


# ------------------------------------------------------------------ typing

def _batch_dim(dims, attrs, m, key: str = "dim") -> int:
    """The batch dim ``attrs[key]`` of ``dims``: in range, not a size only the data knows."""
    d = attrs.get(key)
    if not isinstance(d, int) or not 0 <= d < len(dims):
        raise Illegal(f"{key} {d!r} out of range for rank {len(dims)}")
    known_dim(dims[d])
    return d


def _out_dim(attrs, rank: int) -> int:
    """Where the batch dim goes in a result of ``rank`` dims (``out_dims``)."""
    o = attrs.get("out")
    if not isinstance(o, int) or not 0 <= o < rank:
        raise Illegal(f"out {o!r} out of range for rank {rank}")
    return o


def _moved(dims, d: int, o: int):
    """``dims`` with dim ``d`` moved to position ``o``."""
    rest = list(dims[:d]) + list(dims[d + 1:])
    return tuple(rest[:o] + [dims[d]] + rest[o:])


def _infer_map(t, attrs, m):
    """An elementwise op vmapped over ``dim``, its batch put at ``out``."""
    d = _batch_dim(t[0], attrs, m)
    return _moved(t[0], d, _out_dim(attrs, len(t[0])))


def _infer_mix(t, attrs, m):
    same_dims(t[0], t[1])
    return _infer_map(t, attrs, m)


def _infer_row(t, attrs, m):
    """The first operand batched at dim 0, the second one of its rows, the same for
    every example."""
    if not _rows(t):
        raise Illegal(f"{t[1]} is not a row of {t[0]}")
    return _moved(t[0], _batch_dim(t[0], {"dim": 0}, m), _out_dim(attrs, len(t[0])))


def _infer_rowsum(t, attrs, m):
    """Each example summed over its last dim: the batch dim, then the examples' dims
    but their last, the batch put at ``out``."""
    if len(t[0]) < 2:
        raise Illegal("a vmapped sum over the last dim needs rank >= 2")
    d = _batch_dim(t[0], attrs, m)
    kept = (list(t[0][:d]) + list(t[0][d + 1:]))[:-1]
    o = _out_dim(attrs, len(kept) + 1)
    return tuple(kept[:o] + [t[0][d]] + kept[o:])


def _infer_nested(t, attrs, m):
    """Two levels: the outer over ``dim``, the inner over ``inner`` of each outer
    example; both batches at the front, the outer's first."""
    if len(t[0]) < 2:
        raise Illegal("two levels of vmap need rank >= 2")
    d = _batch_dim(t[0], attrs, m)
    example = tuple(t[0][:d]) + tuple(t[0][d + 1:])
    e = _batch_dim(example, attrs, m, "inner")
    return (t[0][d],) + _moved(example, e, 0)


def _infer_write(t, attrs, m):
    _batch_dim(t[0], attrs, m)
    return None


def _infer_write2(t, attrs, m):
    same_dims(t[0], t[1])
    return _infer_write(t, attrs, m)


def _infer_write_row(t, attrs, m):
    if not _rows(t):
        raise Illegal(f"{t[1]} is not a row of {t[0]}")
    _batch_dim(t[0], {"dim": 0}, m)
    return None


def _rows(operands) -> bool:
    """``Form.fits`` of a row form: a first operand of rank >= 1, a second one of its rows."""
    return bool(operands[0]) and (len(operands) < 2 or tuple(operands[1]) == tuple(operands[0][1:]))


def _rowsum_dims(t, attrs, m):
    """The op's own typing, on the whole tensor: a sum over the last dim."""
    if not t[0]:
        raise Illegal("a sum over the last dim needs rank >= 1")
    return t[0][:-1]


def _looped(infer, row: bool = False):
    """A loop's typing: the vmap's, over a batch (dim 0 of a row form's) of at least 1
    in every binding."""
    def typed(t, attrs, m):
        dims = infer(t, attrs, m)
        d = 0 if row else attrs.get("dim", 0)
        if sizes.smallest(known_dim(t[0][d]), m) < 1:
            raise Illegal(f"a loop over dim {t[0][d]!r} needs it >= 1 in every binding")
        return dims
    return typed


# ------------------------------------------------------------------ draws and text

def _draw(least: int, **spans: int):
    """The attributes' draw: each key a dim of the operand, of its rank plus its span
    (``out`` of a reduction has one dim fewer), for an operand of rank ``least`` or more."""
    def draw(rng, dims, fresh) -> dict:
        if len(dims) < least:
            raise Illegal(f"needs rank >= {least}")
        return {key: rng.randrange(len(dims) + span) for key, span in spans.items()}
    return draw


def _lambda(op: str, params: str, site) -> str:
    return f"lambda {params}: {op_text(op)}({params}, {site})"


def _render(op: str, params: str, in_dims: str, out_dims: str = "{out}"):
    """``torch.func.vmap`` of a lambda that calls ``op`` on ``params`` with the site, its
    ``in_dims`` and ``out_dims`` templates filled from the statement's attributes."""
    def render(a, at, d):
        return (f"torch.func.vmap({_lambda(op, params, at['site'])}, in_dims={in_dims.format(**at)}, "
                f"out_dims={out_dims.format(**at)})({', '.join(a)})")
    return render


def _render_nested(a, at, d):
    inner = f"torch.func.vmap({_lambda('v_sin', 't', at['site'])}, in_dims={at['inner']})"
    return f"torch.func.vmap({inner}, in_dims={at['dim']})({a[0]})"


def _examples(a, at, row: bool) -> tuple[str, str, list[str]]:
    """(the batch dim, the loop's bound, each operand's example ``i``) of a loop."""
    dim = 0 if row else at["dim"]
    picked = [f"{a[0]}.select({dim}, i)"] + ([a[1]] if row else [f"{x}.select({dim}, i)" for x in a[1:]])
    return str(dim), f"range({a[0]}.shape[{dim}])", picked


def _render_stack(op: str, row: bool = False):
    """The loop a vmap of a pure op shrinks to: each example's call, stacked at ``out``."""
    def render(a, at, d):
        _, bound, picked = _examples(a, at, row)
        return f"torch.stack([{op_text(op)}({', '.join(picked)}, {at['site']}) for i in {bound}], {at['out']})"
    return render


def _render_for(op: str, row: bool = False):
    """The loop a vmap of a mutating op shrinks to: each example written by a call."""
    def render(a, at, d):
        _, bound, picked = _examples(a, at, row)
        return f"for i in {bound}: {op_text(op)}({', '.join(picked)}, {at['site']})"
    return render


# ------------------------------------------------------------------ forms

#: the attributes a vmap keeps as it becomes a loop (``Shrink.keeps``)
KEPT = ("dim", "out")


def _to(*simpler: str, complexity: int = 5) -> Shrink:
    """What a vmap (complexity 5; two levels, 6) or its loop (4) shrinks to, its batch
    dim and where its result puts it kept: each reads as more complicated than what it
    becomes, down to the bare call."""
    return Shrink(simpler, complexity, keeps=KEPT)


def _vmap(op: str, arity: int, infer, render, form: str, draw, shrink: Shrink, **fields) -> Form:
    """A form calling ``op`` under ``torch.func.vmap``: drawn as a transform, a backward
    where the op is pure, not opaque (the compiler computes the rule's views)."""
    return custom_form(OP[op], arity, infer, form=form, feature=FEATURE, render=render, draw=draw,
                       drawn_as=TRANSFORM, opaque=False, shrink=shrink, **fields)


def _loop(op: str, arity: int, infer, render, form: str, simpler: str, row: bool = False, **fields) -> Form:
    """The loop over the batch a vmap shrinks to: a twin, never drawn."""
    return custom_form(OP[op], arity, _looped(infer, row), form=form, feature=FEATURE, render=render,
                       drawn_as=TWIN, opaque=False, shrink=_to(simpler, complexity=4), **fields)


def _plain(op: str, arity: int, infer, simpler: str, complexity: int, **fields) -> Form:
    """The op called on the whole tensor, without vmap: a twin, never drawn, one step
    more complicated than the first library's op it shrinks to."""
    return custom_form(OP[op], arity, infer, feature=FEATURE, drawn_as=TWIN,
                       shrink=Shrink((simpler,), complexity), **fields)


FORMS: tuple[Form, ...] = (
    _vmap("v_sin", 1, _infer_map, _render("v_sin", "t", "{dim}"), "vmap_sin", _draw(1, dim=0, out=0),
          _to("loop_sin", "v_sin")),
    _vmap("v_mix", 2, _infer_mix, _render("v_mix", "a, b", "({dim}, {dim})"), "vmap_mix", _draw(1, dim=0, out=0),
          _to("loop_mix", "v_mix")),
    _vmap("v_mix", 2, _infer_row, _render("v_mix", "a, b", "(0, None)"), "vmap_mix_row", _draw(1, out=0),
          _to("loop_mix_row"), fits=_rows),
    _vmap("v_rowsum", 1, _infer_rowsum, _render("v_rowsum", "t", "{dim}"), "vmap_rowsum", _draw(2, dim=0, out=-1),
          _to("loop_rowsum", "v_rowsum")),
    _vmap("v_sin", 1, _infer_nested, _render_nested, "vmap2_sin", _draw(2, dim=0, inner=-1),
          _to("vmap_sin", complexity=6)),
    _vmap("v_scale", 1, _infer_write, _render("v_scale", "t", "{dim}", "None"), "vmap_scale", _draw(1, dim=0),
          _to("loop_scale", "v_scale"), mutates=(0,)),
    _vmap("v_addto", 2, _infer_write2, _render("v_addto", "a, b", "({dim}, {dim})", "None"), "vmap_addto",
          _draw(1, dim=0), _to("loop_addto", "v_addto"), mutates=(0,)),
    _vmap("v_addto", 2, _infer_write_row, _render("v_addto", "a, b", "(0, None)", "None"), "vmap_addto_row", None,
          _to("loop_addto_row"), mutates=(0,), fits=_rows),
    # each example's call: a row form's loop stays one (the bare op takes operands of one shape)
    _loop("v_sin", 1, _infer_map, _render_stack("v_sin"), "loop_sin", "v_sin"),
    _loop("v_mix", 2, _infer_mix, _render_stack("v_mix"), "loop_mix", "v_mix"),
    _loop("v_mix", 2, _infer_row, _render_stack("v_mix", row=True), "loop_mix_row", "v_mix", row=True, fits=_rows),
    _loop("v_rowsum", 1, _infer_rowsum, _render_stack("v_rowsum"), "loop_rowsum", "v_rowsum"),
    _loop("v_scale", 1, _infer_write, _render_for("v_scale"), "loop_scale", "v_scale", mutates=(0,)),
    _loop("v_addto", 2, _infer_write2, _render_for("v_addto"), "loop_addto", "v_addto", mutates=(0,)),
    _loop("v_addto", 2, _infer_write_row, _render_for("v_addto", row=True), "loop_addto_row", "v_addto", row=True,
          mutates=(0,), fits=_rows),
    # the op on the whole tensor, one step above the first library's op of its kind
    _plain("v_sin", 1, infer_same, "p_sin", 1),
    _plain("v_mix", 2, infer_same2(True), "p_mix", 3),
    _plain("v_rowsum", 1, _rowsum_dims, "p_rowsum", 3),
    _plain("v_scale", 1, infer_none, "m_scale", 1, mutates=(0,)),
    _plain("v_addto", 2, infer_same2(False), "m_addto", 2, mutates=(0,)),
)
