"""What a run returned that is not a value: a tracing artifact where a real tensor was due.

Depends on torch only: ``fuzzer.render.repro`` pastes this module's text into each
script (before ``observe``, which records such a value as it is, and the contract,
whose clause 1 calls it ``not-real``), so a repro tells a value from an artifact
exactly as the fuzzer did.
"""

from __future__ import annotations

import torch


def not_real(value) -> str | None:
    """What a returned value is instead of a real tensor (None: it is one): not a
    tensor at all, a tensor subclass (a ``FakeTensor`` or ``FunctionalTensor`` that
    tracing left behind), a wrapper of functorch's transforms or of functionalization
    (its Python class is ``torch.Tensor``), or a tensor of the meta device (sizes and no
    data).  Eager returns real tensors: a compiled run that returns one of these
    returned a tracing artifact, not a value (``contract``'s ``not-real``)."""
    if not isinstance(value, torch.Tensor):
        return f"a {type(value).__name__}, not a tensor"
    if type(value) is not torch.Tensor and not isinstance(value, torch.nn.Parameter):
        return f"a {type(value).__name__}, not a plain tensor"
    functorch = getattr(torch._C, "_functorch", None)
    wrapped = getattr(functorch, "is_functorch_wrapped_tensor", None)
    if wrapped is not None and wrapped(value):
        return "a tensor wrapped by a functorch transform"
    functional = getattr(torch, "_is_functional_tensor", None)
    if functional is not None and functional(value):
        return "a tensor wrapped by functionalization"
    if value.is_meta:
        return "a tensor of the meta device (no data)"
    return None


def kept(value):
    """A returned value as its run records it: a real tensor copied (a later run cannot
    change it); anything else as it is (what it is is judged, and it may hold no data to
    copy: :func:`not_real`)."""
    return value.detach().clone() if not_real(value) is None else value
