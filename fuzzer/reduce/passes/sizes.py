"""Smaller shapes: merge two symbols, drop a dim of an input, then shrink each binding's
sizes toward the symbols' minimums (to the minimum, half, one less)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass

from fuzzer.program.ir import Case, Input
from fuzzer.reduce.edits import drop_unused_symbols, merge_symbols, with_program, without_dim
from fuzzer.reduce.passes.base import Candidates, State, first_taken_then_again


def size_edits(case: Case) -> Iterator[Case]:
    """Each single shape simplification of ``case``."""
    p = case.program
    # merge a symbol into another (fewer distinct sizes)
    for a in p.symbols:
        for b in p.symbols:
            if a < b:
                yield merge_symbols(case, b, a)
    # drop a dim of an input (lower rank)
    for i, inp in enumerate(p.inputs):
        for k in range(len(inp.dims)):
            if len(inp.dims) > 1:
                dims = inp.dims[:k] + inp.dims[k + 1:]
                inputs = p.inputs[:i] + (Input(inp.name, dims, inp.dtype),) + p.inputs[i + 1:]
                yield drop_unused_symbols(with_program(case, inputs=inputs, mode=without_dim(p.mode, inp.name, k)))
    # smaller sizes, and smaller minimums
    for bi, b in enumerate(case.bindings):
        for s, v in b.items():
            lo = p.sym_min.get(s, 0)
            for smaller in sorted({lo, v // 2, v - 1}):
                if lo <= smaller < v:
                    nb = list(case.bindings)
                    nb[bi] = {**b, s: smaller}
                    yield dataclasses.replace(case, bindings=tuple(nb))


@dataclass(frozen=True)
class SmallerSizes:
    name: str = "sizes"

    def candidates(self, state: State) -> Candidates:
        return first_taken_then_again(size_edits, state)
