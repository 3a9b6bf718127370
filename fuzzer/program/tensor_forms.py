"""The views and indexing of the tensor API, as statement forms.

Beyond the handful of aten forms in ``aten_forms``: torch's documented view ops ("Tensor
Views") that alias their operand for every layout, and the indexing and in-place ops
of the tensor API, each under a feature of its own (``views``, ``indexing``) so that a
program without those features is drawn as before they existed.
"""

from __future__ import annotations

from fuzzer.program import sizes
from fuzzer.program.feature_record import Feature
from fuzzer.program.storage import Affine
from fuzzer.program.form_record import (
    ATEN,
    INPLACE,
    VIEW,
    Form,
    Illegal,
    dim_attr,
    draw_const,
    draw_dim,
    draw_fn,
    infer_binary,
    infer_inplace_binary,
    infer_inplace_scale,
    infer_inplace_unary,
    infer_none,
    infer_same,
    infer_scaled,
    need_rank,
    replace_dim,
    same_dims,
)

# ``reshape``, ``flatten`` and ``view`` are
# left out: whether ``reshape`` copies or views is documented as not to be relied on,
# so a write through one has no meaning a compiled program must keep.  ``expand`` and
# ``unfold`` are left out too: their results overlap in memory, and eager refuses a
# write to them.

VIEWS = "views"
INDEXING = "indexing"

FEATURES: tuple[Feature, ...] = (
    Feature(VIEWS, 0.3, "view ops beyond slices: permute, select, a step slice, chunk, diagonal, movedim, "
            "alias, squeeze"),
    Feature(INDEXING, 0.3, "indexing and in-place ops of the tensor API: flip, index_select, a tensor index, "
            "where, masked_fill(_), index_add_, index_copy_, a masked store, zero_, fill_, clamp_, sub_, div_, "
            "in-place unary ops, lerp_"),
)


def _known_size(t, attrs, m, least: int = 0):
    dim = dim_attr(attrs, t[0])
    if sizes.smallest(t[0][dim], m) < least:
        raise Illegal(f"needs dim {t[0][dim]!r} >= {least} for every binding")
    return dim


def _infer_permute(t, attrs, m):
    need_rank(t[0], 2)
    return tuple(reversed(t[0]))


def _infer_select(t, attrs, m):
    return replace_dim(t[0], _known_size(t, attrs, m, least=1), None)


def _infer_ceil_half(t, attrs, m):
    dim = dim_attr(attrs, t[0])
    return replace_dim(t[0], dim, sizes.ceil_half(t[0][dim]))


def _infer_diagonal(t, attrs, m):
    need_rank(t[0], 2)
    if t[0][0] != t[0][1]:
        raise Illegal(f"diagonal needs its first two dims equal, got {t[0][:2]}")
    return tuple(t[0][2:]) + (t[0][0],)


def _infer_movedim(t, attrs, m):
    need_rank(t[0], 2)
    return tuple(t[0][1:]) + (t[0][0],)


def _infer_squeeze(t, attrs, m):
    dim_attr(attrs, t[0])
    return t[0]


def _infer_same_dim(t, attrs, m):
    dim_attr(attrs, t[0])
    return t[0]


def _infer_same_dim_binary(t, attrs, m):
    dim_attr(attrs, t[0])
    same_dims(t[0], t[1])
    return None


def _reversed_index(arg: str, dim: int) -> str:
    return f"torch.arange({arg}.size({dim}) - 1, -1, -1, device={arg}.device)"


VIEW_FORMS: tuple[Form, ...] = (
    Form("permute", VIEW, 1, _infer_permute,
         lambda a, at, d: f"{a[0]}.permute({', '.join(str(k) for k in reversed(range(len(d[0]))))})",
         feature=VIEWS, footprint=lambda f, at, d: f.permute(tuple(reversed(range(len(d)))))),
    Form("select", VIEW, 1, _infer_select, lambda a, at, d: f"{a[0]}.select({at['dim']}, 0)", feature=VIEWS,
         draw=draw_dim, footprint=lambda f, at, d: f.select(at.get("dim", 0))),
    Form("slice_step", VIEW, 1, _infer_ceil_half,
         lambda a, at, d: f"{a[0]}[{':, ' * at['dim']}::2]", feature=VIEWS, draw=draw_dim,
         footprint=lambda f, at, d: f.slice(at.get("dim", 0), Affine(), 2, d[at.get("dim", 0)])),
    Form("chunk", VIEW, 1, _infer_ceil_half, lambda a, at, d: f"{a[0]}.chunk(2, {at['dim']})[0]", feature=VIEWS,
         draw=draw_dim, footprint=lambda f, at, d: f.slice(at.get("dim", 0), Affine(), 1, d[at.get("dim", 0)])),
    Form("diagonal", VIEW, 1, _infer_diagonal, lambda a, at, d: f"{a[0]}.diagonal()", feature=VIEWS,
         footprint=lambda f, at, d: f.diagonal()),
    Form("movedim", VIEW, 1, _infer_movedim, lambda a, at, d: f"{a[0]}.movedim(0, -1)", feature=VIEWS,
         footprint=lambda f, at, d: f.permute(tuple(range(1, len(d))) + (0,))),
    Form("alias", VIEW, 1, infer_same, lambda a, at, d: f"{a[0]}[...]", feature=VIEWS,
         footprint=lambda f, at, d: f),
    # a dim of size 1 is rare among a program's values, so the form makes one first: the
    # squeeze is a view of a view, of a dim the compiler knows is 1
    Form("squeeze", VIEW, 1, _infer_squeeze,
         lambda a, at, d: f"{a[0]}.unsqueeze({at['dim']}).squeeze({at['dim']})", feature=VIEWS, draw=draw_dim,
         footprint=lambda f, at, d: f),
)

