"""Offsets into the base, as statement forms (the ``base-offsets`` feature).

* ``dense_clone``: ``x.clone(memory_format=torch.contiguous_format)``, a fresh result
  laid out row-major from offset 0 whatever ``x``'s layout (``Form.dense_result``): an
  intermediate an ``as_strided`` may be laid over, as over an input handed over
  contiguous.
* ``as_strided_fn``: ``torch.as_strided(v, size, stride, offset)``, the function's
  spelling of ``strided_forms``' ``as_strided``: a box of the storage of ``v``'s root
  (an input handed over contiguous, or a ``dense_clone``'s result), by the root's dims,
  whose storage offset and strides may reach from the view ``v`` into parts of its
  base that ``v`` does not cover.

What torch defines, and so what the IR holds these to (``fuzzer.program.storage``):

* ``torch.as_strided``'s documentation: a view whose elements overlap ("multiple
  indices referring to the same element in memory") makes in-place writes to it
  undefined.  A box never overlaps itself: each of its dims walks one root dim, each
  root dim once, by a positive step (``strided_forms._box`` refuses any other order).
* The same page: the result "will depend on the current layout in memory".  The box's
  strides and offset are those of a row-major root, and its root is one laid out so
  (an input the mode keeps contiguous, a ``dense_clone``); Inductor gives an
  ``as_strided``'s operand the strides eager has (``GraphLowering.run_node``,
  ``is_input_for_as_strided``), so compiled code must read what eager reads.
* Functionalization refuses, in compile, an aten write through an ``as_strided`` taken
  of a view ("as_strided() is non-compositional", pytorch#104505), so no aten form
  writes one, nor a view of one (``strided_writes.LateStrided``); a custom op's write, which
  functionalization takes through the base, may.  A window or alias input whose
  storage's other inputs the program never reads is no view in the graph (a slice of a
  buffer the caller keeps), so aten may write through its ``as_strided``
  (``LateStrided.lone``).
* A write beside the view it reaches out of reads only elements proven disjoint from
  what it writes, as any write (``storage.check_writes``).
"""

from __future__ import annotations

from fuzzer.program.feature_record import Feature
from fuzzer.program.form_record import ATEN, MEMORY, VIEW, Form, Shrink, infer_same
from fuzzer.program.strided_forms import BOX_KEYS, box_text, draw_box, footprint_box, infer_box

BASE_OFFSETS = "base-offsets"

FEATURES: tuple[Feature, ...] = (
    Feature(BASE_OFFSETS, 0.2, "offsets into the base: torch.as_strided over a view of an input or of an "
            "intermediate laid out row-major (x.clone(memory_format=torch.contiguous_format)), its storage "
            "offset and strides reaching outside the view into its base; read, and written where torch allows"),
)

#: what the generator tries right after a row-major copy, on it, in a random order: a
#: view of it (which an ``as_strided_fn`` may reach out of), an ``as_strided`` of the copy
AFTER_COPY = ("head", "narrow", "as_strided_fn")


def _after_copy(rng) -> list[str]:
    return rng.sample(AFTER_COPY, k=len(AFTER_COPY))


#: what the generator tries right after an ``as_strided``, on it, in a random order, half
#: the time: an aten write, a custom op's (real code takes such a view to write through it)
AFTER_VIEW = ("mul_", "m_scale")


def _after_view(rng) -> list[str]:
    return rng.sample(AFTER_VIEW, k=len(AFTER_VIEW)) if rng.random() < 0.5 else []


#: the offset views, toward the method's spelling, a slice, the whole; the row-major
#: copy toward a plain one
FORMS: tuple[Form, ...] = (
    Form("dense_clone", ATEN, 1, infer_same,
         lambda a, at, d: f"{a[0]}.clone(memory_format=torch.contiguous_format)", feature=BASE_OFFSETS, drawn_as=MEMORY,
         dense_result=True, follow=_after_copy, shrink=Shrink(("clone",), 1)),
    Form("as_strided_fn", VIEW, 1, infer_box, lambda a, at, d: f"torch.as_strided({a[0]}, {box_text(at)})",
         feature=BASE_OFFSETS, drawn_as=MEMORY, draw=draw_box, footprint=footprint_box, dense_root=True,
         over_views=True, follow=_after_view, shrink=Shrink(("as_strided", "head", "alias"), 5, keeps=BOX_KEYS)),
)
