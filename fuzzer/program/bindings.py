"""The bindings a case runs on: the sizes its symbols take, one binding a run.

All bindings of a case run through one compiled function, in order: the first
compiles (typical sizes, so that compile is the dynamic one), later ones exercise
guards and recompiles: the edges Inductor specialises (0 and 1), small primes, each
symbol at its least admissible size.  A symbol whose least size is 0 is empty in some
binding; every dim of every value is a monotone expression of the symbols, so a form
the IR admits for every admissible size admits these.
"""

from __future__ import annotations

import random

from fuzzer.limits import GEN, GenLimits


def draw(rng: random.Random, symbols, sym_min, limits: GenLimits = GEN) -> tuple[dict, ...]:
    """Typical sizes first (that compile is the dynamic one), then edges and primes."""
    def one(pool):
        return {s: max(sym_min[s], rng.choice(pool)) for s in symbols}

    out = [one(limits.typical_sizes), one(limits.primes), one((0, 1, 2)), {s: sym_min[s] for s in symbols}]
    unique = [b for k, b in enumerate(out) if b not in out[:k]]
    for _ in range(limits.binding_draws):
        if len(unique) >= limits.min_bindings:
            break
        b = one(limits.primes + limits.typical_sizes)
        if b not in unique:
            unique.append(b)
    return tuple(unique)
