"""Hypothesis strategies for dcefuzz programs, for a user's own property tests.

A case is drawn as a campaign draws one, by the seeded generator, from choices
Hypothesis makes and can shrink: the seed, how many statements, which of the
user's ops, which features.  A failing example therefore shrinks toward fewer
statements, fewer ops and fewer features, and Hypothesis's example database replays
it exactly (same choices, same dcefuzz and torch: same program, bindings and
inputs).  Pair it with ``fuzzer.testing.assert_contract``::

    from hypothesis import given, settings
    from fuzzer.strategies import cases
    from fuzzer.testing import assert_contract
    import mylib

    @settings(max_examples=20, deadline=None)
    @given(cases(ops=[mylib]))
    def test_compile_keeps_my_ops(case):
        assert_contract(case)

The ops' modules are loaded and their declarations checked (``fuzzer.user.audit``)
on the first draw, once per process; an op that fails the check is never drawn,
and none passing is an error.
"""

from __future__ import annotations

import dataclasses
import functools

from hypothesis import strategies as st

from fuzzer.limits import GEN
from fuzzer.program import features as feats
from fuzzer.program.generate import BUILTIN, OpSet, generate
from fuzzer.program.ir import Case, Program

#: the largest seed drawn (the generator takes any int; this one shrinks well)
MAX_SEED = 2**32 - 1


@functools.cache
def _selection(specs: tuple, builtin: bool, device: str, check: bool) -> OpSet:
    from fuzzer.user import selection

    chosen = selection.select(list(specs), only=not builtin, device=device, check=check)
    if not chosen.ops.user:
        raise ValueError(f"no op of {[str(s) for s in specs]} passed its declaration check: "
                         + "; ".join(p.line for p in chosen.findings))
    return chosen.ops


def _feature_names(features) -> list[str]:
    if features in (None, "none"):
        return []
    if features == "all":
        return list(feats.BY_NAME)
    names = [features] if isinstance(features, str) else list(features)
    unknown = [n for n in names if n not in feats.BY_NAME]
    if unknown:
        raise ValueError(f"unknown features {unknown}; features: {', '.join(feats.BY_NAME)}")
    return names


def cases(ops=(), *, with_builtin_ops: bool | None = None, features="none",
          max_statements: int = GEN.max_statements, device: str = "cpu",
          check_declarations: bool = True) -> st.SearchStrategy[Case]:
    """Cases (program, bindings, input seed) calling the custom ops of ``ops``.

    ``ops``: modules, or ``--ops`` strings (``mypkg.ops``, ``path/ops.py``); empty:
    dcefuzz's own ops.  ``with_builtin_ops``: also dcefuzz's own (default: only when
    ``ops`` is empty).  ``features``: ``"none"``, ``"all"`` or feature names
    (``fuzzer.program.features``), each example on a subset.  ``max_statements``:
    the most statements a program gets; each example draws its own count up to it.
    """
    specs = tuple(ops)
    builtin = (not specs) if with_builtin_ops is None else with_builtin_ops
    names = _feature_names(features)
    if max_statements < 1:
        raise ValueError("max_statements must be at least 1")

    @st.composite
    def draw_case(draw) -> Case:
        op_set = BUILTIN
        if specs:
            chosen = _selection(specs, builtin, device, check_declarations)
            user = draw(st.lists(st.sampled_from(chosen.user), min_size=1, unique=True))
            op_set = dataclasses.replace(chosen, user=tuple(sorted(user)))
        on = draw(st.lists(st.sampled_from(names), unique=True)) if names else []
        statements = draw(st.integers(1, max_statements))
        seed = draw(st.integers(0, MAX_SEED))
        limits = dataclasses.replace(GEN, min_statements=min(GEN.min_statements, statements),
                                     max_statements=statements)
        return generate(seed, limits=limits, features={n: 1.0 for n in sorted(on)}, ops=op_set)

    return draw_case()


def programs(ops=(), **kwargs) -> st.SearchStrategy[Program]:
    """The programs of :func:`cases` (without bindings or inputs)."""
    return cases(ops, **kwargs).map(lambda case: case.program)
