"""Delete statements in chunks, from the end, halving the chunk down to one (adaptive
delta debugging).

Deleting a statement deletes what reads its result (``edits.remove_statements``), since
a program cannot use an undefined value; nothing else is ever deleted implicitly:
every deletion is tried, because dead calls are often the trigger.
"""

from __future__ import annotations

from dataclasses import dataclass

from fuzzer.reduce.edits import remove_statements
from fuzzer.reduce.passes.base import Candidates, State


@dataclass(frozen=True)
class DeleteStatements:
    name: str = "statements"

    def candidates(self, state: State) -> Candidates:
        size = max(1, len(state.best.program.body) // 2)
        while True:
            progress = False
            hi = len(state.best.program.body)
            while hi > 0:
                lo = max(0, hi - size)
                # a removal only ever takes statements at or after lo with it
                if (yield remove_statements(state.best, set(range(lo, hi)))):
                    progress = True
                hi = lo
            if size == 1 and not progress:
                return
            if size > 1:
                size //= 2
