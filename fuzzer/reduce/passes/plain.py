"""A tensor subclass made the plain tensor it wraps, where the bug allows: the repro
keeps a subclass only when its bug needs one (``families.subclass``).

A pair is made of plain tensors (a statement whose form makes one, ``w_pair``) or handed
over as one (``Mode.pairs``).  The candidate for one such source makes every value of
its kind that flows from it plain at once, statement by statement, since a form that
takes a pair takes nothing else:

* a statement that may become its operand 0 (``Shrink.to_operand``: the pair's maker,
  the readers of its parts) goes, later reads of its result reading that operand, so
  the pair becomes its part ``a`` and a part read back becomes that tensor;
* any other statement that reads a pair becomes its first simpler form
  (``Shrink.simpler``: an op of the first library of the same kind on the plain tensor);
* a paired input is handed over as itself, its partner left to the inputs pass.

Each source alone, then all of them together (two pairs one call reads make neither
plain alone).  A candidate the IR refuses costs no oracle call.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass

from fuzzer.program import forms
from fuzzer.program.dtypes import SUBCLASS
from fuzzer.program.ir import Case, InvalidProgram, Program, Stmt, Typing, check
from fuzzer.reduce.edits import simpler_stmt, with_program
from fuzzer.reduce.passes.base import Candidates, State, first_taken_then_again


def sources(program: Program, typing: Typing) -> list[str]:
    """The values that begin a pair: paired inputs, then results of plain operands."""
    made = [s.out for s in program.body if s.out is not None and typing.dtypes.get(s.out) == SUBCLASS
            and not any(typing.dtypes.get(a) == SUBCLASS for a in s.args)]
    return [name for name, _ in program.mode.pairs] + made


def made_plain(program: Program, typing: Typing, begun: set[str]) -> Program:
    """``program`` with the pairs of ``begun`` (:func:`sources`) and every pair that flows
    from them made plain."""
    pairs, renamed = set(begun), {}
    body: list[Stmt] = []
    for stmt in program.body:
        args = tuple(renamed.get(a, a) for a in stmt.args)
        reads = any(a in pairs for a in stmt.args)
        form = forms.form(stmt.form)
        if stmt.out is not None and (reads or stmt.out in pairs) and typing.dtypes.get(stmt.out) == SUBCLASS:
            pairs.add(stmt.out)
        if (reads or stmt.out in begun) and form.shrink.to_operand:
            renamed[stmt.out] = args[0]
        elif reads and form.shrink.simpler:
            simpler = forms.form(form.shrink.simpler[0])
            body.append(dataclasses.replace(simpler_stmt(stmt, simpler.name), args=args[:simpler.arity]))
        else:
            body.append(dataclasses.replace(stmt, args=args))
    mode = dataclasses.replace(program.mode, pairs=tuple(p for p in program.mode.pairs if p[0] not in begun))
    return dataclasses.replace(program, body=tuple(body), outputs=tuple(renamed.get(o, o) for o in program.outputs),
                               mode=mode)


def plain_edits(case: Case) -> Iterator[Case]:
    """``case`` with each pair's source made plain, then all of them."""
    try:
        typing = check(case.program)
    except InvalidProgram:
        return
    begun = sources(case.program, typing)
    groups = [{name} for name in begun] + ([set(begun)] if len(begun) > 1 else [])
    for group in groups:
        program = made_plain(case.program, typing, group)
        yield with_program(case, body=program.body, outputs=program.outputs, mode=program.mode)


@dataclass(frozen=True)
class PlainValues:
    name: str = "plain"

    def candidates(self, state: State) -> Candidates:
        return first_taken_then_again(plain_edits, state)
