"""Transposed writes back, as statement forms (the ``transposed-writes`` feature).

* ``permute_to``: ``x.permute(order)`` for any order of ``x``'s dims but their own,
  spelled ``x.mT`` where it swaps the last two and ``x.transpose(i, j)`` where it swaps
  two others: a view of ``x``'s elements (its footprint is ``x``'s, permuted), so a
  write through it, or through a chain of views of it, is a write to ``x``.
* ``copy_back_`` and ``add_back_``: ``x.copy_(F(x.permute(order)).permute(back))`` and
  ``x.add_(...)``: ``x`` assigned what it holds read through a permuted view of itself,
  made a fresh tensor by ``F`` (``VIA``: ``.clone()``, ``* 0.5``, ``torch.sin``) and
  permuted by ``back`` to ``x``'s dims.  Where ``back`` undoes ``order`` each element
  is written from itself; where ``x``'s dims repeat it need not (``x.copy_(
  x.mT.clone())`` of a square ``x``), and each element is written from another that
  the same statement writes: eager materialises ``F(...)`` first, so the statement has
  one answer, which compiled code must keep however it fuses the read and the write.
* ``copy_mT_``: ``a.copy_(b.mT)``: a value written from the transpose of another one,
  or of another part of its own storage.

What torch leaves undefined is never drawn: a write whose source overlaps its
destination (``a.copy_(a.mT)``, ``a.add_(a.mT)``) is one ATen refuses where it can tell
("some elements of the input tensor and the written-to tensor refer to a single memory
location", ``at::assert_no_partial_overlap`` in ``TensorIterator``'s overlap check) and
computes in an order of its own where it cannot (a strided view: its overlap status is
``TooHard``), so the IR's one overlap rule (``storage.check_writes``) refuses ``copy_mT_``'s
operands wherever their elements are not proven disjoint; ``copy_back_`` and
``add_back_`` read their operand only through the fresh tensor ``F`` makes (never
``.contiguous()``, which returns its operand itself where it is laid out so).
"""

from __future__ import annotations

import itertools

from fuzzer.program.feature_record import Feature
from fuzzer.program.form_record import INPLACE, MEMORY, VIEW, Form, Illegal, Shrink, need_rank

TRANSPOSED_WRITES = "transposed-writes"

FEATURES: tuple[Feature, ...] = (
    Feature(TRANSPOSED_WRITES, 0.2, "transposed writes back: writes through permuted and transposed views, "
            "x assigned a fresh value read through a permuted view of itself (x.copy_(x.mT.clone()) of a square "
            "x, x.add_(torch.sin(x.transpose(0, 2)))), a value written from another's transpose"),
)

#: how ``copy_back_`` and ``add_back_`` make a fresh tensor of what they read: each is
#: elementwise, so an element is what it read at its own index
VIA = {"clone": "{}.clone()", "half": "({} * 0.5)", "sin": "torch.sin({})"}
#: the share of ``copy_back_`` and ``add_back_`` statements drawn to write each element
#: from another one, where the operand's dims allow it
CROSSED_SHARE = 0.75


def _swap_last(n: int) -> tuple[int, ...]:
    return tuple(range(n - 2)) + (n - 1, n - 2)


def permuted(arg: str, order) -> str:
    """``arg`` permuted by ``order`` as code writes it: nothing for its own order, ``.mT``,
    ``.transpose(i, j)`` for one swap, else ``.permute(...)``."""
    order = tuple(order)
    moved = [k for k in range(len(order)) if order[k] != k]
    if not moved:
        return arg
    if len(order) >= 2 and order == _swap_last(len(order)):
        return f"{arg}.mT"
    if len(moved) == 2:
        return f"{arg}.transpose({moved[0]}, {moved[1]})"
    return f"{arg}.permute({', '.join(str(k) for k in order)})"


def _order(attrs: dict, key: str, rank: int) -> tuple[int, ...]:
    order = attrs.get(key)
    if not isinstance(order, list) or sorted(order) != list(range(rank)):
        raise Illegal(f"{key} {order!r} is not an order of {rank} dims")
    return tuple(order)


def _moved(dims, order) -> tuple:
    return tuple(dims[k] for k in order)


