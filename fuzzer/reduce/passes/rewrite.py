"""Rewrite one statement at a time: an operand replaced by an input or an earlier
value (same dims first), a custom op by a simpler op of the same declared kind
(``order.simpler_forms``, each form's ``Shrink.simpler``; a tagged op's result, which
is its operand, is read as that operand where the simpler op returns nothing), a
constant or attribute by the simplest (``order.SIMPLEST_ATTRS``).

An operand that does not fit is refused by the form's typing (``Case.validate``) at
no oracle cost, so the edits do not check dims themselves.  A Function of several
arguments (``families.fnshapes``) is never handed one value as two by a rewrite: one
tensor given as two arguments is a shape of its own (autograd adds the gradients of
both slots into it), whose bugs are others than those of two tensors, so a repro of
two keeps two.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass

from fuzzer.program import forms
from fuzzer.program.ir import Case, InvalidProgram, Stmt, check
from fuzzer.program.rewire import read_as_operand
from fuzzer.reduce.edits import simpler_stmt, unused, with_program
from fuzzer.reduce.order import SIMPLEST_ATTRS, simpler_forms
from fuzzer.reduce.passes.base import Candidates, State, first_taken_then_again


def replace_stmt(case: Case, n: int, stmt: Stmt) -> Case:
    body = list(case.program.body)
    body[n] = stmt
    return with_program(case, body=tuple(body))


def statement_edits(case: Case) -> Iterator[Case]:
    """Each single rewrite of a statement of ``case``, statement by statement."""
    p = case.program
    try:
        typing = check(p)
    except InvalidProgram:
        return
    defined = [i.name for i in p.inputs]
    for n, stmt in enumerate(p.body):
        # operands: an input or an earlier value (same dims first); never, in a call of
        # a Function of several arguments, one it is given already (``apart``)
        apart = forms.form(stmt.form).nested and len(stmt.args) > 1
        for k, arg in enumerate(stmt.args):
            earlier = [v for v in defined[:defined.index(arg)] if not (apart and v in stmt.args)]
            for cand in sorted(earlier, key=lambda v: typing.dims[v] != typing.dims[arg]):
                yield replace_stmt(case, n, dataclasses.replace(
                    stmt, args=stmt.args[:k] + (cand,) + stmt.args[k + 1:]))
        yield from simpler_ops(case, n)
        # simpler constants and attributes
        for key, simplest in SIMPLEST_ATTRS.items():
            if key in stmt.attrs and stmt.attrs[key] != simplest:
                yield replace_stmt(case, n, dataclasses.replace(stmt, attrs={**stmt.attrs, key: simplest}))
        if stmt.out is not None:
            defined.append(stmt.out)


def simpler_ops(case: Case, n: int) -> Iterator[Case]:
    """Statement ``n`` of ``case`` with its op replaced by each simpler op of the same
    kind (``order.simpler_forms``); a result that is the call's operand 0 (a tagged op's)
    becomes that operand where the simpler op returns nothing."""
    p, stmt = case.program, case.program.body[n]
    for simpler in simpler_forms(stmt.form):
        new = simpler_stmt(stmt, simpler)
        if new.out is None and stmt.out is not None and not unused(p, stmt.out):
            if forms.form(stmt.form).result_aliases:
                yield dataclasses.replace(case, program=read_as_operand(p, n, new))
            continue
        yield replace_stmt(case, n, new)


@dataclass(frozen=True)
class RewriteStatements:
    name: str = "rewrite"

    def candidates(self, state: State) -> Candidates:
        return first_taken_then_again(statement_edits, state)
