"""Views to dtypes of another element size and back, as a statement form (the
``dtype-views`` feature).

``width_view``: ``x.view(torch.uint8)``, then maybe ``.view(torch.int16)``, then
``.view(x.dtype)``: through dtypes of another element size and back, over a view whose
last dim has stride 1 (``Form.unit_last``).  The same elements, so a write through one
is a write to its operand; its footprint is its operand's (``fuzzer.program.storage``).
``strided_forms``' ``dtype_view`` is the same view through a dtype of the same size.
"""

from __future__ import annotations

from fuzzer.program.feature_record import Feature
from fuzzer.program.form_record import VIEW, Form, Illegal, Shrink, need_rank

DTYPE_VIEWS = "dtype-views"

FEATURES: tuple[Feature, ...] = (
    Feature(DTYPE_VIEWS, 0.2, "view(dtype) to dtypes of another element size and back (bytes, int16 pairs of "
            "them) over a view whose last dim has stride 1; writes through it"),
)
#: the dtypes a ``width_view`` passes through before it is viewed back (torch's rules,
#: ``Tensor.view(dtype)``): its bytes (narrower: the last dim's stride must be 1, which
#: ``Form.unit_last`` makes sure of), or its bytes then int16 pairs of them (wider: the
#: bytes' last dim, storage offset and other strides must be even, and are, multiples of
#: an element size of 2 or more), then the operand's dtype (wider again, or the same
#: size, by the same argument)
WIDTHS = {"bytes": ("torch.uint8",), "shorts": ("torch.uint8", "torch.int16")}


def _draw_width(rng, dims, fresh) -> dict:
    return {"width": rng.choice(sorted(WIDTHS))}


def _infer_width(t, attrs, m):
    need_rank(t[0], 1)  # a 0-d tensor has no last dim to scale
    if attrs.get("width") not in WIDTHS:
        raise Illegal(f"width {attrs.get('width')!r} not in {sorted(WIDTHS)}")
    return t[0]


def _render_width(a, at, d):
    return f"{a[0]}{''.join(f'.view({w})' for w in WIDTHS[at['width']])}.view({a[0]}.dtype)"


FORMS: tuple[Form, ...] = (
    # toward a view through its own width, then none
    Form("width_view", VIEW, 1, _infer_width, _render_width, feature=DTYPE_VIEWS, draw=_draw_width,
         footprint=lambda f, at, d: f, unit_last=True, shrink=Shrink(("dtype_view", "alias"), 4)),
)
