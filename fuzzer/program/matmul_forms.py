"""Matrix products beside writes and broadcast views (the ``matmuls`` feature).

Real code multiplies matrices everywhere, and Inductor lowers a product unlike any
pointwise op: to an extern kernel (``mm``, ``bmm``) or a template that reads its operands
whole, so the order of a product and the writes around it is kept by a dependency of
its own.  And real code broadcasts a value to a batch of one before it writes it
(``x.expand(1, *x.shape)[0, i] = c``), a view Inductor lowers as an expand, not as the
unsqueeze it equals.  The forms:

* ``gram``: ``x @ y.mT``, the product of two values of one shape ``(..., n, k)``, a new
  ``(..., n, n)`` value (batched where the rank is 3 or more);
* ``addmm_``: ``x.add_(a @ b.mT)``, ``x`` of ``(..., n, n)`` added the product of two
  values of one shape ``(..., n, k)``: a write whose value is a product;
* ``lead_expand``: ``x.expand(1, *x.shape)``, a view of ``x``'s elements with a leading
  dim of one and stride 0 (its footprint is ``unsqueeze(0)``'s), so a write through it
  is a write to ``x``.

A product sums ``k`` terms, so its value is judged with the tolerances, as any sum is.
"""

from __future__ import annotations

from fuzzer.program.feature_record import Feature
from fuzzer.program.form_record import ATEN, INPLACE, VIEW, Form, Illegal, Shrink, need_rank, same_dims

MATMULS = "matmuls"

FEATURES: tuple[Feature, ...] = (
    Feature(MATMULS, 0.2, "matrix products (x @ y.mT of two values of one shape, x.add_(a @ b.mT)) and a "
            "value broadcast to a batch of one (x.expand(1, *x.shape)) written through"),
)


def _square(dims) -> tuple:
    """The dims of ``x @ y.mT`` for ``x`` and ``y`` of ``dims``: the last replaced by the
    second last."""
    return tuple(dims[:-1]) + (dims[-2],)


def _infer_gram(t, attrs, m):
    need_rank(t[0], 2)
    same_dims(t[0], t[1])
    return _square(t[0])


def _infer_addmm(t, attrs, m):
    need_rank(t[1], 2)
    same_dims(t[1], t[2])
    if tuple(t[0]) != _square(t[1]):
        raise Illegal(f"addmm_ writes a value of dims {_square(t[1])}, not {tuple(t[0])}")
    return None


def _fits_addmm(operands) -> bool:
    """Operands picked one at a time (``generate._operands``): a square destination, then
    a factor whose product with its kind fills it, then a second factor of its dims."""
    x = tuple(operands[0])
    if len(x) < 2 or x[-1] != x[-2]:
        return False
    return all(len(d) == len(x) and _square(d) == x for d in operands[1:2]) and all(
        tuple(d) == tuple(operands[1]) for d in operands[2:])


def _infer_lead(t, attrs, m):
    return ("1",) + tuple(t[0])


FORMS: tuple[Form, ...] = (
    Form("gram", ATEN, 2, _infer_gram, lambda a, at, d: f"{a[0]} @ {a[1]}.mT", feature=MATMULS,
         shrink=Shrink(("mul",), 3)),
    Form("addmm_", INPLACE, 3, _infer_addmm, lambda a, at, d: f"{a[0]}.add_({a[1]} @ {a[2]}.mT)", mutates=(0,),
         returns=False, feature=MATMULS, fits=_fits_addmm, shrink=Shrink(("add_", "mul_"), 3)),
    Form("lead_expand", VIEW, 1, _infer_lead, lambda a, at, d: f"{a[0]}.expand(1, *{a[0]}.shape)",
         feature=MATMULS, footprint=lambda f, at, d: f.unsqueeze(0), shrink=Shrink(("unsqueeze",), 3)),
)
