"""batch-dim-lost: a custom op's vmap rule is taken to put its batch dim first while the
program is traced.

Why this is realistic.  ``register_vmap`` registers a kernel at the
``FuncTorchBatched`` key that calls
``torch._functorch.autograd_function.custom_function_call_vmap_helper``: it unwraps the
batched arguments, calls the library's rule, and wraps each result the rule returns
with ``_add_batch_dim`` at the dim the rule says (its ``out_dims``).  Dynamo inlines
``torch.func.vmap`` and runs that helper on fake tensors to learn each call's result,
and AOTAutograd runs it again while it traces the graph; compiled code computes what
those traces recorded.  A rule that keeps the batch where it found it (an elementwise
kernel's ``return op(x), in_dims[0]``) is the common case and returns another dim
than 0 whenever the program batches over another; a regression in the traced path
that drops that ``out_dims`` (a default of 0 taken for "none given", a tuple of one
unpacked as the dim of the first result only) wraps the batch at the front.  Eager
keeps the rule's dim and compiled does not: the result's dims come out permuted, a
wrong shape, or wrong values where the dims are of one size.

The dynamic variant drops it only for a result with symbolic sizes.

Patched: ``torch._functorch.autograd_function._add_batch_dim``, which the helper looks
up at each call: for a fake tensor (a traced call) it wraps the batch at dim 0, the
rule's dim ignored.  Eager runs, on real tensors, are untouched; so are calls whose
rule puts the batch first anyway.
"""

from __future__ import annotations

import dataclasses

from fuzzer.faults import _patching
from fuzzer.faults._fault import BATCH_DIM_LOST, Fault

ADD_BATCH_DIM = "torch._functorch.autograd_function:_add_batch_dim"


def _build(dynamic: bool):
    def build(current):
        original = current(ADD_BATCH_DIM)

        def _add_batch_dim(tensor, out_dim, level):
            from torch._subclasses.fake_tensor import is_fake

            if out_dim != 0 and is_fake(tensor) and (not dynamic or _patching.has_free_symbols(tensor)):
                out_dim = 0  # the bug: the rule's out_dims dropped while tracing
            return original(tensor, out_dim, level)

        return {ADD_BATCH_DIM: _add_batch_dim}
    return build


#: the twin draws its programs as the plain fault does: only calls under vmap meet it
_PLAIN, _TWIN = Fault.twins(
    _build,
    " when the result has symbolic sizes",
    name="batch-dim-lost",
    bug_class=BATCH_DIM_LOST,
    expected_kind="wrong-output",
    description=("a custom op's register_vmap rule's out_dims is dropped while the program is traced{scope} "
                 "(torch._functorch.autograd_function._add_batch_dim wraps a fake result's batch at dim 0), so "
                 "compiled code puts the batch first where the rule kept it elsewhere"),
    targets=(ADD_BATCH_DIM,),
    features=(("vmap-rules", 1.0),),
)
FAULTS = (_PLAIN, dataclasses.replace(_TWIN, features=_PLAIN.features))
