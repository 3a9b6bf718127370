"""Shapes of a user's op, as a numpy generalized-ufunc signature.

``(m,n),(n,p)->(m,p)`` says an op takes two rank-2 tensors whose inner dims agree and
returns one whose dims are the outer ones.  dcefuzz reads each letter as one of the
program's symbolic sizes: binding the operands' dims to the letters both checks that
a call is legal for every binding of the symbols and gives its results' dims, in
the same structural terms as every other form (``fuzzer.program.sizes``).  A digit
is a fixed size.  An op without a signature takes and returns tensors of one shape,
of any rank.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from fuzzer.program.sizes import Dims

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|\d+")
_TUPLE = re.compile(r"\(([^()]*)\)")


class SignatureError(ValueError):
    """A signature that does not parse, or that leaves an output dim unbound."""


class Mismatch(ValueError):
    """Operands whose dims do not fit the signature."""


@dataclass(frozen=True)
class Gufunc:
    """The core dims of each tensor argument and result; None: all of one shape."""

    inputs: tuple[tuple[str, ...], ...] | None = None
    outputs: tuple[tuple[str, ...], ...] | None = None
    text: str = ""

    @property
    def same_shape(self) -> bool:
        return self.inputs is None

    def bind(self, operands: list[Dims]) -> dict[str, str]:
        """The letters of the first ``len(operands)`` arguments bound to their dims;
        raises :class:`Mismatch` when a rank, a repeated letter or a fixed size does
        not fit.  A prefix of the operands is checked, so a generator can test each
        candidate operand as it picks it."""
        if self.same_shape:
            if any(d != operands[0] for d in operands[1:]):
                raise Mismatch(f"operands differ in shape: {operands}")
            return {}
        letters: dict[str, str] = {}
        for core, dims in zip(self.inputs, operands):
            if len(core) != len(dims):
                raise Mismatch(f"rank {len(dims)} where the signature has {core}")
            for letter, dim in zip(core, dims):
                want = letter if letter.isdigit() else letters.setdefault(letter, dim)
                if want != dim:
                    raise Mismatch(f"{letter!r} is {want} and {dim}")
        return letters

    def results(self, operands: list[Dims], count: int) -> list[Dims]:
        """The dims of the op's ``count`` tensor results for these operands."""
        letters = self.bind(operands)
        if self.same_shape:
            return [operands[0]] * count
        return [tuple(letter if letter.isdigit() else letters[letter] for letter in core)
                for core in self.outputs]

    def shapes(self, size_of) -> list[tuple[int, ...]] | None:
        """Concrete input shapes with ``size_of(letter)`` per letter (the declaration
        check's inputs); None for a same-shape op (any shape will do)."""
        if self.same_shape:
            return None
        return [tuple(int(x) if x.isdigit() else size_of(x) for x in core) for core in self.inputs]

    @property
    def letters(self) -> list[str]:
        """The named dims, in order of first appearance."""
        seen: list[str] = []
        for core in self.inputs or ():
            seen += [x for x in core if not x.isdigit() and x not in seen]
        return seen


def parse(text: str | None, n_inputs: int, n_outputs: int) -> Gufunc:
    """A signature string checked against the op's tensor arguments and results."""
    if text is None:
        return Gufunc()
    if "->" not in text:
        raise SignatureError(f"{text!r}: a signature reads like (m,n),(n,p)->(m,p)")
    left, right = text.replace(" ", "").split("->", 1)
    inputs, outputs = _tuples(left, text), _tuples(right, text)
    if len(inputs) != n_inputs or len(outputs) != n_outputs:
        raise SignatureError(f"{text!r} has {len(inputs)} inputs and {len(outputs)} outputs; the op "
                             f"takes {n_inputs} tensors and returns {n_outputs}")
    bound = {x for core in inputs for x in core}
    loose = [x for core in outputs for x in core if not x.isdigit() and x not in bound]
    if loose:
        raise SignatureError(f"{text!r}: output dims {loose} are not dims of any input")
    return Gufunc(inputs=inputs, outputs=outputs, text=text)


def _tuples(side: str, text: str) -> tuple[tuple[str, ...], ...]:
    if side == "":
        return ()
    found = _TUPLE.findall(side)
    if ",".join(f"({c})" for c in found) != side:
        raise SignatureError(f"{text!r}: expected tuples like (m,n) separated by commas")
    out = []
    for core in found:
        names = tuple(x for x in core.split(",") if x != "")
        if any(not _NAME.fullmatch(x) for x in names):
            raise SignatureError(f"{text!r}: dims are names or digits, got ({core})")
        out.append(names)
    return tuple(out)
