"""The schedule: how a feedback campaign splits its programs between fresh
generation and each mutation, and which features fresh programs get, by what pays.

Each way of making a program is an *arm* of a bandit (``fresh`` and every mutation of
``fuzzer.feedback.mutate``).  A program's reward is what it gave: a token no program
showed before, a new bug; a finding of a bug found before costs (its confirmation,
its classification, a full shrink while the bug wants examples) and is what the
campaign steers away from.  Arms are chosen by UCB1 over a window of their latest
rewards, so an arm that stops paying loses its share.  Fresh programs draw each
feature with its weight scaled by how much fresh programs with the feature paid
lately against those without, within bounds, so no feature is ever switched off or
always on.

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
    #: bounds of a feature's weight, and fresh programs with (and without) it needed
    #: before its weight moves
    feature_floor: float = 0.05
    feature_ceiling: float = 0.9
    feature_evidence: int = 12
    #: how far a feature's weight may move from its base, as a factor
    feature_factor: float = 3.0
    #: each fresh program's tallies fade by this factor per fresh program after it, so a
    #: feature's weight follows what it pays now (a memory of about 100 programs): a
    #: feature whose bugs were new early and are all found by now stops being favoured
    feature_decay: float = 0.99
    #: a fresh program or mutant more likely than this to hit a bug found before, as the
    #: bug's triggers tell (``fuzzer.feedback.triggers``), is drawn again
    risk_limit: float = 0.3
    #: draws of a fresh program (its own seed's first) before the least risky is taken
    redraws: int = 8
    #: the share of programs taken as first drawn, whatever they risk: the triggers
    #: learn how often a match hits from these, and no bug hides behind a known one
    explore: float = 0.1


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


class FeatureWeights:
    """Each feature's weight for fresh programs, moved by what its programs paid
    lately: the tallies fade (``Schedule.feature_decay``), so the new bugs a feature
    gave in a campaign's first minutes do not keep it favoured once its programs only
    find them again."""

    def __init__(self, base: dict[str, float], schedule: Schedule = SCHEDULE) -> None:
        self.base, self.schedule = dict(base), schedule
        #: feature -> [programs with it, their reward, programs without, their reward]
        self.tally: dict[str, list[float]] = {f: [0, 0.0, 0, 0.0] for f in base}

    def add(self, features: set[str], reward: float) -> None:
        decay = self.schedule.feature_decay
        for f, t in self.tally.items():
            t[:] = [x * decay for x in t]
            if f in features:
                t[0] += 1
                t[1] += reward
            else:
                t[2] += 1
                t[3] += reward

    def table(self) -> dict[str, float]:
        s, out = self.schedule, {}
        for f, w in self.base.items():
            with_n, with_r, without_n, without_r = self.tally[f]
            if w <= 0 or min(with_n, without_n) < s.feature_evidence:
                out[f] = w
                continue
            # rewards may be negative: compare them shifted by the worst a program can get
            lift = (with_r / with_n - s.known_bug + 0.1) / (without_r / without_n - s.known_bug + 0.1)
            lift = min(s.feature_factor, max(1 / s.feature_factor, lift))
            out[f] = round(min(s.feature_ceiling, max(s.feature_floor, w * lift)), 3)
        return out

    def to_json(self) -> dict:
        return {f: list(t) for f, t in self.tally.items()}

    def load(self, data: dict) -> None:
        for f, t in data.items():
            if f in self.tally:
                self.tally[f] = [float(x) for x in t]
