"""The schedule: how a feedback campaign splits its programs between fresh
generation and each mutation, and which features fresh programs get, by what pays.

Whether a program is fresh or a mutant follows each side's new bugs per compile
(``Mix``).  Each mutation is an *arm* of a bandit, which chooses the mutation (fresh
programs are an arm too, recorded, chosen only by the mix).  A program's reward is
what it gave: a token no program showed before, a new bug; a finding of a bug found
before costs (its confirmation, its classification, a full shrink while the bug wants
examples) and is what the campaign steers away from.  Arms are chosen by UCB1 over a
window of their latest rewards, so an arm that stops paying loses its share.  Fresh
programs draw each feature with its weight scaled by the new bugs that needed it per
compile spent on it, within bounds, so no feature is ever switched off or always on.

``SCHEDULE`` holds every knob, in one place; docs/campaigns.md explains them.
"""

from __future__ import annotations

import math
import random
from collections import deque
from dataclasses import dataclass, field

FRESH = "fresh"


@dataclass(frozen=True)
class Schedule:
    #: programs drawn fresh before any mutation: the pool needs seeds first
    warmup: int = 16
    #: programs the pool keeps (the worthiest)
    pool_cap: int = 400
    #: UCB1's exploration constant (rewards are of order 1)
    exploration: float = 0.6
    #: latest rewards per arm its mean is taken over
    window: int = 200
    #: reward of a program with a token no program showed before, and per such token
    #: beyond the first (up to ``novel_cap`` of them)
    novel: float = 1.0
    per_novel: float = 0.1
    novel_cap: int = 10
    #: reward of a new bug (new to the corpus the campaign saves into)
    new_bug: float = 5.0
    #: reward of a finding of a bug found before (another example of it, or a count)
    known_bug: float = -0.5
    #: a seed's worth is divided by this for each known bug it or its mutants hit, and
    #: multiplied by ``bug_bonus`` for each new bug it found
    known_penalty: float = 4.0
    bug_bonus: float = 4.0
    #: bounds of a feature's weight
    feature_floor: float = 0.05
    feature_ceiling: float = 0.9
    #: pseudo-bugs a feature's yield is shrunk toward the campaign's by: with two, a
    #: feature needs about two new bugs more than its share before it doubles
    feature_prior: float = 2.0
    #: how far a feature's weight may move from its base, as a factor
    feature_factor: float = 3.0
    #: each program's tallies fade by this factor per program after it, so a feature's
    #: weight follows what it pays now (a memory of about 200 programs, some ten new
    #: bugs): a feature whose bugs were new early and are all found by now stops being
    #: favoured
    feature_decay: float = 0.995
    #: a fresh program or mutant more likely than this to hit a bug found before, as the
    #: bug's triggers tell (``fuzzer.feedback.triggers``), is drawn again
    risk_limit: float = 0.3
    #: draws of a fresh program (its own seed's first) before the least risky is taken
    redraws: int = 8
    #: fresh programs that risk no known bug drawn for an index, of which the most novel
    #: (``fuzzer.feedback.novelty``) is taken
    candidates: int = 4
    #: the share of programs taken as first drawn, whatever they risk: the triggers
    #: learn how often a match hits from these, and no bug hides behind a known one
    explore: float = 0.1
    #: the share of programs (after ``warmup``) that are mutants at least, and at most:
    #: between them it follows how mutants' new bugs per compile compare with fresh
    #: programs' (``Mix``)
    mutant_floor: float = 0.05
    mutant_ceiling: float = 0.3
    #: pseudo-bugs each side of ``Mix`` is shrunk toward the campaign's yield by
    mix_prior: float = 2.0


SCHEDULE = Schedule()


