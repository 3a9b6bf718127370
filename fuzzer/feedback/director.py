"""The director: the parent's side of a feedback campaign.

For each program index it decides what the program is (``next``): drawn fresh, with
the feature weights that pay, or a mutant of a pooled program (as often as mutants'
new bugs per compile earn, ``Mix``), by the mutation the bandit chooses; drawn again while it is likely to hit a bug found before (its
``triggers``); and, fresh, the most novel of those that are not (``novelty``).  When
the program's report comes back (``observe``) it counts the signal and the program's
pairs, rewards the arm, credits the features of each new bug, learns each finding's
bug, and pools the program if it showed something new.  Workers
and Ray actors never see the pool: the parent sends each one the case to try, so all
of them share one pool.

Reproducibility: every choice for index ``i`` draws from a stream seeded by the
campaign seed and ``i``, and from the pool as the reports before it left it.  With
``--jobs 0`` the reports arrive in index order, so the same seed (and torch) gives the
same programs; with workers, which report comes first depends on timing, and so do
the pool and the programs after it.  Every entry carries its whole program, so a
finding replays without the pool.
"""

from __future__ import annotations

import dataclasses
import random
import time
from dataclasses import dataclass

from fuzzer.feedback.mutate import MUTATIONS, Context, mutate
from fuzzer.feedback.novelty import Novelty
from fuzzer.feedback.seeds import Pool, Seed
from fuzzer.feedback.schedule import FRESH, SCHEDULE, Bandit, FeatureWeights, Mix, Schedule
from fuzzer.feedback.triggers import Triggers, traits
from fuzzer.limits import FEEDBACK
from fuzzer.program.generate import BUILTIN, OpSet, derive_seed, generate
from fuzzer.program.ir import Case, Program

#: statuses that say nothing of the compiler: not pooled, no reward either way
NOT_JUDGED = ("invalid", "internal-error", "nondeterministic")


@dataclass(frozen=True)
class Recipe:
    """What program ``index`` of a campaign is."""

    index: int
    #: the index's program seed (``generate.program_seed``)
    seed: int
    #: ``fresh``, a mutation's name, or ``blind`` (the worker draws the program from
    #: ``seed`` as a campaign without feedback does)
    arm: str
    case: Case | None = None
    #: the index of the pooled program it mutates
    parent: int | None = None
    #: programs drawn for the index (the first, and those drawn again for their risk)
    draws: int = 1
    #: how likely it was, by the triggers, to hit a bug found before
    risk: float = 0.0
    #: the bugs whose held examples each draw set aside held (``fuzzer.campaign.avoidance``)
    avoided: tuple[tuple[str, ...], ...] = ()


@dataclass(frozen=True)
class Outcome:
    """What a tried program gave, as the parent saw it saved."""

    status: str
    signal: tuple[str, ...] = ()
    kinds: tuple[str, ...] = ()
    new_bugs: int = 0
    #: findings of bugs found before it (the corpus had the bug, whether or not its
    #: examples were full): what the campaign steers away from
    known: int = 0
    #: each finding's bug, the program its entry holds (shrunk, or shrunk a little: what
    #: the triggers learn the bug by) and whether the bug is new with it (its features
    #: are those the bug needed, which the feature weights credit)
    bugs: tuple[tuple[str, Program, bool], ...] = ()
    #: the compiles it took: its trial's, its findings' shrinks' and triages' (what it
    #: cost, counted the same on any machine)
    compiles: int = 1


