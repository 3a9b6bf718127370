"""The pool: programs that made the compiler do something rare, kept to be mutated.

A program joins when its signal (``fuzzer.judge.compiler_signal``) holds a token no program of
the campaign showed before, as an input joins a coverage-guided fuzzer's queue when
it reaches a new edge.  Each token's count (programs that showed it) is kept for all
programs, pooled or not, so a seed's worth is what is rare in it: the sum over its
tokens of one over their counts (the rarity that AFL++'s ``rare`` schedule and
libFuzzer's entropic power schedule favour).  A seed's worth falls with each time it
was picked, and with each known bug its mutants hit (a program that hits a known bug
keeps hitting it); the pool keeps the ``cap`` worthiest.  A program that found a new
bug joins too, whatever its tokens, its worth multiplied for each such bug: bugs of
a compiler cluster (the same pass, another path into it), so the neighbourhood of a
new one is where the next is likeliest.

Everything is data: the pool is saved in the campaign folder, restored by
``--resume`` and joined by ``dcefuzz merge``.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass, field

from fuzzer.program.ir import Case


@dataclass
class Seed:
    """One pooled program and what it has given."""

    case: Case
    tokens: frozenset[str]
    #: the program index that tried it, and how it was made (``fresh`` or a mutation)
    index: int
    arm: str
    picks: int = 0
    #: mutants of it that joined the pool or found a new bug
    yielded: int = 0
    #: mutants of it (or itself) that hit a bug whose examples were full
    known: int = 0
    #: new bugs it found when it was tried
    bugs: int = 0

    def to_json(self) -> dict:
        return {"case": self.case.to_json(), "tokens": sorted(self.tokens), "index": self.index, "arm": self.arm,
                "picks": self.picks, "yielded": self.yielded, "known": self.known, "bugs": self.bugs}

    @classmethod
    def from_json(cls, data: dict) -> Seed:
        return cls(Case.from_json(data["case"]), frozenset(data["tokens"]), int(data["index"]), str(data["arm"]),
                   int(data.get("picks", 0)), int(data.get("yielded", 0)), int(data.get("known", 0)),
                   int(data.get("bugs", 0)))


@dataclass
class Pool:
    cap: int = 400
    #: how much each hit of a known bug divides a seed's worth, and each new bug it
    #: found multiplies it
    known_penalty: float = 4.0
    bug_bonus: float = 4.0
    seeds: list[Seed] = field(default_factory=list)
    #: programs that showed each token
    counts: Counter = field(default_factory=Counter)
    programs: int = 0

    def novel(self, tokens) -> set[str]:
        """The tokens no program has shown yet."""
        return {t for t in tokens if not self.counts[t]}

    def observe(self, tokens) -> set[str]:
        """Count a program's tokens; returns those it showed first."""
        new = self.novel(tokens)
        self.counts.update(set(tokens))
        self.programs += 1
        return new

    def worth(self, seed: Seed) -> float:
        rarity = sum(1.0 / max(1, self.counts[t]) for t in seed.tokens)
        return rarity / (1.0 + seed.picks) ** 0.5 * self.bug_bonus ** seed.bugs / self.known_penalty ** seed.known

    def admit(self, seed: Seed) -> None:
        self.seeds.append(seed)
        if len(self.seeds) > self.cap:
            self.seeds.remove(min(self.seeds, key=lambda s: (self.worth(s), s.index)))

    def pick(self, rng: random.Random, besides: Seed | None = None) -> Seed | None:
        """A seed, with chance in proportion to its worth (None: the pool is empty)."""
        choices = [s for s in self.seeds if s is not besides]
        if not choices:
            return None
        weights = [self.worth(s) + 1e-9 for s in choices]
        return rng.choices(choices, weights=weights)[0]

    def by_index(self, index: int) -> Seed | None:
        return next((s for s in self.seeds if s.index == index), None)

    def to_json(self) -> dict:
        return {"cap": self.cap, "programs": self.programs, "counts": dict(sorted(self.counts.items())),
                "seeds": [s.to_json() for s in self.seeds]}

    @classmethod
    def from_json(cls, data: dict, cap: int | None = None) -> Pool:
        pool = cls(cap=int(cap if cap is not None else data.get("cap", 400)))
        pool.counts = Counter({str(k): int(v) for k, v in data.get("counts", {}).items()})
        pool.programs = int(data.get("programs", 0))
        pool.seeds = [Seed.from_json(s) for s in data.get("seeds", ())]
        return pool

    def merged(self, other: Pool) -> Pool:
        """The two pools as one: token counts added, every distinct program kept (the
        worthiest ``cap`` of them)."""
        out = Pool(cap=max(self.cap, other.cap), known_penalty=self.known_penalty, bug_bonus=self.bug_bonus)
        out.counts = self.counts + other.counts
        out.programs = self.programs + other.programs
        seen = set()
        for seed in self.seeds + other.seeds:
            digest = seed.case.program.digest()
            if digest not in seen:
                seen.add(digest)
                out.seeds.append(seed)
        out.seeds.sort(key=lambda s: -out.worth(s))
        del out.seeds[out.cap:]
        return out
