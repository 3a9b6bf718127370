"""Drop inputs nothing reads or returns, with their marks and the symbols no longer
read; a window's base stays while the window does (its dims are the window's), an
opaque object's seed while the object does, and a pair's input and partner while the
pair does (``reduce.passes.plain`` ends it)."""

from __future__ import annotations

from dataclasses import dataclass

from fuzzer.reduce.edits import drop_unused_symbols, with_program, without_input
from fuzzer.reduce.passes.base import Candidates, State


@dataclass(frozen=True)
class DropUnusedInputs:
    name: str = "inputs"

    def candidates(self, state: State) -> Candidates:
        for inp in state.best.program.inputs:
            p = state.best.program
            if any(inp.name in s.args for s in p.body) or inp.name in p.outputs \
                    or inp.name in {w[1] for w in p.mode.windows} | {o[2] for o in p.mode.objects} \
                    or inp.name in {n for pair in p.mode.pairs for n in pair}:
                continue  # a window's base, an object's seed, a pair's part: the mode and plain passes first
            yield drop_unused_symbols(with_program(state.best, inputs=tuple(i for i in p.inputs if i is not inp),
                                                   mode=without_input(p.mode, inp.name)))