@dataclass
class Arm:
    name: str
    rewards: deque = field(default_factory=deque)
    #: the compiles each of those rewards took (``Outcome.compiles``), in step with them
    compiles: deque = field(default_factory=deque)
    plays: int = 0
    total: float = 0.0
    #: wall seconds its programs took, from being handed out to being learnt from
    #: (trial, shrink, triage): what the arm's rewards cost, recorded, not steered by
    seconds: float = 0.0

    def add(self, reward: float, window: int, seconds: float = 0.0, compiles: int = 1) -> None:
        self.plays += 1
        self.total += reward
        self.seconds += seconds
        self.rewards.append(reward)
        self.compiles.append(max(1, compiles))
        while len(self.rewards) > window:
            self.rewards.popleft()
        while len(self.compiles) > len(self.rewards):
            self.compiles.popleft()

    @property
    def mean(self) -> float:
        return sum(self.rewards) / len(self.rewards) if self.rewards else 0.0

    @property
    def mean_compiles(self) -> float:
        return sum(self.compiles) / len(self.compiles) if self.compiles else 1.0

    @property
    def cost(self) -> float:
        """Mean seconds a program of this arm took."""
        return self.seconds / self.plays if self.plays else 0.0


class Bandit:
    """UCB1 over the arms' windowed means, each per compile: an arm's mean reward is
    scaled by how many compiles its programs took against the arms' mean, so an arm
    whose programs pay half as much at twice the cost (a splice's longer program and its
    findings' shrinks) scores a quarter.  Compiles, not seconds: a campaign's programs
    must not depend on the machine's speed.  An arm never played is played first."""

    def __init__(self, arms: list[str], schedule: Schedule = SCHEDULE) -> None:
        self.schedule = schedule
        self.arms = {name: Arm(name) for name in arms}

    def choose(self, rng: random.Random, allowed: list[str]) -> str:
        for name in allowed:
            if not self.arms[name].plays:
                return name
        n = sum(len(self.arms[a].rewards) for a in allowed) or 1
        typical = sum(sum(self.arms[a].compiles) for a in allowed) / n
        best, score = allowed[0], -math.inf
        for name in allowed:
            arm = self.arms[name]
            s = arm.mean * typical / arm.mean_compiles
            s += self.schedule.exploration * math.sqrt(2 * math.log(n) / max(1, len(arm.rewards)))
            s += rng.random() * 1e-6  # ties broken by the rng, deterministically
            if s > score:
                best, score = name, s
        return best

    def reward(self, name: str, reward: float, seconds: float = 0.0, compiles: int = 1) -> None:
        self.arms[name].add(reward, self.schedule.window, seconds, compiles)

    def to_json(self) -> dict:
        return {a.name: {"plays": a.plays, "total": a.total, "seconds": round(a.seconds, 2),
                         "rewards": list(a.rewards), "compiles": list(a.compiles)} for a in self.arms.values()}

    def load(self, data: dict) -> None:
        for name, d in data.items():
            if name in self.arms:
                arm = self.arms[name]
                arm.plays, arm.total = int(d["plays"]), float(d["total"])
                arm.seconds = float(d.get("seconds", 0.0))  # none in states saved before it was kept
                arm.rewards = deque(float(r) for r in d["rewards"])
                # none in states saved before they were kept: each reward took one
                arm.compiles = deque(int(c) for c in d.get("compiles", [1] * len(arm.rewards)))


class Mix:
    """Whether program ``i`` is a mutant or fresh: by Thompson sampling on new bugs per
    compile, each side's rate drawn from its Gamma posterior (shrunk toward the
    campaign's yield by ``Schedule.mix_prior`` pseudo-bugs), between a floor and a
    ceiling on the mutants' share.

    New bugs, not new tokens: mutants show new tokens readily (a splice's program has
    pairs no fresh one has) and mostly hit the bugs their parents did, so a bandit
    paid in tokens gave them a quarter of a campaign's time for a third of fresh
    programs' new bugs a second.  Compiles rather than seconds, as the bandit's, so
    ``--jobs 0`` stays deterministic.  The tallies fade as the feature weights' do,
    so mutants win their share back once fresh programs stop finding."""

    SIDES = ("fresh", "mutant")

    def __init__(self, schedule: Schedule = SCHEDULE) -> None:
        self.schedule = schedule
        #: side -> [compiles, new bugs]
        self.tally: dict[str, list[float]] = {side: [0.0, 0.0] for side in self.SIDES}

    def add(self, mutant: bool, compiles: int, new_bugs: int) -> None:
        for t in self.tally.values():
            t[:] = [x * self.schedule.feature_decay for x in t]
        t = self.tally[self.SIDES[mutant]]
        t[0] += max(1, compiles)
        t[1] += new_bugs

    def rate(self, side: str, rng: random.Random | None = None) -> float:
        """The side's new bugs per compile: its posterior mean, or a draw from it."""
        k = self.schedule.mix_prior
        compiles = sum(t[0] for t in self.tally.values())
        bugs = sum(t[1] for t in self.tally.values())
        # the campaign's yield, as if one bug had come in the compiles so far
        typical = (bugs + 1) / (compiles + 1)
        c, b = self.tally[side]
        shape, scale = b + k, 1 / (c + k / typical)
        return rng.gammavariate(shape, scale) if rng else shape * scale

    def mutate(self, rng: random.Random) -> bool:
        s = self.schedule
        floor, ceiling = rng.random() < s.mutant_floor, rng.random() < s.mutant_ceiling
        better = self.rate("mutant", rng) > self.rate("fresh", rng)
        return floor or (ceiling and better)

    def share(self, draws: int = 1000) -> float:
        """The mutants' share of programs now, estimated (for the reader: ``stats``)."""
        rng = random.Random(0)
        return sum(self.mutate(rng) for _ in range(draws)) / draws

    def to_json(self) -> dict:
        return {side: list(t) for side, t in self.tally.items()}

    def load(self, data: dict) -> None:
        for side, t in data.items():
            if side in self.tally:
                self.tally[side] = [float(x) for x in t]


