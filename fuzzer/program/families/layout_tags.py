"""Ops whose kernels read their arguments' strides, under the layout tags that promise
them those strides (features ``layout-tags`` and ``layout-default``).

A custom op's tag tells Inductor what layout its kernel must be handed (torch's
``tags.yaml``): ``needs_exact_strides`` "the same strides as observed in eager",
``needs_fixed_stride_order`` "the same stride permutation as observed in eager",
``needs_contiguous_strides`` contiguous tensors, ``flexible_layout`` any strides and
storage offset; with several, "the most restrictive one"; an untagged custom op gets
``torch._functorch.config.custom_op_default_layout_constraint`` (``needs_exact_strides``
in 2.13 and 2.14).  Inductor restrides an argument that does not fit (a copy, written
back after a kernel that writes it: ``GraphLowering.propagate_mutation``).

The kernels here read what their tag promises them, as a kernel that walks its raw
buffer does, so a layout other than the promised one changes what they compute:

* a *delta code over what is stored where* (each element less half the element stored
  just before it in the buffer, none across a gap: ``_l_stored_delta``): ``l_exact``,
  ``l_default`` (untagged) and the in-place ``l_exact_``.  It depends on the strides of
  the dims longer than 1 (those Inductor compares, ``significant_strides_equal``), which
  exact strides promise; ``l_exact`` and ``l_default`` lay their result out as the
  argument is (``torch.empty_like``, the fake's too), so their result's strides follow
  the argument's as well;
* a *delta code in memory order* (each element less half the one before it in the
  order of the strides, gaps skipped: ``_l_memory_delta``): ``l_order``, ``l_most``
  (tagged ``flexible_layout`` and ``needs_fixed_stride_order``: the second governs) and
  the in-place ``l_order_``.  It depends on the order of the strides of the dims longer
  than 1 only, which a fixed stride order promises (dims of stride 0 hold one value
  along them, so their order among themselves changes nothing);
* ``l_raw`` reads its buffer as if contiguous, after checking it is (as a kernel's
  ``TORCH_CHECK`` does): programs hand it ``x.contiguous()``, so eager meets its tag;
* ``l_cols`` (``flexible_layout``) reads nothing of its argument's layout, and returns
  a column-major result (``torch.empty_strided``, the fake's too) whatever it is handed.

A ``flexible_layout`` op whose result depends on the layout would lie about itself
(the compiler may hand it any strides), so the library has none; the contract
(``fuzzer.judge.contract``, LAYOUT TAGS) says what each tag keeps.  ``l_default`` reads
what the release's default promises only where that default is ``needs_exact_strides``
(:func:`default_tag`): elsewhere its feature is off and the op is not registered.
The pure ops have a backward (``register_autograd``, kept apart: ``CustomOp.backward``),
as a library's layout-sensitive kernel trains: a stride-reading op's backward calls an op
of the same tags (``l_exact_grad``, ``l_order_grad``...) on the argument it saved, whose
kernel reads that argument's layout as the forward's did (its code's gradient: each
element's gradient less half that of the element its code subtracts it from), so the tag
promises the backward's kernel eager's layout too; ``l_raw``'s backward hands its
contiguous kernel the incoming gradient made contiguous, ``l_cols``' is a formula.  The
ops in place have none, and no op an effect.
"""

from __future__ import annotations

from fuzzer.program.feature_record import Feature
from fuzzer.program.form_record import (
    Form,
    Shrink,
    custom_form,
    infer_none,
    infer_same,
    need_rank,
    op_text,
)
from fuzzer.program.op_record import MUTATING, PURE, CustomOp

FEATURE = "layout-tags"
DEFAULT_FEATURE = "layout-default"
#: the layout tags, most restrictive first (``torch._library.utils.tags_by_priority``)
TAGS = ("needs_exact_strides", "needs_contiguous_strides", "needs_fixed_stride_order", "flexible_layout")
#: the default ``l_default``'s kernel needs: it reads its argument's exact strides
EXACT = TAGS[0]


def default_tag() -> str | None:
    """What layout an untagged custom op gets on this torch
    (``torch._functorch.config.custom_op_default_layout_constraint``), or None where the
    release has no such setting."""
    from torch._functorch import config

    return getattr(config, "custom_op_default_layout_constraint", None)


def unavailable() -> str | None:
    """Why this torch has no layout tags: ``torch.Tag`` lacks one of them."""
    import torch

    missing = [tag for tag in TAGS if not hasattr(torch.Tag, tag)]
    return f"this torch.Tag has no {', '.join(missing)}" if missing else None


