"""The path an eager run takes, and eager runs with rounding made up: dispatch modes.

Depends on torch only: a repro script carries this text (``fuzzer.render.repro``),
so it records the path of a run and makes up rounding exactly as the fuzzer did.
The contract uses both where eager's float32 and the float64 reference may part
(``contract.another_path``) and where a low precision's rounding must be sized per
element (``numeric.tensor_difference``'s noisy references).
"""

import torch

#: the ops that move or select data without rounding it: a noisy reference leaves
#: their results as they are (``NoisyReference``)
EXACT_OPS = frozenset({
    "aten.clone", "aten.copy_", "aten._to_copy", "aten.masked_select", "aten.index", "aten.slice",
    "aten.select", "aten.cat", "aten.stack", "aten.detach", "aten.alias", "aten.expand", "aten.zeros_like",
    "aten.new_zeros", "aten.new_empty", "aten.empty_like", "aten.lift_fresh", "aten.t", "aten.transpose",
    "aten.unsqueeze", "aten.view", "aten._unsafe_view", "aten.narrow", "aten.relu", "aten.neg",
})


def modes():
    """The dispatch modes the eager reference runs use (built on first use: torch's
    ``TorchDispatchMode``)."""
    from torch._ops import HigherOrderOperator
    from torch.utils._python_dispatch import TorchDispatchMode

    class PathRecorder(TorchDispatchMode):
        """Records the path a run takes: each op's name and the shapes it returns, and
        the ints and bools it decides (``.item()``, a ``torch.cond`` predicate).  Two
        runs of one program on one binding that record the same path took the same
        branches and sizes from data."""

        supports_higher_order_operators = True

        def __init__(self) -> None:
            super().__init__()
            self.path: list = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            if isinstance(func, HigherOrderOperator):
                pred = args[0] if args else None
                decided = bool(pred) if isinstance(pred, torch.Tensor) and pred.numel() == 1 else None
                self.path.append((func.name(), decided))
                return func(*args, **(kwargs or {}))
            out = func(*args, **(kwargs or {}))
            self.path.append((str(func.overloadpacket), _shape_of(out)))
            return out

    class NoisyReference(PathRecorder):
        """A float64 run with the rounding of a low precision made up: every result of
        an op that computes (not one that only moves data) is multiplied in place by
        ``1 + u``, ``u`` uniform in ``[-unit, unit]`` from a seeded generator.  How far
        such a run lands from the exact reference at an element is how far rounding
        errors can carry there: what can cancel into that element."""

        def __init__(self, unit: float, seed: int) -> None:
            super().__init__()
            self.unit = unit
            self.generator = torch.Generator().manual_seed(seed)

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            out = super().__torch_dispatch__(func, types, args, kwargs)
            if isinstance(func, HigherOrderOperator) or str(func.overloadpacket) in EXACT_OPS:
                return out
            schema = getattr(func, "_schema", None)
            if schema is not None and any(r.alias_info is not None and not r.alias_info.is_write
                                          for r in schema.returns):
                return out  # a view: its base was perturbed where it was computed
            # what it returns, and what it writes (a mutating custom op returns nothing)
            written = [a for a, arg in zip(args, schema.arguments if schema is not None else ())
                       if arg.alias_info is not None and arg.alias_info.is_write]
            for t in _tensors([out, written]):
                if t.is_floating_point() and t.numel():
                    noise = torch.rand(t.shape, generator=self.generator, dtype=torch.float64)
                    t.mul_((noise * 2 - 1).mul_(self.unit).add_(1).to(device=t.device, dtype=t.dtype))
            return out

    return PathRecorder, NoisyReference


def _tensors(value) -> list:
    """The distinct tensors in a result or argument list (nested lists too)."""
    if isinstance(value, torch.Tensor):
        return [value]
    found: list = []
    for v in value if isinstance(value, (tuple, list)) else ():
        found += [t for t in _tensors(v) if not any(t is u for u in found)]
    return found


def _shape_of(value):
    if isinstance(value, torch.Tensor):
        return tuple(value.shape)
    if isinstance(value, bool) or isinstance(value, int):
        return value
    if isinstance(value, (tuple, list)):
        return tuple(_shape_of(v) for v in value)
    return None
