"""Simplify how the program runs: no gradients, dynamic=True, float32, no marks,
contiguous inputs, no aliased inputs, no windows (each its own input, the same at
every call), a function rather than a module (its buffers back to
inputs), no opaque object that no statement names; each kept only if the bug needs it."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from fuzzer.program.ir import Case
from fuzzer.reduce.edits import with_mode
from fuzzer.reduce.order import simpler_modes
from fuzzer.reduce.passes.base import Candidates, State, first_taken_then_again


def mode_edits(case: Case) -> Iterator[Case]:
    """``case`` with each single simplification of its mode (``edits.with_mode``)."""
    return (with_mode(case, m) for m in simpler_modes(case.program.mode))


@dataclass(frozen=True)
class SimplerMode:
    name: str = "mode"

    def candidates(self, state: State) -> Candidates:
        return first_taken_then_again(mode_edits, state)
