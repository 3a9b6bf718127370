"""view-offset-added: an ``as_strided`` of a view reads from the view's offset, not the storage's.

Why this is realistic.  ``torch.as_strided(v, size, stride, storage_offset)`` places
its elements by the offset into ``v``'s *storage*, whatever part of it ``v`` covers:
the view it is taken of only names the storage (its documentation: the result "will
depend on the current layout in memory").  Inductor's lowering merges an
``as_strided`` into the view it is taken of ("Note: Merging views", ``as_strided`` in
``torch/_inductor/lowering.py``): it unwraps the view and lays the new layout over
its storage, taking the view's own offset only where no offset is given.  A
regression that reads the given offset as relative to the view (adding the view's
offset to it, as ``Tensor.as_strided``'s offset is often misread) moves every element
of an ``as_strided`` that reaches out of a narrowed view into its base (feature
``base-offsets``, and ``strided-views``' ``as_strided`` of a view).

The regression planted here: ``GraphLowering.call_function`` (``torch/_inductor/graph.py``)
hands ``aten.as_strided`` of a view with an offset of its own (a ``narrow``, a slice
from a start past 0) that offset added to the one the program gave.

Patched: ``torch._inductor.graph.GraphLowering.call_function``.
"""

from __future__ import annotations

from fuzzer.faults._fault import MUTATION_LOST, Fault

CALL = "torch._inductor.graph:GraphLowering.call_function"


def view_offset(arg):
    """The storage offset of ``arg`` where it is a view (an Inductor ``BaseView``) with a
    layout of its own; None otherwise."""
    from torch._inductor import ir

    data = getattr(arg, "data", None)
    if not isinstance(data, ir.BaseView):
        return None
    layout = data.maybe_get_layout()
    offset = getattr(layout, "offset", 0) if layout is not None else 0
    return None if offset == 0 else offset


def _build(current):
    import torch

    original = current(CALL)

    def call_function(self, target, args, kwargs):
        if target is torch.ops.aten.as_strided.default and len(args) >= 4 and args[3] is not None:
            offset = view_offset(args[0])
            if offset is not None:  # the bug: the given offset read as relative to the view
                args = (*args[:3], args[3] + offset, *args[4:])
        return original(self, target, args, kwargs)

    return {CALL: call_function}


FAULTS = (
    Fault(name="view-offset-added", bug_class=MUTATION_LOST, expected_kind="wrong-output", dynamic_only=False,
          description=("GraphLowering.call_function (torch/_inductor/graph.py) hands aten.as_strided of a view "
                       "with an offset of its own that offset added to the storage offset the program gave, so an "
                       "as_strided that reaches out of a narrowed view into its base reads the wrong elements"),
          targets=(CALL,), build=_build, features=(("base-offsets", 1.0),), seconds=360.0),
)
