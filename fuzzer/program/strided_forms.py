"""Views with explicit strides, as statement forms (the ``strided-views`` feature).

* ``as_strided``: sizes, strides and a storage offset over the whole storage of the
  operand's root, which may reach outside the operand into its base.  The view is
  drawn as a box of the root: each root dim cut to one of ``PIECES`` (each inside the
  dim for every size, 0 included), the box's dims in any order.  Its storage is the
  root's, laid out row-major, so the root must be an input handed over contiguous
  (``ir.check``: ``Form.dense_root``); the attributes carry the root's dims (``base``),
  from which the strides and the offset are printed.
* ``unfold_gap``: ``x.unfold(dim, size, step)`` with ``step >= size``: windows that do
  not overlap (overlapping windows cannot be written).
* ``dtype_view``: ``x.view(<the int dtype of x's element size>).view(x.dtype)``: the
  same storage reinterpreted and back, so a write through it is a write to ``x``.
* ``T`` (rank 2), ``mT``, and ``tail``: ``x.narrow(dim, d // 2, d // 2)``, a narrow
  whose start is a symbol expression (beside ``head``, of its dims, and apart from it).

Each form has a footprint (``fuzzer.program.storage``), so a write beside it is
refused only where their elements may overlap.
"""

from __future__ import annotations

import dataclasses

from fuzzer.program import sizes
from fuzzer.program.feature_record import Feature
from fuzzer.program.form_record import (
    VIEW,
    Form,
    Illegal,
    Shrink,
    dim_attr,
    draw_dim,
    infer_same,
    known_dim,
    need_rank,
    py_dim,
)
from fuzzer.program.storage import Affine, Footprint

STRIDED_VIEWS = "strided-views"

FEATURES: tuple[Feature, ...] = (
    Feature(STRIDED_VIEWS, 0.25, "views with explicit strides: as_strided (a box of an input's storage), unfold "
            "with step >= size, view(dtype) and back, x.T, mT, narrow from a symbolic start; a write beside a "
            "view of its own storage whose elements are proven disjoint"),
)

#: how ``as_strided`` may cut a root dim ``d``: (first index, count, step), each inside
#: ``[0, d)`` for every ``d >= 0``
PIECES = {
    "all": lambda d: ("0", d, 1),
    "head": lambda d: ("0", sizes.half(d), 1),
    "tail": lambda d: (sizes.half(d), sizes.ceil_half(d), 1),
    "back": lambda d: (sizes.half(d), sizes.half(d), 1),
    "even": lambda d: ("0", sizes.ceil_half(d), 2),
    "evens": lambda d: ("0", sizes.half(d), 2),
    "odd": lambda d: ("1", sizes.half(d), 2),
}
#: the window lengths and the gaps between windows ``unfold_gap`` draws
WINDOWS, GAPS = (1, 2), (0, 1, 2)


def _box(attrs: dict) -> tuple[list[str], list[str], list[tuple[str, str, int]], tuple[int, ...]]:
    base, pieces, order = attrs.get("base"), attrs.get("pieces"), attrs.get("order")
    if (not isinstance(base, list) or not isinstance(pieces, list) or not isinstance(order, list)
            or len(base) != len(pieces) or sorted(order) != list(range(len(base))) or not base):
        raise Illegal(f"bad as_strided box {attrs!r}")
    if any(p not in PIECES for p in pieces) or any(not isinstance(b, str) or not sizes.symbols_in(b) and
                                                   not b.isdigit() for b in base):
        raise Illegal(f"bad as_strided box {attrs!r}")
    for b in base:
        known_dim(b)
    cuts = [PIECES[p](b) for p, b in zip(pieces, base)]
    return base, pieces, cuts, tuple(order)


def infer_box(t, attrs, m):
    """An ``as_strided`` box's dims: each root dim's piece, in the box's order."""
    _, _, cuts, order = _box(attrs)
    return tuple(cuts[k][1] for k in order)


def _row_major(base: list[str], j: int) -> str:
    return " * ".join(py_dim(b) for b in base[j + 1:]) or "1"


def box_text(at) -> str:
    """An ``as_strided`` box's sizes, strides and storage offset as the call's arguments
    (the strides and the offset of the row-major root whose dims are its ``base``)."""
    base, _, cuts, order = _box(at)
    size = ", ".join(py_dim(cuts[k][1]) for k in order)
    stride = ", ".join(f"{cuts[k][2]} * {_row_major(base, k)}" for k in order)
    offset = " + ".join(f"{py_dim(cuts[j][0])} * {_row_major(base, j)}" for j in range(len(base)))
    return f"({size},), ({stride},), {offset}"


def footprint_box(f, attrs, dims):
    """An ``as_strided`` box's elements: each root dim's piece, whatever its operand covers."""
    _, _, cuts, order = _box(attrs)
    return Footprint(tuple(Affine.of(c[0]) for c in cuts), tuple(((k, cuts[k][2]),) for k in order), tuple(dims))


#: the attributes of a box, kept by a statement rewritten from one ``as_strided`` to another
BOX_KEYS = ("base", "pieces", "order")


def draw_box(rng, base, fresh) -> dict:
    """A box of a root of dims ``base``: a piece per dim, the dims in any order."""
    order = list(range(len(base)))
    rng.shuffle(order)
    return {"base": list(base), "pieces": [rng.choice(sorted(PIECES)) for _ in base], "order": order}


