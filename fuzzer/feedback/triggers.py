"""Triggers: what a campaign has learnt of each bug it found, so that the programs it
draws next steer clear of those that would only hit the bug again.

A finding of a bug found before costs the campaign the most and shows it nothing: a
confirmation, a shrink (a full one while the bug wants examples, a short one after)
and a classification, ten to thirty seconds against a clean program's four, and a
compile error hides whatever else its program holds.  Yet the bug says, in its
shrunk example, nearly all it takes to hit it.  So each bug keeps the *traits* of its
examples (``traits``: the forms its statements use, which op feeds which, its mode),
and a program *matches* the bug when it holds every trait of one of them.  The
director draws fresh programs and mutants again while the one it has matches a bug it
is likely to hit (``Schedule.risk_limit``), as a compiler fuzzer campaign sets aside
the constructs of bugs already reported rather than finding them all day.

A match is a guess.  The bug may need more than its example's traits (a dead result,
an operand written twice), or be hit by programs that match none of its examples.  So
each bug's matches are weighed by what came of them: of the matching programs that
were run, how many hit the bug (a Beta(1, 1) estimate, so a bug with no evidence yet
is a coin flip), and a share of matching programs is run whatever it predicts
(``Schedule.explore``), which keeps the estimate honest and leaves no bug hidden
behind a known one for good.  Every finding adds its program's traits to its bug's
examples, the fully shrunk first example and the briefly shrunk counted ones alike,
keeping only the least of them (a superset matches nothing more).

Everything is data: saved with the director, restored by ``--resume``, joined by
``dcefuzz merge``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache

from fuzzer.limits import FEEDBACK
from fuzzer.program.ir import Program
from fuzzer.reduce.order import simpler_forms



@cache
def _simplifies_to(form: str) -> frozenset[str]:
    """The form and every form the shrinker may turn it into (``order.simpler_forms``, transitively):
    a bug's example holds the simplest op that still shows it, and a program with any
    op that simplifies to it matches."""
    out, todo = {form}, [form]
    while todo:
        for simpler in simpler_forms(todo.pop()):
            if simpler not in out:
                out.add(simpler)
                todo.append(simpler)
    return frozenset(out)


def traits(program: Program) -> frozenset[str]:
    """What a program is made of, as far as hitting a bug goes: each form (with the
    forms it simplifies to), each op that feeds another (an input feeding an op is no
    trait: the shrinker moves operands to inputs), and its mode (gradients, a dtype,
    strided or aliased inputs, a module, windows, automatic dynamic, each kind of mark)."""
    out: set[str] = set()
    mode = program.mode
    if mode.grad:
        out.add("mode:grad")
    if mode.dtype != "float32":
        out.add(f"mode:dtype:{mode.dtype}")
    if mode.strided:
        out.add("mode:strided")
    if mode.aliases:
        out.add("mode:aliased")
    if mode.module:
        out.add("mode:module")
    if mode.carry:
        out.add("mode:carry")
    if mode.windows:
        out.add(f"mode:windows{mode.window_calls and ':' + mode.window_calls}")
    if mode.dynamic != "true":
        out.add(f"mode:{mode.dynamic}")
    out.update(f"mark:{how}" for _, _, how in mode.marks)
    made_by: dict[str, frozenset[str]] = {}
    for stmt in program.body:
        forms_ = _simplifies_to(stmt.form)
        out.update(f"form:{f}" for f in forms_)
        for arg in stmt.args:
            out.update(f"edge:{p}>{f}" for p in made_by.get(arg, ()) for f in forms_)
        if stmt.out is not None:
            made_by[stmt.out] = forms_
    return frozenset(out)


@dataclass
class Triggers:
    #: bug id -> the least trait sets of its examples
    examples: dict[str, list[frozenset[str]]] = field(default_factory=dict)
    #: bug id -> [matching programs run, those that hit it]
    runs: dict[str, list[int]] = field(default_factory=dict)

    def learn(self, bug: str, program: Program) -> None:
        """Add a finding's program to its bug's examples (unless one it holds is less)."""
        _keep(self.examples.setdefault(bug, []), traits(program))

    def matched(self, t: frozenset[str]) -> list[str]:
        """The bugs a program of traits ``t`` matches."""
        return [bug for bug, held in self.examples.items() if any(e <= t for e in held)]

    def chance(self, bug: str) -> float:
        """How likely a matching program is to hit ``bug``, from what came of those run."""
        run, hit = self.runs.get(bug, (0, 0))
        return (hit + 1) / (run + 2)

    def risk(self, t: frozenset[str]) -> float:
        """How likely a program of traits ``t`` is to hit a bug found before, as far as
        its matches tell (0: it matches none)."""
        return max((self.chance(bug) for bug in self.matched(t)), default=0.0)

    def observe(self, t: frozenset[str], hit: set[str]) -> None:
        """Count a program that was run: for each bug it matched, whether it hit it."""
        for bug in self.matched(t):
            counts = self.runs.setdefault(bug, [0, 0])
            counts[0] += 1
            counts[1] += bug in hit

    # ------------------------------------------------------------------ as data
    def to_json(self) -> dict:
        return {"examples": {b: [sorted(e) for e in held] for b, held in sorted(self.examples.items())},
                "runs": {b: list(c) for b, c in sorted(self.runs.items())}}

    @classmethod
    def from_json(cls, data: dict) -> Triggers:
        return cls({str(b): [frozenset(map(str, e)) for e in held] for b, held in data.get("examples", {}).items()},
                   {str(b): [int(c[0]), int(c[1])] for b, c in data.get("runs", {}).items()})

    def merged(self, other: Triggers) -> Triggers:
        """Both campaigns' triggers as one: each bug's examples joined (the least kept),
        its runs added."""
        out = Triggers({b: list(held) for b, held in self.examples.items()},
                       {b: list(c) for b, c in self.runs.items()})
        for bug, held in other.examples.items():
            for t in held:
                _keep(out.examples.setdefault(bug, []), t)
        for bug, (run, hit) in other.runs.items():
            counts = out.runs.setdefault(bug, [0, 0])
            counts[0] += run
            counts[1] += hit
        return out


def _keep(held: list[frozenset[str]], t: frozenset[str]) -> None:
    """Add trait set ``t`` to a bug's examples ``held``, in place: not where one held is
    a subset of it (it would match nothing more), and dropping those it is a subset of;
    the least ``FEEDBACK.examples_per_bug`` stay."""
    if any(e <= t for e in held):
        return
    held[:] = [e for e in held if not t <= e] + [t]
    held.sort(key=lambda e: (len(e), sorted(e)))
    del held[FEEDBACK.examples_per_bug:]
