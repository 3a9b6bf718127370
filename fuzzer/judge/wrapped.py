"""A tensor subclass a run returned, as the run keeps it: its parts.

Depends on torch and ``artifacts`` only: ``fuzzer.render.repro`` pastes this module's
text into each script, after ``artifacts`` and before ``observe``, which keeps a run's
values with it.

Quantisation and distributed libraries return *wrapper subclasses*: tensors whose data
lives in inner tensors they name (``__tensor_flatten__``), which ``torch.compile``
traces one by one and wraps again at a graph's edge.  A run keeps such a value by what
the contract judges of it (SUBCLASS VALUES): what it is (its class, its flatten
context, its parts' names) and its parts, each kept as any value is.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from fuzzer.judge.artifacts import kept


@dataclass(frozen=True, eq=False)
class Wrapped:
    """A tensor subclass a run returned, as the run keeps it (:func:`kept`): its class's
    name, the repr of its flatten context, and its inner tensors by name, in the order
    its ``__tensor_flatten__`` gives them, each kept so (a part may be a subclass too).
    The contract judges it by its :attr:`form`, then part by part (SUBCLASS VALUES)."""

    kind: str
    context: str
    names: tuple
    parts: tuple

    @property
    def form(self) -> tuple:
        """What it is beyond its parts' data: its class, context and part names, and those of its parts."""
        return (self.kind, self.context, self.names, tuple(form_of(part) for part in self.parts))

    def text(self) -> str:
        return f"{self.kind}({', '.join(self.names)}; context {self.context})"


def form_of(value):
    """A kept value's form (:attr:`Wrapped.form`); None for a plain tensor."""
    return value.form if isinstance(value, Wrapped) else None


def recorded(value):
    """A value as a run keeps it: a wrapper subclass (a tensor whose class has
    ``__tensor_flatten__``, as a quantisation or distributed library's has; no tracing
    artifact has one) as its :class:`Wrapped` parts, anything else as ``artifacts.kept``
    keeps it (a real tensor copied, an artifact as it is).  A subclass's own ``clone``
    would keep it whole, but what the contract reads of it is its parts."""
    if isinstance(value, torch.Tensor) and hasattr(type(value), "__tensor_flatten__"):
        names, context = value.__tensor_flatten__()
        return Wrapped(type(value).__name__, repr(context), tuple(names),
                       tuple(recorded(getattr(value, name)) for name in names))
    return kept(value)


def leaves(value) -> list:
    """The plain tensors of a kept value: itself, or its parts' (in order)."""
    if isinstance(value, Wrapped):
        return [leaf for part in value.parts for leaf in leaves(part)]
    return [value]
