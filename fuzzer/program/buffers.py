"""The ``module-state`` feature: which of a program's inputs become the buffers of a
module (``Mode.module``), so that its forward writes its own state.

A program drawn with the feature is an ``nn.Module`` (``codegen``'s ``Program``) whose
forward reads those inputs as ``self.<name>``; its ``step`` loads each buffer in place
from the binding's draw before every call and writes what the call left back into the
drawn tensor, where the contract judges it like any written input.  The buffers are the
same tensors on every call, as a cache's are, so the compiled module meets them again
over the bindings, through its guards and recompiles.

Buffers are drawn among the inputs the step can hand over as they are (``ir``'s rules:
not strided, aliased or marked, and none in a program that takes gradients), those a
custom op writes first, then those anything writes, then any: a module whose forward
writes its state through a custom op is what the feature is for.

The ``module-carry`` feature (``families.state``) draws a module whose state carries
over from call to call (``Mode.carry``): one more input, the state, of a length the
same in every binding (a symbol of its own, pinned: a cache of fixed size), written
first by a KV cache's ``k_put`` and last by running statistics' ``r_stat``.
"""

from __future__ import annotations

import dataclasses
import random

from fuzzer import __version__
from fuzzer.program import forms
from fuzzer.program.ir import Program, check

#: the chance a module holds a second buffer where it can
SECOND_BUFFER_SHARE: float = 0.3
#: the lengths a carried state may have, the same in every binding: past the drawn
#: indices ``k_put`` writes at (``families.state.POSITIONS``)
STATE_LENGTHS: tuple[int, ...] = (3, 4, 5, 8)
#: the ops that write a carried state, the first before the body, the second after it
STATE_WRITES: tuple[str, str] = ("k_put", "r_stat")


@dataclasses.dataclass(frozen=True)
class State:
    """A carried state: its input's name, the symbol of its length, that length, its dims."""

    name: str
    symbol: str
    length: int
    dims: tuple[str, ...]


def draw_state(seed: int, symbols: tuple[str, ...], inputs: int) -> State:
    """The state of program ``seed``, from a stream of its own: input ``x<inputs>``,
    of rank 1 or 2, every dim the new symbol ``s<len(symbols)>``."""
    rng = random.Random(f"dcefuzz-state-{__version__}-{seed}")
    symbol = f"s{len(symbols)}"
    return State(f"x{inputs}", symbol, rng.choice(STATE_LENGTHS), (symbol,) * rng.randint(1, 2))


def carried(program: Program, state: State) -> Program:
    """``program`` as a module whose one buffer is ``state``, carried over: handed over
    as it is (no mark, stride or layout on it)."""
    mode, name = program.mode, state.name
    mode = dataclasses.replace(mode, module=(name,), carry=True, marks=tuple(m for m in mode.marks if m[0] != name),
                               strided=tuple(n for n in mode.strided if n != name),
                               layouts=tuple(x for x in mode.layouts if x[0] != name))
    return dataclasses.replace(program, mode=mode)


def pinned(bindings: tuple[dict, ...], state: State) -> tuple[dict, ...]:
    """The bindings with the state's length the same in each (those that then repeat
    one before them left out)."""
    out: list[dict] = []
    for b in bindings:
        b = {**b, state.symbol: state.length}
        if b not in out:
            out.append(b)
    return tuple(out)


def as_module(program: Program, seed: int) -> Program:
    """``program`` with some of its inputs as a module's buffers, from a stream of its
    own; unchanged where none can be (a program that takes gradients)."""
    mode = program.mode
    if mode.grad:
        return program
    held = ({n for pair in mode.aliases for n in pair} | {n for n, _, _ in mode.marks} | set(mode.strided)
            | {n for n, _ in mode.layouts} | {n for w in mode.windows for n in w[:2]} | {p for _, p in mode.pairs})
    eligible = [i.name for i in program.inputs if i.name not in held]
    typing = check(program)
    by_custom = {typing.root[s.args[w]] for s in program.body if forms.form(s.form).is_custom
                 for w in forms.form(s.form).mutates}
    by_any = {typing.root[s.args[w]] for s in program.body for w in forms.form(s.form).mutates}
    pool = ([n for n in eligible if n in by_custom] or [n for n in eligible if n in by_any] or eligible)
    if not pool:
        return program
    rng = random.Random(f"dcefuzz-module-{__version__}-{seed}")
    count = 2 if len(pool) > 1 and rng.random() < SECOND_BUFFER_SHARE else 1
    chosen = set(rng.sample(pool, count))
    names = tuple(i.name for i in program.inputs if i.name in chosen)
    return dataclasses.replace(program, mode=dataclasses.replace(mode, module=names))
