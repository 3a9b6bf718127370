"""The inputs the declaration check calls a user's op on.

Each input set gives every letter of the op's signature one size (0, 1, then 2), and a
last one all different (2, 3, 4, ...), so an op that mixes up two dims shows; a
same-shape op's tensors are all one shape.  Each *variant* is one choice of its
scalars' values: all at their first, then each other value of each scalar with the
rest at their first.  Tensors are drawn as programs draw them: the program's float
dtype, or the fixed dtype an argument takes (``observe.fixed_tensor``), seeded.
"""

from __future__ import annotations

from fuzzer.limits import AUDIT
from fuzzer.user.declared import UserOp

#: every named size of the opcheck inputs takes each of these in turn
SIZES = AUDIT.sizes


def input_sets(op: UserOp) -> list[tuple[str, list[tuple[int, ...]]]]:
    """(label, shapes of the tensor arguments) of every input set the check uses."""
    n = len(op.tensors)
    out = []
    for size in SIZES[1:] if op.nonempty else SIZES:
        shapes = op.gufunc.shapes(lambda letter, s=size: s)
        out.append((f"sizes {size}", shapes or [(size, AUDIT.same_shape_tail)] * n))
    letters = op.gufunc.letters
    distinct = op.gufunc.shapes(lambda letter: AUDIT.distinct_from + letters.index(letter))
    out.append(("distinct sizes", distinct or [(AUDIT.distinct_from + 1, AUDIT.distinct_from)] * n))
    return out


def variants(op: UserOp) -> list[dict]:
    """The scalar values each check runs with: all at their first value, then each other
    value of each scalar with the rest at their first."""
    base = {a.name: a.values[0] for a in op.scalars}
    out = [base]
    for arg in op.scalars:
        out += [{**base, arg.name: v} for v in arg.values[1:]]
    return out


def describe(values: dict) -> str:
    """A variant as the reasons write it: `k=1, flag=True`."""
    return ", ".join(f"{k}={v!r}" for k, v in values.items())


def arguments(op: UserOp, shapes, device: str, seed: int, values: dict | None = None, grad: bool = False,
               dtype: str = "float32"):
    """The op's arguments on one input set: its tensors of ``dtype`` (or the fixed dtype
    each takes, drawn as programs draw theirs), its scalars at ``values``."""
    import torch

    from fuzzer.judge.observe import fixed_tensor

    values = values if values is not None else variants(op)[0]
    gen = torch.Generator().manual_seed(seed)

    def tensor(arg, s):
        if arg.dtype is not None:
            return fixed_tensor(s, arg.dtype, gen).to(device)
        return torch.randn(s, generator=gen).to(device=device, dtype=getattr(torch, dtype)).requires_grad_(grad)

    tensors = [tensor(a, s) for a, s in zip(op.tensors, shapes)]
    sizes = {letter: n for core, shape in zip(op.gufunc.inputs or (), shapes)
             for letter, n in zip(core, shape) if not letter.isdigit()}
    return op.call_arguments(tensors.__getitem__, lambda arg: arg.python(values[arg.name], sizes, device))