def _infer_unfold(t, attrs, m):
    dim = dim_attr(attrs, t[0])
    size, step = attrs.get("size_w"), attrs.get("step")
    if size not in WINDOWS or not isinstance(step, int) or step - size not in GAPS:
        raise Illegal(f"unfold_gap needs a window in {WINDOWS} and a step at least as long, got {size}, {step}")
    if sizes.smallest(t[0][dim], m) < size:
        raise Illegal(f"unfold needs dim {t[0][dim]!r} >= {size} for every binding")
    count = f"({py_dim(t[0][dim])} - {size}) // {step} + 1"
    return t[0][:dim] + (count,) + t[0][dim + 1:] + (str(size),)


def _draw_unfold(rng, dims, fresh) -> dict:
    if not dims:
        raise Illegal("needs rank >= 1")
    size = rng.choice(WINDOWS)
    return {"dim": rng.randrange(len(dims)), "size_w": size, "step": size + rng.choice(GAPS)}


def _infer_T(t, attrs, m):
    if len(t[0]) != 2:
        raise Illegal("x.T takes a rank-2 operand")
    return (t[0][1], t[0][0])


def _infer_mT(t, attrs, m):
    need_rank(t[0], 2)
    return t[0][:-2] + (t[0][-1], t[0][-2])


def _infer_tail(t, attrs, m):
    dim = dim_attr(attrs, t[0])
    return t[0][:dim] + (sizes.half(known_dim(t[0][dim])),) + t[0][dim + 1:]


#: the integer dtype of each element size, as the program's text writes it
INT_OF_SIZE = "{1: torch.int8, 2: torch.int16, 4: torch.int32, 8: torch.int64}"


def _swap_last(n: int) -> tuple[int, ...]:
    return tuple(range(n - 2)) + (n - 1, n - 2)


#: the strided views, each toward the plain views (an ``as_strided`` to a slice or the
#: whole), ranking above them
FORMS: tuple[Form, ...] = (
    Form("as_strided", VIEW, 1, infer_box, lambda a, at, d: f"{a[0]}.as_strided({box_text(at)})",
         feature=STRIDED_VIEWS, draw=draw_box, footprint=footprint_box, dense_root=True,
         shrink=Shrink(("head", "alias"), 4, keeps=BOX_KEYS)),
    Form("unfold_gap", VIEW, 1, _infer_unfold,
         lambda a, at, d: f"{a[0]}.unfold({at['dim']}, {at['size_w']}, {at['step']})", feature=STRIDED_VIEWS,
         draw=_draw_unfold, shrink=Shrink(("slice_step",), 3),
         footprint=lambda f, at, d: f.unfold(at.get("dim", 0), at["size_w"], at["step"], d[at.get("dim", 0)])),
    Form("dtype_view", VIEW, 1, infer_same,
         lambda a, at, d: f"{a[0]}.view({INT_OF_SIZE}[{a[0]}.element_size()]).view({a[0]}.dtype)",
         feature=STRIDED_VIEWS, footprint=lambda f, at, d: f, shrink=Shrink(("alias",), 3)),
    Form("T", VIEW, 1, _infer_T, lambda a, at, d: f"{a[0]}.T", feature=STRIDED_VIEWS,
         footprint=lambda f, at, d: f.permute((1, 0)), shrink=Shrink(("transpose",), 3)),
    Form("mT", VIEW, 1, _infer_mT, lambda a, at, d: f"{a[0]}.mT", feature=STRIDED_VIEWS,
         footprint=lambda f, at, d: f.permute(_swap_last(len(d))), shrink=Shrink(("transpose",), 3)),
    Form("tail", VIEW, 1, _infer_tail,
         lambda a, at, d: (f"{a[0]}.narrow({at['dim']}, {py_dim(sizes.half(d[0][at['dim']]))}, "
                           f"{py_dim(sizes.half(d[0][at['dim']]))})"),
         feature=STRIDED_VIEWS, draw=draw_dim, shrink=Shrink(("head",), 3),
         footprint=lambda f, at, d: f.slice(at.get("dim", 0), Affine.of(sizes.half(f.dims[at.get("dim", 0)])), 1,
                                            d[at.get("dim", 0)])),
)


#: the pieces of one dim that are disjoint and of one count: each the other's complement
SWAPS = {"head": "back", "back": "head", "evens": "odd", "odd": "evens"}


def complement(stmt, out: str):
    """A view of ``stmt``'s operand with its dims, disjoint from it (``head`` and
    ``tail``; an ``as_strided`` box, of either spelling, with its pieces swapped), as
    statement ``out``; or None."""
    if stmt.form in ("head", "tail"):
        return dataclasses.replace(stmt, form="tail" if stmt.form == "head" else "head", out=out,
                                   attrs={"dim": stmt.attrs.get("dim", 0)})
    if isinstance(stmt.attrs.get("pieces"), list) and any(p in SWAPS for p in stmt.attrs["pieces"]):
        return dataclasses.replace(stmt, out=out,
                                   attrs={**stmt.attrs, "pieces": [SWAPS.get(p, p) for p in stmt.attrs["pieces"]]})
    return None


def companion(stmt, out: str, rng, overlap_rule: bool):
    """Half the time, under the overlap rule (``storage.Tracker``): the complement of a
    view just drawn, as statement ``out``, for a write beside it to read (two disjoint
    views of one storage and of one shape are rare by chance)."""
    twin = complement(stmt, out) if overlap_rule else None
    return twin if twin is not None and rng.random() < 0.5 else None
