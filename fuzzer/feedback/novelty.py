"""Novelty: how much of a program the campaign has not compiled yet, as pairs of
what it is made of.

A compiler bug is hit by a combination (a view written through after a custom op
read its base; a mark on a dim a data-dependent slice reads), and a combination the
campaign has compiled a hundred times has shown what it has to show.  Blind
generation draws the common combinations over and over: its feature weights and
uniform forms make a few pairs frequent and most rare.  So among fresh programs
that risk no known bug (``fuzzer.feedback.triggers``), the director takes the one
whose pairs of traits (forms as written, mode parts) the programs before it held
least often: the sum over its pairs of ``1 / (1 + times seen)``, as combinatorial
testing covers pairs before it repeats them.  A sum, not a mean: a longer program
compiles more that is new, and costs more for it: over two blind campaigns'
programs (``programs.jsonl``, their seeds regenerated) the half of higher sum found
new bugs at 1.6 times the other half's rate per second in the first fifteen minutes,
and past them still split the few new bugs 6 to 0 where the mean did not (docs/
campaigns.md).  Counted over programs that were run, whatever they found.
"""

from __future__ import annotations

import itertools
from collections import Counter
from dataclasses import dataclass, field

from fuzzer.program.ir import Program


def parts(program: Program) -> frozenset[str]:
    """What a program's pairs are made of: each form as written, and the parts of its
    mode (gradients, a dtype, strided or aliased inputs, a module, windows, automatic
    dynamic, each kind of mark)."""
    mode = program.mode
    out = {f"form:{s.form}" for s in program.body}
    out.update(f"mark:{how}" for _, _, how in mode.marks)
    for flag, name in ((mode.grad, "mode:grad"), (mode.strided, "mode:strided"), (mode.aliases, "mode:aliased"),
                       (mode.module, "mode:module"), (mode.carry, "mode:carry"), (mode.windows, "mode:windows"),
                       (mode.dtype != "float32", f"mode:{mode.dtype}"),
                       (mode.dynamic != "true", f"mode:{mode.dynamic}")):
        if flag:
            out.add(name)
    return frozenset(out)


def pairs(program: Program) -> list[tuple[str, str]]:
    """Every pair of the program's parts (and each part alone, paired with itself)."""
    ps = sorted(parts(program))
    return [(p, p) for p in ps] + list(itertools.combinations(ps, 2))


@dataclass
class Novelty:
    #: pair -> programs run that held it
    seen: Counter = field(default_factory=Counter)

    def score(self, program: Program) -> float:
        """The sum over the program's pairs of one over one more than the times seen."""
        return sum(1.0 / (1 + self.seen[p]) for p in pairs(program))

    def observe(self, program: Program) -> None:
        self.seen.update(pairs(program))

    def to_json(self) -> dict:
        return {"seen": [[a, b, n] for (a, b), n in sorted(self.seen.items())]}

    @classmethod
    def from_json(cls, data: dict) -> Novelty:
        return cls(Counter({(str(a), str(b)): int(n) for a, b, n in data.get("seen", ())}))

    def merged(self, other: Novelty) -> Novelty:
        return Novelty(self.seen + other.seen)