def default_unavailable() -> str | None:
    """Why ``l_default``'s kernel would lie here: the tags are missing, or the default an
    untagged op gets does not promise the exact strides it reads."""
    missing = unavailable()
    if missing is not None:
        return missing
    default = default_tag()
    if default != EXACT:
        return (f"this torch gives an untagged custom op {default or 'no layout setting'}, which does not "
                "promise the exact strides l_default reads")
    return None


FEATURES: tuple[Feature, ...] = (
    Feature(FEATURE, 0.3, "custom ops tagged with a layout (needs_exact_strides, needs_fixed_stride_order, "
            "needs_contiguous_strides, flexible_layout, two at once) whose kernels read their arguments' "
            "strides as their tag promises (a delta code over the buffer in memory order, a raw contiguous "
            "read), pure and in place, results laid out as their argument or column-major; implies layouts",
            implies=("layouts",), unavailable=unavailable),
    Feature(DEFAULT_FEATURE, 0.2, "an untagged custom op whose kernel reads its argument's exact strides, as "
            "the release's default layout for custom ops promises (custom_op_default_layout_constraint); "
            "implies layouts", implies=("layouts",), unavailable=default_unavailable),
)

#: the kernels' readings of their buffer, each pasted into the snippets that use it (a
#: snippet carries all it runs: a repro registers only the ops it calls).  By the order
#: of the strides of the dims longer than 1: what a fixed stride order keeps.
_MEMORY_DELTA = '''
def _l_memory_order(x):
    """x's dims, outermost in memory first: the dims longer than 1 by stride, then the rest."""
    long = sorted((d for d in range(x.dim()) if x.size(d) > 1), key=lambda d: -x.stride(d))
    return long + [d for d in range(x.dim()) if x.size(d) <= 1]


def _l_memory_delta(x):
    """Each element less half the one before it in memory: a delta code over x's buffer."""
    order = _l_memory_order(x)
    flat = x.permute(order).reshape(-1)
    out = flat.clone()
    out[1:] -= 0.5 * flat[:-1]
    return out.view([x.size(d) for d in order]).permute([order.index(d) for d in range(x.dim())])
'''
#: by where each element is stored: what exact strides keep (the strides of the dims
#: longer than 1; a gap or a padded row changes which element is stored before another)
_STORED_DELTA = '''
def _l_stored_at(x):
    """Where each element of x is stored in its buffer, less its offset, plus 1."""
    at = torch.zeros((), dtype=torch.long, device=x.device)
    for d in range(x.dim()):
        steps = torch.arange(x.size(d), device=x.device) * x.stride(d)
        at = at + steps.view([-1 if k == d else 1 for k in range(x.dim())])
    return at.expand(x.shape) + 1


def _l_stored_neighbour(x, values, step):
    """values (of x's shape) of the element stored step places from each of x's in its
    buffer (0 where none of x's is stored there: the start, the end, a gap between rows)."""
    at = _l_stored_at(x)
    stored = values.new_zeros(int(at.max()) + 2)
    held = torch.zeros(stored.shape, dtype=torch.bool, device=x.device)
    stored[at] = values
    held[at] = True
    return torch.where(held[at + step], stored[at + step], torch.zeros_like(values))


def _l_stored_delta(x):
    """Each element less half the one stored just before it in x's buffer."""
    if x.numel() == 0:
        return x.clone()
    return x - 0.5 * _l_stored_neighbour(x, x, -1)
'''


#: the gradients of the two codes at ``x`` (each linear: the gradient of an element is
#: its own less half that of the element its code subtracts it from), read off ``x``'s
#: layout as the code is and off ``grad``'s values only
_GRADS = {"_l_memory_delta": '''
def _l_memory_delta_grad(x, grad):
    """grad less half the gradient after it in x's memory order."""
    order = _l_memory_order(x)
    flat = grad.permute(order).reshape(-1)
    out = flat.clone()
    out[:-1] -= 0.5 * flat[1:]
    return out.view([x.size(d) for d in order]).permute([order.index(d) for d in range(x.dim())])
''', "_l_stored_delta": '''
def _l_stored_delta_grad(x, grad):
    """grad less half the gradient of the element stored just after each in x's buffer."""
    if x.numel() == 0:
        return grad.clone()
    return grad - 0.5 * _l_stored_neighbour(x, grad, 1)
'''}


def _backward(name: str, tags: str, code: str, laid_out: str, fake: str) -> str:
    """``name``'s backward, as a library's layout-sensitive kernel has one: an op of the
    same tags (so compiled code hands it ``x`` laid out as the forward's was) computing
    ``code``'s gradient, its result laid out as ``laid_out`` says and its fake alike."""
    return _GRADS[code] + f'''

@torch.library.custom_op("dcefuzz::{name}_grad", mutates_args=(){tags})
def {name}_grad(x: torch.Tensor, grad: torch.Tensor) -> torch.Tensor:
    return {laid_out.format(value=f"{code}_grad(x, grad)")}


@{name}_grad.register_fake
def _(x, grad):
    return {fake}


def _{name}_setup(ctx, inputs, output):
    ctx.save_for_backward(inputs[0])


def _{name}_backward(ctx, grad):
    (x,) = ctx.saved_tensors
    return torch.ops.dcefuzz.{name}_grad(x, grad), None


{name}.register_autograd(_{name}_backward, setup_context=_{name}_setup)
'''