class FeatureWeights:
    """Each feature's weight for fresh programs, moved by the new bugs that needed it
    per compile spent on programs that had it.

    A bug's shrunk example keeps only what the bug needs, its features too (the
    shrinker drops statements, marks, gradients and dtypes the bug does without), so a
    new bug credits just the features its example still uses, not every feature its
    program happened to draw.  A feature's lift is its yield against the campaign's,
    shrunk toward one by ``feature_prior`` pseudo-bugs so that it moves only on
    evidence: ``(bugs needing f + k) / (compiles with f * bugs / compiles + k)``.  The
    tallies fade (``Schedule.feature_decay``), so a feature whose bugs were all found
    in a campaign's first minutes does not stay favoured.  New bugs, not new tokens or
    findings of bugs found before: what a feature's programs mostly do is hit the
    bugs it is known for, and a feature is worth drawing for the bugs it has not yet
    shown."""

    def __init__(self, base: dict[str, float], schedule: Schedule = SCHEDULE) -> None:
        self.base, self.schedule = dict(base), schedule
        #: feature -> [compiles of programs with it, new bugs that needed it]
        self.tally: dict[str, list[float]] = {f: [0.0, 0.0] for f in base}
        #: [compiles, new bugs] of every program
        self.total: list[float] = [0.0, 0.0]

    def add(self, features: set[str], compiles: int, needed: list[set[str]] = ()) -> None:
        """Count a program of ``features`` that cost ``compiles`` and found new bugs whose
        examples use the features of each set of ``needed``."""
        decay = self.schedule.feature_decay
        for t in [*self.tally.values(), self.total]:
            t[:] = [x * decay for x in t]
        self.total[0] += compiles
        self.total[1] += len(needed)
        for f in features & self.tally.keys():
            self.tally[f][0] += compiles
        for need in needed:
            for f in need & self.tally.keys():
                self.tally[f][1] += 1

    def lift(self, feature: str) -> float:
        """How much more than the campaign's the feature's programs yield (1: no evidence)."""
        s = self.schedule
        compiles, bugs = self.tally[feature]
        expected = compiles * self.total[1] / self.total[0] if self.total[0] else 0.0
        lift = (bugs + s.feature_prior) / (expected + s.feature_prior)
        return min(s.feature_factor, max(1 / s.feature_factor, lift))

    def table(self) -> dict[str, float]:
        s = self.schedule
        return {f: w if w <= 0 else round(min(s.feature_ceiling, max(s.feature_floor, w * self.lift(f))), 3)
                for f, w in self.base.items()}

    def to_json(self) -> dict:
        return {"tally": {f: list(t) for f, t in self.tally.items()}, "total": list(self.total)}

    def load(self, data: dict) -> None:
        if "tally" not in data:  # tallies of rewards, saved before bugs were credited: start afresh
            return
        for f, t in data["tally"].items():
            if f in self.tally:
                self.tally[f] = [float(x) for x in t]
        self.total = [float(x) for x in data.get("total", (0.0, 0.0))]
