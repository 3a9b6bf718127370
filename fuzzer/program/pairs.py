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
as itself); the partner is no buffer.  The IR gives a paired input that kind
(``dtypes.SUBCLASS``: the family's forms take a kind of value of their own) and roots its
parts in the input's storage (``families.subclass`` says why that over-approximation is
sound).

In a program that takes gradients by ``backward()`` a pair handed over as an argument is
the leaf that requires grad, as a sharded parameter or a quantised weight being trained
is (:func:`leaf_lines`): its parts are plain tensors that do not, its gradient is a pair,
and the gradients judged for the two drawn tensors are that pair's parts
(:func:`grad_of`).  A module's pair is state, loaded without grad as any buffer is.  Under
``torch.func.grad`` (``Mode.func_grad``) no input is a pair: functorch's transforms over
a wrapper subclass are another API, which no form writes.
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
    """How the step hands input ``name`` over: as it is, or as the pair it is made (the
    leaf :func:`leaf_lines` made, where the pair's gradient is taken)."""
    partner = dict(mode.pairs).get(name)
    if partner is None:
        return name
    return _leaf(name) if name in _trained(mode) else f"{CLASS}({name}, {partner})"


def written_back(name: str, source: str, mode) -> list[str]:
    """The step's lines that write what the call left in buffer ``source`` back into the
    drawn tensors of input ``name``: the buffer itself, or a pair's parts."""
    partner = dict(mode.pairs).get(name)
    if partner is None:
        return [f"{name}.copy_({source})"]
    return [f"{name}.copy_({source}.a)", f"{partner}.copy_({source}.b)"]


def _leaf(name: str) -> str:
    """The step's name of the pair made of input ``name``, where it is the leaf that requires grad."""
    return f"pair_{name}"


def _trained(mode) -> dict[str, str]:
    """The pairs whose gradients ``backward()`` takes: each argument's (no buffer's), by input."""
    if not mode.grad or mode.func_grad:
        return {}
    return {name: partner for name, partner in mode.pairs if name not in mode.module}


def leaf_lines(mode) -> list[str]:
    """The step's lines that make each pair handed over as an argument of a program that
    takes gradients: the leaf that requires grad, its parts plain tensors that do not."""
    return [f"    {_leaf(name)} = {CLASS}({name}, {partner}).requires_grad_(True)"
            for name, partner in _trained(mode).items()]


def grad_of(name: str, mode) -> str:
    """The step's expression of input ``name``'s gradient: its own, or its part of its pair's
    (zeros where the loss does not reach it, as for a plain input).  A pair's gradient that
    is no pair (a compiled backward that lost the class) is given whole in part a's place
    and as None in part b's, so the judge sees its form differ from eager's (SUBCLASS
    VALUES), not two plain tensors that may hold the same values."""
    trained = _trained(mode)
    part = "a" if name in trained else "b" if name in trained.values() else None
    if part is None:
        return f"torch.zeros_like({name}) if {name}.grad is None else {name}.grad"
    leaf = _leaf(name if part == "a" else next(n for n, p in trained.items() if p == name))
    other = f"{leaf}.grad" if part == "a" else "None"
    return (f"torch.zeros_like({name}) if {leaf}.grad is None else {leaf}.grad.{part} "
            f"if isinstance({leaf}.grad, {CLASS}) else {other}")


def requiring_grad(name: str, mode) -> bool:
    """Whether the step makes drawn input ``name`` itself require grad: not a trained pair's part."""
    trained = _trained(mode)
    return mode.grad and name not in trained and name not in trained.values()


def problem(mode, dims: dict[str, Dims], given: dict[str, str | None]) -> str | None:
    """What is wrong with ``mode.pairs`` for inputs of ``dims`` and fixed dtypes ``given``, or None."""
    if mode.pairs and mode.func_grad:
        return "torch.func.grad takes no tensor subclass input"
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


def draw(seed: int, shapes: list[list[str]], dtypes: list, aliases, wins, func_grad: bool) -> tuple:
    """The pairs of program ``seed``, from a stream of its own: with ``PAIR_SHARE``, one
    input of the program's dtype (no alias, window or base) paired with a new input of
    its dims, the last (``shapes`` and ``dtypes`` grow by it).  None in a program whose
    gradients ``torch.func.grad`` takes."""
    if func_grad:
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
