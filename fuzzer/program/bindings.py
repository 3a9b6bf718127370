"""The bindings a case runs on: the sizes its symbols take, one binding a run.

All bindings of a case run through one compiled function, in order: the first
compiles (typical sizes, so that compile is the dynamic one), later ones exercise
guards and recompiles: the edges Inductor specialises (0 and 1), small primes, each
symbol at its least admissible size.  A symbol whose least size is 0 is empty in some
binding; every dim of every value is a monotone expression of the symbols, so a form
the IR admits for every admissible size admits these.

A symbol's least size is drawn before the body (0, 1 or 2), and a form that needs a
dim of at least 1 (a ``select``, an ``argmax``, a window one row short) is drawn only
over dims that are.  So most symbols are never 0, and empty tensors reach only the
programs whose every form allows them along that symbol.  With the ``layouts``
feature (:func:`emptied`) each symbol's least size is taken to 0 wherever the program
stays legal, after its body is drawn: its edge and least bindings then make empty
every tensor whose forms allow it, whatever the draw before the body said.
"""

from __future__ import annotations

import dataclasses
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


def emptied(program, check):
    """``program`` with each symbol's least size taken to 0 where ``check`` (the IR's,
    ``ir.check``) still admits it, one symbol after the other: a form that torch refuses
    on an empty dim (where eager raises too) keeps its symbol at the least size it needs."""
    for symbol in program.symbols:
        if program.sym_min[symbol] == 0:
            continue
        lowered = dataclasses.replace(program, sym_min={**program.sym_min, symbol: 0})
        try:
            check(lowered)
        except ValueError:
            continue
        program = lowered
    return program
