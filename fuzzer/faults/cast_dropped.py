"""cast-dropped: a custom op's autocast rule is skipped while the program is traced.

Why this is realistic.  ``CustomOpDef.register_autocast`` registers a Python kernel at
the device's ``Autocast`` key that casts the op's floating inputs with
``torch._library.custom_ops._cast`` and calls the op with autocast off.  Compiled code
runs what tracing recorded, and tracing meets that kernel only under fake tensors
(Dynamo's example values, AOTAutograd's trace), in a dispatch that excludes and
re-includes the autocast keys around every mode it passes through; a regression that
lets a traced call slip past the rule (the autocast key excluded once too often, a
fake tensor not taken for a tensor of the region's device) records the op on its
uncast inputs.  Eager casts and compiled does not: the op computes in another dtype
and returns it.  Nothing crashes and the values are close, so only the dtype of what
the call returns shows it.

The dynamic variant skips the cast only when an input has symbolic sizes.

Patched: ``torch._library.custom_ops._cast``, which the rule's kernel looks up at each
call: under fake tensors it hands the inputs back uncast.  Eager runs, on real tensors,
are untouched.
"""

from __future__ import annotations

import dataclasses

from fuzzer.faults import _patching
from fuzzer.faults._fault import CAST_DROPPED, Fault

CAST = "torch._library.custom_ops:_cast"


def _traced(value) -> bool:
    """Whether ``value`` (an op's arguments) holds a fake tensor: the call is being traced."""
    from torch._subclasses.fake_tensor import is_fake

    if isinstance(value, (list, tuple)):
        return any(_traced(v) for v in value)
    return is_fake(value)


def _build(dynamic: bool):
    def build(current):
        original = current(CAST)

        def _cast(value, device_type, dtype):
            if _traced(value) and (not dynamic or _patching.has_free_symbols(value)):
                return value  # the bug: the rule's cast skipped while tracing
            return original(value, device_type, dtype)

        return {CAST: _cast}
    return build


#: the twin draws its programs as the plain fault does: only programs with an autocast
#: region meet it
_PLAIN, _TWIN = Fault.twins(
    _build,
    " when an input has symbolic sizes",
    name="cast-dropped",
    bug_class=CAST_DROPPED,
    expected_kind="wrong-output",
    description=("a custom op's register_autocast rule (torch._library.custom_ops._cast) hands its inputs back "
                 "uncast while the program is traced{scope}, so compiled code computes the op in the region's "
                 "input dtype and returns that dtype"),
    targets=(CAST,),
    features=(("autocast-rules", 1.0),),
)
FAULTS = (_PLAIN, dataclasses.replace(_TWIN, features=_PLAIN.features))
