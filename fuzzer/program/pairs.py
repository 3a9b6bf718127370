"""Inputs handed over as a tensor subclass (feature ``tensor-subclass``): ``Mode.pairs``.

A library hands its subclass values to compiled code as arguments and keeps them as a
module's state (a quantised weight, a sharded parameter, a cache).  ``Mode.pairs`` names,
for some inputs, ``(input, partner)``: the program's value ``input`` is
``PairTensor(input, partner)`` (``families.subclass``), made by its ``step`` from the
two drawn tensors, which are its parts themselves.  So a write through the pair writes
both drawn tensors, and clause 2 judges each as any written input: the partner's final
contents are what the pair's part ``b`` holds after the call.  The partner is an input
of the case (drawn, handed over, judged) but no parameter of the program: its body
reads it only as the pair's part.  A module's buffer that is paired is loaded as a pair
and written back part by part (``codegen``); a carried state may be one.

A pair and its partner have the same dims and the program's dtype, and neither is
strided, laid out, marked, an alias or a window (a library's value reaches compiled code
as itself); the partner is no buffer; no program with pairs takes gradients (the
family's forms take a kind of value of their own, ``dtypes.SUBCLASS``).  The IR gives a
paired input that kind and roots its parts in the input's storage (``families.subclass``
says why that over-approximation is sound).
"""

from __future__ import annotations

import random

from fuzzer import __version__
from fuzzer.program.dtypes import SUBCLASS
from fuzzer.program.families.subclass import CLASS
from fuzzer.program.sizes import Dims

#: the chance a program with the feature hands one input over as a pair
PAIR_SHARE: float = 0.5


def partners(mode) -> set[str]:
    """The inputs that are a pair's part ``b``: no parameter of the program."""
    return {partner for _, partner in mode.pairs}


def kinds(mode) -> dict[str, str]:
    """The kind of each paired input (``dtypes.SUBCLASS``): what the IR types it as."""
    return {name: SUBCLASS for name, _ in mode.pairs}


def value(name: str, mode) -> str:
    """How the step hands input ``name`` over: as it is, or as the pair it is made."""
    partner = dict(mode.pairs).get(name)
    return name if partner is None else f"{CLASS}({name}, {partner})"


def written_back(name: str, source: str, mode) -> list[str]:
    """The step's lines that write what the call left in buffer ``source`` back into the
    drawn tensors of input ``name``: the buffer itself, or a pair's parts."""
    partner = dict(mode.pairs).get(name)
    if partner is None:
        return [f"{name}.copy_({source})"]
    return [f"{name}.copy_({source}.a)", f"{partner}.copy_({source}.b)"]


def problem(mode, dims: dict[str, Dims], given: dict[str, str | None]) -> str | None:
    """What is wrong with ``mode.pairs`` for inputs of ``dims`` and fixed dtypes ``given``, or None."""
    if mode.pairs and mode.grad:
        return "a program that takes gradients holds no tensor subclass"
    held = (set(mode.strided) | {n for n, _ in mode.layouts} | {n for n, _, _ in mode.marks}
            | {n for pair in mode.aliases for n in pair} | {n for w in mode.windows for n in w[:2]})
    named = [n for pair in mode.pairs for n in pair]
    for name, partner in mode.pairs:
        if name not in dims or partner not in dims or named.count(name) > 1 or named.count(partner) > 1:
            return f"bad pair {(name, partner)!r}: two inputs, each in one pair"
        if dims[name] != dims[partner] or given[name] is not None or given[partner] is not None:
            return f"bad pair {(name, partner)!r}: inputs of the same dims and of the program's dtype"
        if {name, partner} & held or partner in mode.module:
            return (f"bad pair {(name, partner)!r}: neither strided, laid out, marked, an alias nor a window, "
                    "and the partner no buffer")
    return None


def draw(seed: int, shapes: list[list[str]], dtypes: list, aliases, wins, grad: bool) -> tuple:
    """The pairs of program ``seed``, from a stream of its own: with ``PAIR_SHARE``, one
    input of the program's dtype (no alias, window or base) paired with a new input of
    its dims, the last (``shapes`` and ``dtypes`` grow by it).  None in a program that
    takes gradients."""
    if grad:
        return ()
    rng = random.Random(f"dcefuzz-pairs-{__version__}-{seed}")
    held = {n for pair in aliases for n in pair} | {n for w in wins for n in w[:2]}
    free = [f"x{k}" for k, dtype in enumerate(dtypes) if dtype is None and f"x{k}" not in held]
    if not free or rng.random() >= PAIR_SHARE:
        return ()
    name = rng.choice(free)
    shapes.append(list(shapes[int(name[1:])]))
    dtypes.append(None)
    return ((name, f"x{len(shapes) - 1}"),)
