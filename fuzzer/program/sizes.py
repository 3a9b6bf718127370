"""Symbolic sizes: the dims of every value, as tiny expressions over shared symbols.

Inputs have dims that are bare symbols (``s0``, ``s1``...) shared across inputs; ops
derive new dims (``s0 // 2``, ``s0 - 1``, ``1``).  The generator keeps each value's
dims as such expressions so a program is valid for every binding of its symbols,
not just the one it was drawn with.  Two dims are the same when their expressions
are the same text: structural equality is all the generator needs, and it never
claims two sizes equal that a binding could tell apart.

Expressions are monotone non-decreasing in every symbol, so the smallest value an
expression takes is its value at the symbols' minimums.  That is how requirements
such as "narrow needs at least one row" are checked.
"""

from __future__ import annotations

import re

Dims = tuple[str, ...]

_SYMBOL = re.compile(r"s\d+")
#: a size only the data knows (a ``nonzero``-like result, an ``.item()``): named
#: after the value that has it, never bound by a binding, at least 0
_UNBACKED = re.compile(r"u\d+")
_ALLOWED = re.compile(r"^[s\d\s()/+\-*]+$")


def is_symbol(expr: str) -> bool:
    return bool(_SYMBOL.fullmatch(expr))


def is_unbacked(expr: str) -> bool:
    return bool(_UNBACKED.fullmatch(expr))


def has_unbacked(expr: str) -> bool:
    """Whether a dim depends on data: such a dim is never written into the program's
    text (no local holds it), so forms that would print it refuse it."""
    return bool(_UNBACKED.search(expr))


def _atom(expr: str) -> str:
    return expr if (is_symbol(expr) or expr.isdigit()) else f"({expr})"


def half(expr: str) -> str:
    """The dim of ``x[: d // 2]``."""
    if expr.isdigit():
        return str(int(expr) // 2)
    return f"{_atom(expr)} // 2"


def ceil_half(expr: str) -> str:
    """The dim of ``x[::2]`` or ``x.chunk(2)[0]``: ``(d + 1) // 2``."""
    if expr.isdigit():
        return str((int(expr) + 1) // 2)
    return f"({_atom(expr)} + 1) // 2"


def minus_one(expr: str) -> str:
    """The dim of ``x.narrow(dim, 1, d - 1)``."""
    if expr.isdigit():
        return str(int(expr) - 1)
    return f"{_atom(expr)} - 1"


def rename(expr: str, mapping: dict[str, str]) -> str:
    """``expr`` with its symbols renamed (those ``mapping`` lacks stay)."""
    return _SYMBOL.sub(lambda m: mapping.get(m.group(0), m.group(0)), expr)


def symbols_in(expr: str) -> set[str]:
    return set(_SYMBOL.findall(expr))


def evaluate(expr: str, binding: dict[str, int]) -> int:
    """Value of a dim expression under a binding of its symbols."""
    if not _ALLOWED.match(expr):
        raise ValueError(f"not a dim expression: {expr!r}")
    missing = symbols_in(expr) - set(binding)
    if missing:
        raise ValueError(f"dim {expr!r} uses unbound symbols {sorted(missing)}")
    return int(eval(expr, {"__builtins__": {}}, dict(binding)))  # noqa: S307 - checked above


def concrete(dims: Dims, binding: dict[str, int]) -> tuple[int, ...]:
    return tuple(evaluate(d, binding) for d in dims)


def smallest(expr: str, sym_min: dict[str, int]) -> int:
    """Least value of ``expr`` over all admissible bindings (monotonicity); a size
    the data decides may be 0."""
    expr = _UNBACKED.sub("0", expr)
    return evaluate(expr, {s: sym_min.get(s, 0) for s in symbols_in(expr)})


def draw_bindings(rng, symbols, sym_min, limits) -> tuple[dict, ...]:
    """Bindings of ``symbols`` (each at least its minimum): typical sizes first (that
    compile is the dynamic one), then primes and edges, the minimums, then more primes
    and typical sizes until there are ``limits.min_bindings`` distinct ones."""
    def draw(pool):
        return {s: max(sym_min[s], rng.choice(pool)) for s in symbols}

    out = [draw(limits.typical_sizes), draw(limits.primes), draw((0, 1, 2)), {s: sym_min[s] for s in symbols}]
    unique = [b for k, b in enumerate(out) if b not in out[:k]]
    for _ in range(limits.binding_draws):
        if len(unique) >= limits.min_bindings:
            break
        b = draw(limits.primes + limits.typical_sizes)
        if b not in unique:
            unique.append(b)
    return tuple(unique)
