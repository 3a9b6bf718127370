"""Spots: where a finding's divergences show, in its program's names, so that a
shrink, and every probe of triage, keeps the finding to its own.

A bug class says *what* broke (a wrong value, an effect missing), not *where*.  Two
bugs of one kind in one program share a class, and a shrink that took any candidate
of the same class could slide from one to the other: a finding whose only wrong value
was a write lost through a gapped ``unfold`` view of ``x2`` was cut by a hint toward a
held tagged-op bug to a program that wrote ``x1`` wrong through the tagged op's result
instead, the same class, and was then counted as the held bug it never showed.

So a candidate must also show a divergence *where the finding did*: at one of its
:class:`Spot` s, each a divergence's place (``contract.Place``) named by the program:
a returned value by the value's name (what the shrinker never renames), the gradient
of an input by that input, a written input by its name, a call by its site (which a
rewrite to a simpler op of the same kind keeps).  The spots are the finding's own, made
once from the case as found; a candidate that diverges at none of them shows another
divergence of the class and is refused.  One spot is enough: a finding that showed
two divergences of its class may be shrunk to either, each its own.

A value a tagged op returns *is* its operand 0 (``Form.result_aliases``), and a shrink
step may read that operand in its place (``rewire.read_as_operand``), so such a
value's spot stands for the operand's too; so does a value the shrink may make its
operand 0 (``Shrink.to_operand``: a tensor subclass toward the tensor it wraps).  What shows nowhere in particular (an
error, a death, the number of values returned) has a spot of its kind alone, which
every divergence of that kind meets.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from fuzzer.judge.contract import CALL, INPUT, OUTPUT, Divergence, Place
from fuzzer.program import forms, objects
from fuzzer.program.ir import Case, Program

#: what a :class:`Spot` names (``STATE``: an opaque object's state, which the step returns
#: after every other value)
VALUE, GRADIENT, WRITTEN, SITE, STATE, ANYWHERE = "value", "gradient", "written", "site", "state", "anywhere"


@dataclass(frozen=True)
class Spot:
    """Where a divergence shows, in the program's own names."""

    what: str
    name: str


def spots_of(case: Case, divergences: Iterable[Divergence]) -> frozenset[Spot]:
    """Where ``divergences`` show in ``case``'s program."""
    program = case.program
    out: set[Spot] = set()
    for div in divergences:
        out.update(_spot(program, place) for place in div.at)
        if not div.at:
            out.add(Spot(ANYWHERE, div.kind))
    return frozenset(out)


def own_spots(case: Case, divergences: Iterable[Divergence]) -> frozenset[Spot]:
    """A finding's spots (:func:`spots_of`), each value a tagged op returns (or one that may
    become its operand) standing for its operand 0 too: the shrink may read the operand in
    its place."""
    found = set(spots_of(case, divergences))
    made = {stmt.out: stmt for stmt in case.program.body if stmt.out is not None}
    todo = [spot.name for spot in found if spot.what == VALUE]
    while todo:
        stmt = made.get(todo.pop())
        if stmt is not None and stmt.args and (forms.form(stmt.form).result_aliases
                                               or forms.form(stmt.form).shrink.to_operand):
            operand = stmt.args[0]
            if Spot(VALUE, operand) not in found:
                found.add(Spot(VALUE, operand))
                todo.append(operand)
    return frozenset(found)


def keeps(own: frozenset[Spot], case: Case, divergences: Iterable[Divergence]) -> bool:
    """Whether ``divergences`` of ``case`` show at one of a finding's own spots."""
    return not own.isdisjoint(spots_of(case, divergences))


def renamed(own: frozenset[Spot], names: Mapping[str, str], sites: Mapping[int, int]) -> frozenset[Spot]:
    """``own`` in new ``names`` and ``sites`` (``signature.renaming``'s); a spot whose name
    the renamed program no longer has is left out, lest it meet another's new name."""
    out = set()
    for spot in own:
        if spot.what in (VALUE, GRADIENT, WRITTEN):
            if spot.name in names:
                out.add(Spot(spot.what, names[spot.name]))
        elif spot.what == SITE and spot.name.isdigit():
            if int(spot.name) in sites:
                out.add(Spot(SITE, str(sites[int(spot.name)])))
        else:
            out.add(spot)
    return frozenset(out)


def _spot(program: Program, place: Place) -> Spot:
    if place.what == OUTPUT:
        index = place.key
        if index < len(program.outputs):
            return Spot(VALUE, program.outputs[index])
        index -= len(program.outputs)
        if program.mode.grad and index < len(program.inputs):
            return Spot(GRADIENT, program.inputs[index].name)  # ``step`` returns them after the values
        index -= len(program.inputs) if program.mode.grad else 0
        states = objects.states(program.mode.objects)  # and the objects' states after them
        return Spot(STATE, states[index]) if index < len(states) else Spot(ANYWHERE, OUTPUT)
    if place.what == INPUT:
        return Spot(WRITTEN, str(place.key))
    if place.what == CALL:
        op, site = place.key
        return Spot(SITE, str(site)) if site is not None else Spot(SITE, op)  # a user's op has no site
    raise ValueError(f"no spot for a place of {place.what!r}")
