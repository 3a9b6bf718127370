"""Drop returned values: all of them first, then one at a time."""

from __future__ import annotations

from dataclasses import dataclass

from fuzzer.reduce.edits import with_program
from fuzzer.reduce.passes.base import Candidates, State


@dataclass(frozen=True)
class DropOutputs:
    name: str = "outputs"

    def candidates(self, state: State) -> Candidates:
        outs = state.best.program.outputs
        if outs and (yield with_program(state.best, outputs=())):
            return
        for o in outs:
            current = state.best.program.outputs
            if o in current:
                yield with_program(state.best, outputs=tuple(x for x in current if x != o))
