"""What a shrink pass is, and how the shrinker drives one.

A pass is a frozen object with a ``name`` and one method, ``candidates(state)``: a
generator that yields candidate cases, one at a time, and is sent back whether the
shrinker took each one (it was strictly simpler and kept the bug).  It reads the
case to improve from ``state.best`` afresh whenever it needs it, so after a taken
candidate it goes on from that one.  It ends when it has nothing more to offer.

A pass never judges a candidate, never keeps one itself and never counts oracle calls:
the shrinker does all three (``Shrinker.consider``), so every pass keeps the shrinker's
rules without knowing them.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterator
from typing import Protocol

from fuzzer.program.ir import Case

#: what a pass yields (candidates) and is sent back (whether each was taken)
Candidates = Generator[Case, bool, None]


class State(Protocol):
    """The shrinker as a pass sees it: the simplest case so far and its divergences."""

    best: Case
    best_divs: list


class ShrinkPass(Protocol):
    name: str

    def candidates(self, state: State) -> Candidates:
        """Candidate cases, each sent back whether it was taken."""


def drive(shrink_pass: ShrinkPass, consider: Callable[[Case], bool], state: State) -> bool:
    """Offer each of the pass's candidates to ``consider``; whether any was taken."""
    changed = False
    candidates = shrink_pass.candidates(state)
    try:
        candidate = next(candidates)
        while True:
            taken = consider(candidate)
            changed |= taken
            candidate = candidates.send(taken)
    except StopIteration:
        return changed


def first_taken_then_again(edits: Callable[[Case], Iterator[Case]], state: State) -> Candidates:
    """The edits of the best case in order until one is taken, then the edits of that
    one afresh; over when a whole round is refused."""
    while True:
        for candidate in edits(state.best):
            if (yield candidate):
                break
        else:
            return