class Director:
    def __init__(self, seed: int, features: dict[str, float], ops: OpSet = BUILTIN,
                 schedule: Schedule = SCHEDULE) -> None:
        self.seed, self.ops, self.schedule = seed, ops, schedule
        self.on = frozenset(f for f, w in features.items() if w > 0)
        self.pool = Pool(cap=schedule.pool_cap, known_penalty=schedule.known_penalty, bug_bonus=schedule.bug_bonus)
        self.bandit = Bandit([FRESH, *MUTATIONS], schedule)
        self.weights = FeatureWeights(features, schedule)
        self.mix = Mix(schedule)
        self.triggers = Triggers()
        self.novelty = Novelty()
        self.in_flight: dict[int, Recipe] = {}
        #: when each program in flight was handed out (``time.monotonic``): its arm's cost
        self.issued: dict[int, float] = {}
        #: mutants the IR refused, by mutation (a fresh program was drawn instead)
        self.discarded: dict[str, int] = {}
        self.played = 0

    # ---------------------------------------------------------------- choosing
    def next(self, index: int, program_seed: int) -> Recipe:
        rng = random.Random(derive_seed("feedback", self.seed, index))
        arm = FRESH
        if self.played >= self.schedule.warmup and self.pool.seeds and self.mix.mutate(rng):
            allowed = [m for m, spec in MUTATIONS.items() if not spec.needs_donor or len(self.pool.seeds) > 1]
            arm = self.bandit.choose(rng, allowed)
        # taken as first drawn, whatever it risks: how the triggers learn what a match is worth
        explore = rng.random() < self.schedule.explore
        recipe = None
        if arm != FRESH:
            recipe = self._mutant(index, program_seed, arm, rng, explore)
        if recipe is None:
            recipe = self._fresh(index, program_seed, explore)
        self.in_flight[index] = recipe
        self.issued[index] = time.monotonic()
        return recipe

    def _fresh(self, index: int, program_seed: int, explore: bool) -> Recipe:
        """Of ``Schedule.candidates`` programs that risk no bug found before (the index's
        own seed's first, then seeds of their own; ``Schedule.redraws`` at most), the most
        novel; the least risky where none is safe; the index's own when ``explore``."""
        s, table = self.schedule, self.weights.table()
        drawn: list[Recipe] = []
        for k in range(1 if explore else s.redraws):
            seed = program_seed if k == 0 else derive_seed("redraw", program_seed, k)
            case = generate(seed, features=table, ops=self.ops)
            drawn.append(Recipe(index, program_seed, FRESH, case, risk=self.triggers.risk(traits(case.program))))
            if sum(r.risk <= s.risk_limit for r in drawn) >= s.candidates:
                break
        safe = [r for r in drawn if r.risk <= s.risk_limit]
        if not safe:
            return dataclasses.replace(min(drawn, key=lambda r: r.risk), draws=len(drawn))
        # max keeps the first of equals
        return dataclasses.replace(max(safe, key=lambda r: self.novelty.score(r.case.program)), draws=len(drawn))

    def _mutant(self, index: int, program_seed: int, arm: str, rng: random.Random,
                explore: bool = False) -> Recipe | None:
        parent = self.pool.pick(rng)
        best: Recipe | None = None
        for attempt in range(FEEDBACK.mutant_attempts):
            donor = self.pool.pick(rng, besides=parent) if MUTATIONS[arm].needs_donor else None
            ctx = Context(on=self.on, ops=self.ops, donor=donor.case if donor else None)
            mutant = mutate(arm, parent.case, rng, ctx)
            if mutant is None:
                continue
            mutant = dataclasses.replace(mutant, input_seed=derive_seed("inputs", program_seed))
            risk = self.triggers.risk(traits(mutant.program))
            if best is None or risk < best.risk:
                best = Recipe(index, program_seed, arm, mutant, parent.index, risk=risk)
            if explore or risk <= self.schedule.risk_limit:
                break
        if best is None:
            self.discarded[arm] = self.discarded.get(arm, 0) + 1
            return None
        parent.picks += 1
        return dataclasses.replace(best, draws=attempt + 1)

    # --------------------------------------------------------------- learning
    def reward_of(self, outcome: Outcome, novel: int) -> float:
        """What a program gave: its new tokens, its new bugs; a program that hit a known
        bug gets nothing for new tokens, which that bug's own path through the compiler
        (an error's passes) mostly explains."""
        s = self.schedule
        reward = s.new_bug * outcome.new_bugs + s.known_bug * outcome.known
        if novel and not outcome.known:
            reward += s.novel + s.per_novel * min(s.novel_cap, novel - 1)
        return reward

    def observe(self, index: int, outcome: Outcome) -> float | None:
        """Learn from program ``index``'s outcome; returns its reward (None: not one of
        the director's programs, as after a resume)."""
        recipe = self.in_flight.pop(index, None)
        issued = self.issued.pop(index, None)
        if recipe is None or recipe.case is None:
            return None
        seconds = 0.0 if issued is None else time.monotonic() - issued
        self.played += 1
        if outcome.status in NOT_JUDGED:  # not a play of its arm: neither its reward nor its cost
            return 0.0
        self.triggers.observe(traits(recipe.case.program), {bug for bug, _, _ in outcome.bugs})
        self.novelty.observe(recipe.case.program)
        for bug, program, _ in outcome.bugs:
            self.triggers.learn(bug, program)
        self.weights.add(set(recipe.case.program.features()), outcome.compiles,
                         [set(program.features()) for _, program, new in outcome.bugs if new])
        tokens = set(outcome.signal) | {f"status:{outcome.status}"} | {f"finding:{k}" for k in outcome.kinds}
        novel = self.pool.observe(tokens)
        reward = self.reward_of(outcome, len(novel))
        self.bandit.reward(recipe.arm, reward, seconds, outcome.compiles)
        self.mix.add(recipe.arm != FRESH, outcome.compiles, outcome.new_bugs)
        parent = self.pool.by_index(recipe.parent) if recipe.parent is not None else None
        if parent is not None:
            parent.yielded += bool(novel or outcome.new_bugs)
            parent.known += outcome.known > 0
        # a program whose finding is a known bug shows that bug again in its mutants;
        # one that found a new bug is where the next one is likeliest (``Pool``)
        if (novel or outcome.new_bugs) and not outcome.known:
            self.pool.admit(Seed(recipe.case, frozenset(tokens), index, recipe.arm, bugs=outcome.new_bugs))
        return reward

    # ----------------------------------------------------------- what it holds
    def summary(self) -> dict:
        return {"pool": len(self.pool.seeds), "tokens": len(self.pool.counts),
                "arms": {a.name: [a.plays, round(a.mean, 3), round(a.cost, 2)] for a in self.bandit.arms.values()},
                "features": self.weights.table(), "discarded": dict(self.discarded),
                "mix": {side: round(self.mix.rate(side) * 1000, 3) for side in Mix.SIDES}}

    def line(self) -> str:
        arms = ", ".join(f"{a.name} {a.plays}" for a in self.bandit.arms.values() if a.plays)
        return f"pool {len(self.pool.seeds)}, {len(self.pool.counts)} tokens; " + (arms or "no programs yet")

    def to_json(self) -> dict:
        return {"seed": self.seed, "played": self.played, "pool": self.pool.to_json(),
                "bandit": self.bandit.to_json(), "mix": self.mix.to_json(), "features": self.weights.to_json(),
                "triggers": self.triggers.to_json(), "novelty": self.novelty.to_json(),
                "discarded": dict(self.discarded)}

    def load(self, data: dict) -> None:
        """Restore what a saved campaign's director had learnt (``--resume``)."""
        self.played = int(data.get("played", 0))
        self.pool = Pool.from_json(data.get("pool", {}), cap=self.schedule.pool_cap)
        self.pool.known_penalty, self.pool.bug_bonus = self.schedule.known_penalty, self.schedule.bug_bonus
        self.bandit.load(data.get("bandit", {}))
        self.mix.load(data.get("mix", {}))  # none in states saved before: no evidence yet
        self.weights.load(data.get("features", {}))
        self.triggers = Triggers.from_json(data.get("triggers", {}))  # none in states saved before
        self.novelty = Novelty.from_json(data.get("novelty", {}))
        self.discarded = {str(k): int(v) for k, v in data.get("discarded", {}).items()}


def merged(saved: list[dict]) -> dict:
    """The saved states of several feedback campaigns (shards of one) as one: their
    pools joined (``Pool.merged``), their counts added; the bandit and feature tallies
    are the first's, which a resumed run goes on learning from."""
    pools = [Pool.from_json(d.get("pool", {})) for d in saved]
    pool = pools[0]
    for other in pools[1:]:
        pool = pool.merged(other)
    triggers = Triggers.from_json(saved[0].get("triggers", {}))
    novelty = Novelty.from_json(saved[0].get("novelty", {}))
    for d in saved[1:]:
        triggers = triggers.merged(Triggers.from_json(d.get("triggers", {})))
        novelty = novelty.merged(Novelty.from_json(d.get("novelty", {})))
    first = dict(saved[0])
    discarded: dict[str, int] = {}
    for d in saved:
        for k, v in d.get("discarded", {}).items():
            discarded[k] = discarded.get(k, 0) + int(v)
    return {**first, "played": sum(int(d.get("played", 0)) for d in saved), "pool": pool.to_json(),
            "triggers": triggers.to_json(), "novelty": novelty.to_json(), "discarded": discarded}
