"""The inputs a program is drawn with: their shapes over its symbols (every symbol the
bare dim of some input), the inputs a user's ops take, an input that aliases another,
windows of one input's storage, a module's carried state and an input handed over as a
tensor subclass, where the features have them (``fuzzer.program.generate``, whose stream of draws this continues).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from fuzzer.limits import GenLimits
from fuzzer.program import buffers, pairs, windows
from fuzzer.program.families import subclass
from fuzzer.program import features as feats


@dataclass(frozen=True)
class DrawnInputs:
    """What a program's body is drawn over: its symbols (a carried state's length among
    them), each input's dims and fixed dtype (None: the program's), which inputs alias
    another, its windows, its carried state (``buffers.State``; None: none), the inputs
    handed over as a pair."""

    symbols: tuple[str, ...]
    shapes: list[list[str]]
    dtypes: list[str | None]
    aliases: list[tuple[str, str]]
    windows: tuple
    state: buffers.State | None
    #: the inputs handed over as a tensor subclass, each with its partner (``Mode.pairs``)
    pairs: tuple = ()


def draw(seed: int, rng: random.Random, symbols: tuple[str, ...], sym_min: dict[str, int], on: frozenset,
         extra: list[tuple[list[str], str | None]], limits: GenLimits, grad: bool) -> DrawnInputs:
    """The inputs of program ``seed``, drawn from ``rng`` with features ``on``: ``extra``
    the inputs its ops' sources want (``sources.input_shapes``); a program that takes
    gradients (``grad``) has no input of a fixed dtype, none aliased and no window or
    state.  A carried state's length is a symbol of its own, entered in ``sym_min``."""
    n_inputs = rng.randint(1, limits.max_inputs)
    unused = list(symbols)
    shapes_drawn: list[list[str]] = []
    for _ in range(n_inputs):
        rank = rng.randint(1, limits.max_rank)
        # use every symbol once before reusing, so each one is readable from a shape
        shapes_drawn.append([unused.pop(0) if unused else rng.choice(symbols) for _ in range(rank)])
    shapes_drawn.extend([s] for s in unused)
    drawn_dtypes: list[str | None] = [None] * len(shapes_drawn)
    for dims, dtype in extra:
        if dtype is not None and grad:
            continue  # a program that takes gradients has floating inputs only
        shapes_drawn.append(list(dims))
        drawn_dtypes.append(dtype)
    # an input that is a view of another: one more input, with the dims of the first
    aliases = []
    if feats.ALIASED in on and not grad:
        shapes_drawn.append(list(shapes_drawn[0]))
        drawn_dtypes.append(None)
        aliases.append((f"x{len(shapes_drawn) - 1}", "x0"))
    wins = windows.draw(rng, shapes_drawn, drawn_dtypes, sym_min, aliases, feats.OVERLAPPING in on and not grad)
    state = buffers.draw_state(seed, symbols, len(shapes_drawn)) if feats.MODULE_CARRY in on and not grad else None
    if state is not None:  # its length a symbol of its own, the same in every binding
        symbols, sym_min[state.symbol] = symbols + (state.symbol,), state.length
        shapes_drawn.append(list(state.dims))
        drawn_dtypes.append(None)
    paired = (pairs.draw(seed, shapes_drawn, drawn_dtypes, aliases, wins, feats.FUNC_GRAD in on)
              if subclass.FEATURE in on else ())
    return DrawnInputs(symbols, shapes_drawn, drawn_dtypes, aliases, wins, state, paired)