INDEXING_FORMS: tuple[Form, ...] = (
    Form("flip", ATEN, 1, _infer_same_dim, lambda a, at, d: f"torch.flip({a[0]}, ({at['dim']},))",
         feature=INDEXING, draw=draw_dim),
    Form("index_select", ATEN, 1, _infer_same_dim,
         lambda a, at, d: f"{a[0]}.index_select({at['dim']}, {_reversed_index(a[0], at['dim'])})",
         feature=INDEXING, draw=draw_dim),
    Form("take_even", ATEN, 1, _infer_ceil_half,
         lambda a, at, d: f"{a[0]}[{':, ' * at['dim']}torch.arange(0, {a[0]}.size({at['dim']}), 2, "
                          f"device={a[0]}.device)]", feature=INDEXING, draw=draw_dim),
    Form("where", ATEN, 2, infer_binary, lambda a, at, d: f"torch.where({a[0]} > 0, {a[0]}, {a[1]})",
         feature=INDEXING, broadcasts=True),
    Form("masked_fill", ATEN, 1, infer_scaled,
         lambda a, at, d: f"{a[0]}.masked_fill({a[0]} < 0, {at['c']})", feature=INDEXING, draw=draw_const),
    Form("index_add_", INPLACE, 2, _infer_same_dim_binary,
         lambda a, at, d: f"{a[0]}.index_add_({at['dim']}, {_reversed_index(a[0], at['dim'])}, {a[1]})",
         mutates=(0,), returns=False, feature=INDEXING, draw=draw_dim),
    Form("index_copy_", INPLACE, 2, _infer_same_dim_binary,
         lambda a, at, d: f"{a[0]}.index_copy_({at['dim']}, {_reversed_index(a[0], at['dim'])}, {a[1]})",
         mutates=(0,), returns=False, feature=INDEXING, draw=draw_dim),
    Form("masked_fill_", INPLACE, 1, infer_inplace_scale,
         lambda a, at, d: f"{a[0]}.masked_fill_({a[0]} > 0, {at['c']})", mutates=(0,), returns=False,
         feature=INDEXING, draw=draw_const),
    Form("index_put_", INPLACE, 1, infer_inplace_scale,
         lambda a, at, d: f"{a[0]}[{a[0]} < 0] = {at['c']}", mutates=(0,), returns=False, feature=INDEXING,
         draw=draw_const),
    Form("zero_", INPLACE, 1, infer_none, lambda a, at, d: f"{a[0]}.zero_()",
         mutates=(0,), returns=False, feature=INDEXING),
    Form("fill_", INPLACE, 1, infer_inplace_scale, lambda a, at, d: f"{a[0]}.fill_({at['c']})",
         mutates=(0,), returns=False, feature=INDEXING, draw=draw_const),
    Form("clamp_", INPLACE, 1, infer_none, lambda a, at, d: f"{a[0]}.clamp_(-0.5, 0.5)",
         mutates=(0,), returns=False, feature=INDEXING),
    Form("sub_", INPLACE, 2, infer_inplace_binary, lambda a, at, d: f"{a[0]}.sub_({a[1]})",
         mutates=(0,), returns=False, feature=INDEXING, broadcasts=True),
    Form("div_", INPLACE, 1, infer_inplace_scale, lambda a, at, d: f"{a[0]}.div_({at['c']})",
         mutates=(0,), returns=False, feature=INDEXING, draw=draw_const),
    Form("unary_", INPLACE, 1, infer_inplace_unary,
         lambda a, at, d: f"{a[0]}.{at['fn']}_()", mutates=(0,), returns=False, feature=INDEXING, draw=draw_fn),
    Form("lerp_", INPLACE, 2, infer_inplace_binary, lambda a, at, d: f"{a[0]}.lerp_({a[1]}, 0.5)",
         mutates=(0,), returns=False, feature=INDEXING, broadcasts=True),
)

FORMS: tuple[Form, ...] = VIEW_FORMS + INDEXING_FORMS