def _op(name: str, declaration: str, doc: str, source: str, feature: str = FEATURE,
        helpers: str = _MEMORY_DELTA, backward: str = "") -> CustomOp:
    return CustomOp(name=name, declaration=declaration, source=(helpers + "\n\n" + source.strip("\n")).strip("\n")
                    + "\n", doc=doc, feature=feature, backward=backward.strip("\n") + "\n" if backward else "")


def _stored_backward(name: str, tags: str) -> str:
    """The backward of a stored delta laid out as its argument: its result too."""
    return _backward(name, tags, "_l_stored_delta", "torch.empty_like(x).copy_({value})", "torch.empty_like(x)")


def _memory_backward(name: str, tags: str) -> str:
    """The backward of a delta in memory order with a contiguous result: its result too."""
    return _backward(name, tags, "_l_memory_delta", "{value}.clone(memory_format=torch.contiguous_format)",
                     "x.new_empty(x.shape)")


def _laid_out_as_argument(name: str, tags: str) -> str:
    """A pure delta code over what is stored where, its result laid out as its argument."""
    return f'''
@torch.library.custom_op("dcefuzz::{name}", mutates_args=(){tags})
def {name}(x: torch.Tensor, site: int) -> torch.Tensor:
    _hit("{name}", site)
    out = torch.empty_like(x)
    return out.copy_(_l_stored_delta(x))


@{name}.register_fake
def _(x, site):
    return torch.empty_like(x)
'''


def _contiguous_result(name: str, tags: str) -> str:
    """A pure delta code in memory order with a fresh contiguous result."""
    return f'''
@torch.library.custom_op("dcefuzz::{name}", mutates_args=(), tags={tags})
def {name}(x: torch.Tensor, site: int) -> torch.Tensor:
    _hit("{name}", site)
    return _l_memory_delta(x).clone(memory_format=torch.contiguous_format)  # fresh: never a view


@{name}.register_fake
def _(x, site):
    return x.new_empty(x.shape)
'''


def _in_place(name: str, tag: str, delta: str) -> str:
    """A delta code (``_l_memory_delta`` or ``_l_stored_delta``) written into its argument."""
    return f'''
@torch.library.custom_op("dcefuzz::{name}", mutates_args=("a",), tags=(torch.Tag.{tag},))
def {name}(a: torch.Tensor, site: int) -> None:
    _hit("{name}", site)
    a.copy_({delta}(a))
'''


