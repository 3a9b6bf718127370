"""Whether a user's op's fake impl tells the truth about its results' strides.

Inductor lays out every buffer by what the fake impl says, and checks the kernel's
result against it (``assert_size_stride``): a fake that returns ``torch.empty_like(x)``
for a kernel that returns a fresh contiguous tensor agrees on contiguous inputs and
lies on a transposed one, and a compiled program then fails where eager runs.  That is
the op's lie, not the compiler's bug.  opcheck's fake test and the eager checks call
the op on contiguous inputs only, so this module calls it once more with every tensor
of rank 2 or more transposed in memory (the same values and shape, the strides of its
transpose) and compares each result's strides, the fake's against the kernel's.
"""

from __future__ import annotations

from fuzzer.user.declared import UserOp
from fuzzer.user.inputs import arguments, input_sets

#: the seed of the check's inputs
SEED = 600


def _layout(t) -> tuple:
    """The strides that matter: those of dims longer than 1."""
    return tuple(s for n, s in zip(t.shape, t.stride()) if n > 1)


def _transposed(value):
    import torch

    if isinstance(value, torch.Tensor) and value.dim() >= 2:
        return value.mT.contiguous().mT
    return value


def fake_strides_differ(op: UserOp, device: str) -> str | None:
    """Why the fake impl's result strides are not the kernel's on transposed inputs
    (None: they agree, or either side refuses such inputs, which the other checks say)."""
    import torch
    from torch._subclasses.fake_tensor import FakeTensorMode

    _, shapes = input_sets(op)[-1]
    args, kwargs = arguments(op, shapes, device, seed=SEED)
    args = [_transposed(a) for a in args]
    kwargs = {k: _transposed(v) for k, v in kwargs.items()}
    if not any(isinstance(v, torch.Tensor) and v.dim() >= 2 for v in list(args) + list(kwargs.values())):
        return None
    try:
        real = op.overload()(*args, **kwargs)
        with FakeTensorMode(allow_non_fake_inputs=True) as mode:
            fake = op.overload()(*[mode.from_tensor(a) if isinstance(a, torch.Tensor) else a for a in args],
                                 **{k: mode.from_tensor(v) if isinstance(v, torch.Tensor) else v
                                    for k, v in kwargs.items()})
    except Exception:  # noqa: BLE001 - a refusal of these inputs is no lie about strides
        return None
    real = [real] if isinstance(real, torch.Tensor) else list(real or ())
    fake = [fake] if isinstance(fake, torch.Tensor) else list(fake or ())
    for i, (r, f) in enumerate(zip(real, fake)):
        if isinstance(r, torch.Tensor) and isinstance(f, torch.Tensor) and tuple(r.shape) == tuple(f.shape) \
                and _layout(r) != _layout(f):
            return (f"on inputs transposed in memory {shapes}, its fake impl gives result {i} strides "
                    f"{tuple(f.stride())} where its kernel gives {tuple(r.stride())}: Inductor lays the buffer "
                    "out by the fake (make the fake's strides the kernel's, e.g. torch.empty(shape) for a "
                    "fresh contiguous result)")
    return None
