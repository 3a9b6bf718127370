"""Cuts: each one-step simplification of what a program does, as a shrink could make it.

A key read off a program (``bugs.key_of``'s ``{does ...}`` and ``{buffers ...}``: the
forms its statements use, what of its mode a bug may need, what it tells the compiler
of its buffers) names a bug's 1-minimal program: every form in it is one its bug
needs.  Read off a program that is not 1-minimal, it names more than the bug needs,
and a finding of another bug can read as a held one: ``p_sin(x0); v1 = t_scale(x0);
v1.mul_(0.5)`` read as the held ``{does mul_, p_sin, t_scale}``, where the same
program without the unrelated ``p_sin`` is ``{does mul_, t_scale}``, a bug not held.
So recognition checks such a key only where none of these cuts still shows the bug
(``fuzzer.triage.recognise``): then the finding's own 1-minimal program would read
the same.

A cut is what the shrinker's passes could do to a program's forms and mode in one
step: every statement of one form dropped (with what reads them,
``edits.remove_statements``, or with its readers reading its operand, as a rewrite of
their operands would leave it dead: ``rewire.read_as_operand``), one call rewritten to a simpler op of its kind
(``passes.rewrite.simpler_ops``), one simplification of the mode
(``order.simpler_modes``, gradients dropped with the statements' ``no_grad`` marks).
Only legal cases are cuts.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

from fuzzer.program.ir import Case, InvalidProgram
from fuzzer.program.rewire import read_as_operand
from fuzzer.reduce.edits import remove_statements
from fuzzer.reduce.passes.mode import mode_edits
from fuzzer.reduce.passes.rewrite import simpler_ops


def cuts(case: Case) -> Iterator[Case]:
    """Each legal one-step simplification of ``case``'s forms and mode."""
    body = case.program.body
    for form in dict.fromkeys(stmt.form for stmt in body):
        at = [n for n, stmt in enumerate(body) if stmt.form == form]
        yield from _legal(remove_statements(case, set(at)))
        if all(body[n].out is not None and body[n].args for n in at):
            rewired = case  # its readers reading its operand instead, as a rewrite could leave them
            for n in reversed(at):
                rewired = dataclasses.replace(rewired, program=read_as_operand(rewired.program, n))
            yield from _legal(rewired)
    for n in range(len(body)):
        for cut in simpler_ops(case, n):
            yield from _legal(cut)
    for cut in mode_edits(case):
        yield from _legal(cut)


def _legal(case: Case) -> Iterator[Case]:
    try:
        case.validate()
    except InvalidProgram:
        return
    yield case
