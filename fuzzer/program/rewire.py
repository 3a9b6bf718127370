"""A statement's result read as its operand 0: the one rewiring of a program's values
that more than one stage makes.

A tagged op's result *is* the operand it writes (``Form.result_aliases``), so a
statement of one may become the plain mutating call of that operand, every later read
of the result reading the operand (the shrinker's rewrite toward the plain op; triage's
probe of a tagged result, ``fuzzer.triage.causes``); and a statement whose readers could
read its operand instead may be taken out so (a shrink's hint, a recognition's cut).
"""

from __future__ import annotations

import dataclasses

from fuzzer.program.ir import Program, Stmt


def read_as_operand(program: Program, n: int, replacement: Stmt | None = None) -> Program:
    """``program`` with statement ``n`` replaced by ``replacement`` (None: taken out) and
    every later read of its result, returned values included, reading its operand 0."""
    old = program.body[n]
    value, operand = old.out, old.args[0]

    def swap(names):
        return tuple(operand if a == value else a for a in names)

    later = tuple(dataclasses.replace(s, args=swap(s.args)) for s in program.body[n + 1:])
    kept = (replacement,) if replacement is not None else ()
    return dataclasses.replace(program, body=program.body[:n] + kept + later, outputs=swap(program.outputs))
