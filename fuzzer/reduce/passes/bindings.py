"""Keep only the bindings that fail: each failing one alone first, then all of them."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from fuzzer.reduce.passes.base import Candidates, State


@dataclass(frozen=True)
class FailingBindings:
    name: str = "bindings"

    def candidates(self, state: State) -> Candidates:
        failing = sorted({d.binding for d in state.best_divs})
        best = state.best
        if len(best.bindings) == 1:
            return
        for chosen in [[i] for i in failing] + [failing]:
            if len(chosen) < len(best.bindings):
                if (yield dataclasses.replace(best, bindings=tuple(best.bindings[i] for i in chosen))):
                    return