OPS: tuple[CustomOp, ...] = (
    _op("l_exact", PURE, "delta code over where each element is stored, result laid out as x (needs_exact_strides)",
        _laid_out_as_argument("l_exact", ", tags=(torch.Tag.needs_exact_strides,)"), helpers=_STORED_DELTA,
        backward=_stored_backward("l_exact", ", tags=(torch.Tag.needs_exact_strides,)")),
    _op("l_order", PURE, "delta code in memory order, contiguous result (needs_fixed_stride_order)",
        _contiguous_result("l_order", "(torch.Tag.needs_fixed_stride_order,)"),
        backward=_memory_backward("l_order", ", tags=(torch.Tag.needs_fixed_stride_order,)")),
    _op("l_most", PURE, "l_order tagged flexible_layout and needs_fixed_stride_order: the second governs",
        _contiguous_result("l_most", "(torch.Tag.flexible_layout, torch.Tag.needs_fixed_stride_order)"),
        backward=_memory_backward("l_most", ", tags=(torch.Tag.flexible_layout, torch.Tag.needs_fixed_stride_order)")),
    _op("l_raw", PURE, "delta code over the raw buffer read as contiguous, checked (needs_contiguous_strides)", '''
@torch.library.custom_op("dcefuzz::l_raw", mutates_args=(), tags=(torch.Tag.needs_contiguous_strides,))
def l_raw(x: torch.Tensor, site: int) -> torch.Tensor:
    _hit("l_raw", site)
    if not x.is_contiguous():
        raise RuntimeError(f"l_raw needs a contiguous tensor, got strides {x.stride()}")
    flat = x.as_strided((x.numel(),), (1,))
    out = x.clone(memory_format=torch.contiguous_format)  # fresh, and returned whole: never a view
    out.view(-1)[1:] -= 0.5 * flat[:-1]
    return out


@l_raw.register_fake
def _(x, site):
    return x.new_empty(x.shape)
''', helpers="", backward='''
@torch.library.custom_op("dcefuzz::l_raw_grad", mutates_args=(), tags=(torch.Tag.needs_contiguous_strides,))
def l_raw_grad(grad: torch.Tensor) -> torch.Tensor:
    if not grad.is_contiguous():
        raise RuntimeError(f"l_raw_grad needs a contiguous tensor, got strides {grad.stride()}")
    flat = grad.as_strided((grad.numel(),), (1,))
    out = grad.clone(memory_format=torch.contiguous_format)
    out.view(-1)[:-1] -= 0.5 * flat[1:]
    return out


@l_raw_grad.register_fake
def _(grad):
    return grad.new_empty(grad.shape)


def _l_raw_backward(ctx, grad):
    # as a library's backward hands its kernel the incoming gradient: made contiguous
    return torch.ops.dcefuzz.l_raw_grad(grad.contiguous()), None


l_raw.register_autograd(_l_raw_backward)
'''),
    _op("l_cols", PURE, "x less half its left neighbour along the last dim, column-major result (flexible_layout)",
        '''
def _l_column_major(size):
    """The strides of a tensor of ``size`` whose last two dims are laid out column-major."""
    stride, step = [1] * len(size), size[-2] * size[-1]
    stride[-1] = size[-2]
    for d in range(len(size) - 3, -1, -1):
        stride[d], step = step, step * size[d]
    return stride


@torch.library.custom_op("dcefuzz::l_cols", mutates_args=(), tags=(torch.Tag.flexible_layout,))
def l_cols(x: torch.Tensor, site: int) -> torch.Tensor:
    _hit("l_cols", site)
    out = torch.empty_strided(x.shape, _l_column_major(x.shape), dtype=x.dtype, device=x.device)
    return out.copy_(x - 0.5 * x.roll(1, -1))


@l_cols.register_fake
def _(x, site):
    return torch.empty_strided(x.shape, _l_column_major(x.shape), dtype=x.dtype, device=x.device)
''', helpers="", backward='''
def _l_cols_backward(ctx, grad):
    # the gradient of x - 0.5 * x.roll(1, -1), whatever grad's layout
    return grad - 0.5 * grad.roll(-1, -1), None


l_cols.register_autograd(_l_cols_backward)
'''),
    _op("l_exact_", MUTATING, "delta code over where each element is stored, written into a (needs_exact_strides)",
        _in_place("l_exact_", "needs_exact_strides", "_l_stored_delta"), helpers=_STORED_DELTA),
    _op("l_order_", MUTATING, "delta code in memory order written into a (needs_fixed_stride_order)",
        _in_place("l_order_", "needs_fixed_stride_order", "_l_memory_delta")),
    _op("l_default", PURE, "l_exact untagged: the release's default layout for custom ops",
        _laid_out_as_argument("l_default", ""), feature=DEFAULT_FEATURE, helpers=_STORED_DELTA,
        backward=_stored_backward("l_default", "")),
)

OP = {op.name: op for op in OPS}


def _render_contiguous(args, attrs, dims) -> str:
    """``l_raw`` on its operand made contiguous, as a library's wrapper calls its kernel."""
    return f"{op_text('l_raw')}({args[0]}.contiguous(), {attrs['site']})"


def _infer_matrix(t, attrs, m):
    need_rank(t[0], 2)
    return t[0]


def _pure(name: str, shrink: Shrink, **fields) -> Form:
    feature = OP[name].feature
    return custom_form(OP[name], 1, fields.pop("infer", infer_same), feature=feature, shrink=shrink, **fields)


# each toward the plain op of its kind (a tagged op toward the untagged one, then
# ``p_sin``; one in place toward ``m_scale``)
FORMS: tuple[Form, ...] = (
    _pure("l_exact", Shrink(("l_default", "p_sin"), 3)),
    _pure("l_order", Shrink(("l_exact", "l_default", "p_sin"), 3)),
    _pure("l_most", Shrink(("l_order", "l_exact", "l_default", "p_sin"), 3)),
    _pure("l_raw", Shrink(("p_sin",), 3), render=_render_contiguous),
    _pure("l_cols", Shrink(("p_sin",), 3), infer=_infer_matrix),
    custom_form(OP["l_exact_"], 1, infer_none, mutates=(0,), feature=FEATURE, shrink=Shrink(("m_scale",), 3)),
    custom_form(OP["l_order_"], 1, infer_none, mutates=(0,), feature=FEATURE,
                shrink=Shrink(("l_exact_", "m_scale"), 3)),
    _pure("l_default", Shrink(("p_sin",), 2)),
)
