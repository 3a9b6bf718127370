"""index-put-overlap: an index write's values are read while the write stores into them.

Why this is realistic.  It is a fixed upstream bug put back.  Inductor lowers an in-place
``index_put_`` (``index_put_impl_`` in ``torch/_inductor/lowering.py``) to a loop that
stores into ``self``; its values are an unrealized computation that the loop loads as
it goes.  Where those values read ``self`` (``x[p] = x.flip(0)``: the reinplaced form of
a write whose value reads other positions of the tensor it writes) a load may see an
element an earlier iteration already stored.  pytorch/pytorch#138908 was that bug; its
fix realizes the values into a buffer of their own first, whenever they read ``self``
(``may_realize``).  Here that step is skipped: the values are loaded from the memory
the loop writes.

The dynamic variant does so only when the written tensor has symbolic sizes.  Only
programs of the ``index-writes`` feature write a tensor by index from values that read
it, so the self-test draws them.

Patched: ``torch._inductor.lowering.index_put_impl_``, which the lowerings of
``index_put_`` and ``_unsafe_index_put_`` call by name.
"""

from __future__ import annotations

import dataclasses

from fuzzer.faults import _patching
from fuzzer.faults._fault import WRITE_ORDER, Fault

IMPL = "torch._inductor.lowering:index_put_impl_"
#: only programs of this feature write a tensor by index from values that read it
FEATURES = (("index-writes", 1.0),)


def _build(dynamic: bool):
    def build(current):
        original = current(IMPL)

        def index_put_impl_(self, indices, values, accumulate, check, may_realize=False):
            if not dynamic or _patching.has_free_symbols(self):
                may_realize = False  # the bug: values that read ``self`` stay lazy
            return original(self, indices, values, accumulate, check, may_realize=may_realize)

        return {IMPL: index_put_impl_}
    return build


#: the fault and its twin, each drawing the programs of ``index-writes`` (the twin too:
#: ``Fault.twins`` leaves it the default features)
_PLAIN, _TWIN = Fault.twins(
    _build, " when the tensor has symbolic sizes",
    name="index-put-overlap",
    bug_class=WRITE_ORDER,
    expected_kind="wrong-mutation",
    description=("Inductor's index_put_ lowering (lowering.index_put_impl_) loads values that read the tensor it "
                 "writes while it stores into it, without realizing them first (the fix of pytorch/pytorch#138908 "
                 "undone){scope}"),
    targets=(IMPL,),
    features=FEATURES,
)
FAULTS = (_PLAIN, dataclasses.replace(_TWIN, features=FEATURES))
