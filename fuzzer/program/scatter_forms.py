"""The functional view scatters (the ``view-scatters`` feature).

Code written in a functional style, and code that updates part of a value without
writing it, calls the view scatters: ``torch.slice_scatter``, ``torch.select_scatter``,
``torch.diagonal_scatter``: a new tensor equal to ``x`` but for the elements a view of
it would see, which take ``src``.  They are also what functionalization turns a write
through a view into, so Inductor treats them as its own: its reinplacing pass
(``torch/_inductor/fx_passes/reinplace.py``, ``canonicalize_view_scatter_ops``) turns a
scatter into a write of ``x``'s own memory where it proves ``x`` is not read again, and
its lowerings compute the rest in place of a copy.  A program that writes one itself
asks whether that proof holds: ``x`` read or written after the scatter, ``x`` an input,
a view, or a value a custom op writes.  Each form here takes ``x`` and a second operand
``y`` of the same dims, and scatters into ``x`` the matching view of ``y``:

* ``slice_scatter_step``: ``torch.slice_scatter(x, y[..., ::2], dim=d, step=2)``;
* ``slice_scatter_tail``: ``torch.slice_scatter(x, y[..., 1:], dim=d, start=1)``;
* ``select_scatter``: ``torch.select_scatter(x, y.select(d, -1), d, -1)``, on a dim of at
  least 1 in every binding (``select`` refuses an empty dim);
* ``diagonal_scatter``: ``torch.diagonal_scatter(x, y.diagonal(k, -2, -1), k, -2, -1)``
  for ``k`` of ``OFFSETS`` (attribute ``diag``).

After one the generator tries a write or a read of ``x`` (``Form.then``), as code that
keeps the value it scattered into does: a write that reads ``x`` (``mul_``, a custom
op's), one that overwrites it without reading it (``copy_`` of another value, ``fill_``,
``zero_``), or a read; a scatter reinplaced into ``x`` while ``x`` is live shows there.
Each is a copy of elements, exact, with a backward.  ``torch.as_strided_scatter`` is not
drawn: it scatters at the positions an ``as_strided`` of ``x``'s *clone* would view, and
which those are rests on the clone's strides, which eager and a compiler may choose
alike only for a contiguous ``x``.
"""

from __future__ import annotations

from fuzzer.program import sizes
from fuzzer.program.feature_record import Feature
from fuzzer.program.form_record import ATEN, MEMORY, Form, Illegal, Shrink, dim_attr, draw_dim, need_rank, same_dims

VIEW_SCATTERS = "view-scatters"

FEATURES: tuple[Feature, ...] = (
    Feature(VIEW_SCATTERS, 0.2, "the functional view scatters: torch.slice_scatter (a step, a tail), "
            "torch.select_scatter, torch.diagonal_scatter of one value into another, then that other read "
            "or written"),
)

#: the diagonals ``diagonal_scatter`` writes: the main one and those beside it
OFFSETS = (0, 1, -1)
#: what the generator tries right after a scatter, on the value scattered into: a write
#: that reads it (``mul_``, a custom op's), one that overwrites it without reading it
#: (``copy_`` of another value, ``fill_``, ``zero_``: the value a scatter put in its
#: memory would then be lost), or a read
AFTER = ("mul_", "m_scale", "copy_", "fill_", "zero_", "clone")


def _along(arg: str, dim: int, part: str) -> str:
    """``arg[:, ..., part]`` with ``part`` at ``dim``."""
    return f"{arg}[{':, ' * dim}{part}]"


def _infer_slice(t, attrs, m):
    need_rank(t[0], 1)
    dim_attr(attrs, t[0])
    return same_dims(t[0], t[1])


def _infer_select(t, attrs, m):
    dim = dim_attr(attrs, _infer_slice(t, attrs, m))
    if sizes.smallest(t[0][dim], m) < 1:
        raise Illegal(f"select_scatter needs dim {dim} ({t[0][dim]!r}) >= 1 for every binding")
    return t[0]


def _infer_diagonal(t, attrs, m):
    need_rank(t[0], 2)
    if attrs.get("diag") not in OFFSETS:
        raise Illegal(f"diagonal offset {attrs.get('diag')!r} not in {OFFSETS}")
    return same_dims(t[0], t[1])


def _draw_offset(rng, dims, fresh) -> dict:
    return {"diag": rng.choice(OFFSETS)}


FORMS: tuple[Form, ...] = (
    Form("slice_scatter_step", ATEN, 2, _infer_slice,
         lambda a, at, d: f"torch.slice_scatter({a[0]}, {_along(a[1], at['dim'], '::2')}, dim={at['dim']}, step=2)",
         feature=VIEW_SCATTERS, drawn_as=MEMORY, draw=draw_dim, then=AFTER, shrink=Shrink(("add", "clone"), 3)),
    Form("slice_scatter_tail", ATEN, 2, _infer_slice,
         lambda a, at, d: f"torch.slice_scatter({a[0]}, {_along(a[1], at['dim'], '1:')}, dim={at['dim']}, start=1)",
         feature=VIEW_SCATTERS, drawn_as=MEMORY, draw=draw_dim, then=AFTER, shrink=Shrink(("add", "clone"), 3)),
    Form("select_scatter", ATEN, 2, _infer_select,
         lambda a, at, d: f"torch.select_scatter({a[0]}, {a[1]}.select({at['dim']}, -1), {at['dim']}, -1)",
         feature=VIEW_SCATTERS, drawn_as=MEMORY, draw=draw_dim, then=AFTER, shrink=Shrink(("add", "clone"), 3)),
    Form("diagonal_scatter", ATEN, 2, _infer_diagonal,
         lambda a, at, d: (f"torch.diagonal_scatter({a[0]}, {a[1]}.diagonal({at['diag']}, -2, -1), "
                           f"{at['diag']}, -2, -1)"),
         feature=VIEW_SCATTERS, drawn_as=MEMORY, draw=_draw_offset, then=AFTER, shrink=Shrink(("add", "clone"), 3)),
)