def _infer_permute(t, attrs, m):
    need_rank(t[0], 2)
    order = _order(attrs, "order", len(t[0]))
    if order == tuple(range(len(order))):
        raise Illegal("permute_to moves some dim")
    return _moved(t[0], order)


def _draw_order(rng, dims, fresh) -> dict:
    need_rank(dims, 2)
    orders = [list(p) for p in itertools.permutations(range(len(dims))) if list(p) != sorted(p)]
    return {"order": rng.choice(orders)}


def _infer_back(t, attrs, m):
    need_rank(t[0], 2)
    order = _order(attrs, "order", len(t[0]))
    back = _order(attrs, "back", len(t[0]))
    if order == tuple(range(len(order))):
        raise Illegal("a write back reads through a view that moves some dim")
    if attrs.get("via") not in VIA:
        raise Illegal(f"via {attrs.get('via')!r} not in {sorted(VIA)}")
    if _moved(_moved(t[0], order), back) != tuple(t[0]):
        raise Illegal(f"{back} does not take {_moved(t[0], order)} back to {t[0]}")
    return None


def _draw_back(rng, dims, fresh) -> dict:
    """An order to read through, and one back to the operand's dims: where the dims
    allow one, ``CROSSED_SHARE`` of them not the inverse (each element then written from
    another), else the inverse."""
    order = _draw_order(rng, dims, fresh)["order"]
    read = _moved(dims, order)
    inverse = [order.index(k) for k in range(len(order))]
    crossed = [list(p) for p in itertools.permutations(range(len(dims)))
               if _moved(read, p) == tuple(dims) and list(p) != inverse]
    back = rng.choice(crossed) if crossed and rng.random() < CROSSED_SHARE else inverse
    return {"order": order, "back": back, "via": rng.choice(sorted(VIA))}


def _render_back(into: str):
    def render(a, at, d):
        read = VIA[at["via"]].format(permuted(a[0], at["order"]))
        return f"{a[0]}.{into}({permuted(read, at['back'])})"
    return render


def _fits_mT(operands) -> bool:
    if len(operands[0]) < 2:
        return False
    return len(operands) < 2 or tuple(operands[1]) == _moved(operands[0], _swap_last(len(operands[0])))


def _infer_mT(t, attrs, m):
    if not _fits_mT(t):
        raise Illegal(f"a.copy_(b.mT) takes b of a's dims with the last two swapped, got {t[0]}, {t[1]}")
    return None


#: what the generator tries right after a permuted view, on it, in a random order: a
#: write through it, by aten or by a custom op
WRITES_THROUGH = ("mul_", "add_", "copy_back_", "m_scale", "m_addto")


def _write_through(rng) -> list[str]:
    return rng.sample(WRITES_THROUGH, k=len(WRITES_THROUGH))


#: a permuted view toward a transpose, then the operand; a write back toward a plain
#: write in place
FORMS: tuple[Form, ...] = (
    Form("permute_to", VIEW, 1, _infer_permute, lambda a, at, d: permuted(a[0], at["order"]),
         feature=TRANSPOSED_WRITES, drawn_as=MEMORY, draw=_draw_order,
         footprint=lambda f, at, d: f.permute(tuple(at["order"])), follow=_write_through,
         shrink=Shrink(("transpose", "alias"), 3)),
    Form("copy_back_", INPLACE, 1, _infer_back, _render_back("copy_"), mutates=(0,), returns=False,
         feature=TRANSPOSED_WRITES, drawn_as=MEMORY, draw=_draw_back, shrink=Shrink(("mul_",), 3)),
    Form("add_back_", INPLACE, 1, _infer_back, _render_back("add_"), mutates=(0,), returns=False,
         feature=TRANSPOSED_WRITES, drawn_as=MEMORY, draw=_draw_back, shrink=Shrink(("mul_",), 3)),
    Form("copy_mT_", INPLACE, 2, _infer_mT, lambda a, at, d: f"{a[0]}.copy_({a[1]}.mT)", mutates=(0,),
         returns=False, feature=TRANSPOSED_WRITES, drawn_as=MEMORY, fits=_fits_mT, shrink=Shrink(("copy_", "mul_"), 3)),
)
