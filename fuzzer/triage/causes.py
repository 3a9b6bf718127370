"""Causes: what in torch went wrong, told by probes, before what the program did.

A bug's key names where its symptom shows (the family of its class, a stage, a switch,
a pass, the forms of its program), and one cause in torch shows in many places: an
ORDERED effect inside a ``torch.cond`` branch, a ``while_loop`` body or a ``map`` body
is dropped at ``aot_eager``, or its token placeholder is never passed (Inductor), or a
real token meets fake tensors, or AOTAutograd's token unlifting asserts: one cause by
its reading in torch's source (the higher-order op's call never threads the token its
functionalized body discovers), seven bugs of the corpus and nine of a 20-minute
campaign, split by family, stage, forms and gradients.  A :class:`Cause` is a fact
about the cause that probes can show on a finding whatever its symptom; where they
show it, the key is the cause alone (``bugs.key_of``: ``cause @ <name>``), and neither
the family, nor the stage, nor the switches, nor the program's forms split it.

Each cause is probed the way the aliasing fact is (``fuzzer.triage.aliasing``): by
compiles whose answers rule out what else could remove the bug.

- ``effect-in-<hop>``: the bug is gone with the effect's call taken out of the body
  (the bare call, the higher-order op gone) *and* gone with the higher-order op kept
  around a body without an effect (``cond_sin``'s pure call; ``while_scale``'s write
  of a fresh value): it needs the effect inside that op's body, not the op, not the
  effect.  One key per higher-order op, whose code threads (or does not thread) its
  own tokens.  A ``map``'s body without an effect is ``map_sin``, a form no program
  draws (``form.TWIN``).
- ``tagged-result``: a wrong value at ``aot_eager`` (functionalization) gone with each
  tagged op (its result the operand it writes: ``Form.result_aliases``) made the plain
  mutating call of that operand, its result read as the operand
  (``rewire.read_as_operand``): functionalization returns a tagged op's result as a
  fresh tensor, so a write through it never reaches the argument (a wrong value
  returned, or written to an input: one cause, split by what each program does).
- ``effect-edge``: a reordering of ORDERED effects on Inductor (or a wrong value on
  Inductor in a program of two effects or more, where they share a state: a reference
  object's, written by one and read by the other) that is gone with the
  edge Inductor records between consecutive effectful kernels taken as meant
  (``edges.py``: ``with_effects``'s lowering records the dependency on the previous
  effectful operation under that operation's name, where the scheduler reads buffer
  names, so the edge is dropped); before, the peak-memory reordering, fusion and the
  no-op removal that each let a scheduler exploit the missing edge split it in three.

- ``value-object-in-subgraph``: an error of Inductor's (at compile or in the code it
  generates) gone with the value-type object's op taken out of the higher-order op (the
  bare call beside its object) *and* gone with the same higher-order op around a body
  without the object (``cond_sin``; ``layer_sin``, a region applied twice around
  ``p_sin``): Inductor lowers a call in a subgraph (a ``cond`` branch, a region, a
  region's forward partition under gradients) in a lowering of the subgraph's own, which
  records the names a value object's ``__fx_repr__`` uses where the module it loads
  never binds them.  One key, whatever the subgraph's generated name
  (``true_graph_0``, ``repeated_subgraph0``, ``partitioned_fw_subgraph_0_0``) that the
  error's site would split it by.

Anything but the bug gone leaves the cause unsaid, and the key is made as before: a
finding is never grouped by a cause no probe showed.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

from fuzzer.judge import contract
from fuzzer.judge.identity import BugClass
from fuzzer.program import forms
from fuzzer.program.ir import Case, InvalidProgram, Program, Stmt
from fuzzer.program.rewire import read_as_operand
from fuzzer.triage import edges
from fuzzer.triage.family import VALUE_KINDS
from fuzzer.triage.probe import Outcome, Probe

#: the family part of a cause's key: one bug whatever symptoms it shows
FAMILY = BugClass("cause")


@dataclass(frozen=True)
class Cause:
    """A fact about a bug's cause that probes show (:mod:`the module docstring <fuzzer.triage.causes>`)."""

    #: its name, the blame of its key
    name: str
    #: what went wrong, as an issue's title says it
    title: str
    #: what went wrong in torch, in words (titles, reports)
    words: str
    #: what its probes showed, in words (reports)
    probes: str
    #: whether it is asked of a finding of ``kind`` on ``case``, first shown on ``stage``
    applies: Callable[[Case, str, str], bool]
    #: whether the probes show it, on ``stage``
    shown: Callable[[Probe, str], bool]
    #: whether a program holds what the probes showed the cause needs, before it runs
    #: (None: what it needs shows only in a run, as a reordering on Inductor does); a
    #: campaign avoiding held bugs draws again a program that holds a held cause
    #: (``fuzzer.campaign.avoidance``)
    held_by: Callable[[Program], bool] | None = None


def _effect_in_body(hop: str) -> Callable[[Case, str, str], bool]:
    held_by = _body_holds(hop)

    def applies(case: Case, kind: str, stage: str) -> bool:
        return kind not in contract.PROCESS_KINDS and held_by(case.program)
    return applies


def _body_holds(hop: str) -> Callable[[Program], bool]:
    def held_by(program: Program) -> bool:
        return any(_in_body(stmt, hop) for stmt in program.body)
    return held_by


def _in_body(stmt: Stmt, hop: str) -> bool:
    form = forms.form(stmt.form)
    return form.hop == hop and stmt.form in TWINS


#: each form with an ORDERED effect in a higher-order op's body: the same op around a
#: body without an effect, and the bare call it wraps (both return a value, as it does)
TWINS: dict[str, tuple[str, str]] = {
    "cond_tap": ("cond_sin", "e_tap"),
    "cond_log": ("cond_sin", "e_tap"),
    "while_tap": ("while_scale", "e_tap"),
    "map_tap": ("map_sin", "e_tap"),
}


def _rewritten(case: Case, hop: str | None, which: int, twins: dict[str, tuple[str, str]] | None = None) -> Case | None:
    """``case`` with each effect in a ``hop`` body (each form of ``twins``, default
    :data:`TWINS`, in a body of any higher-order op where ``hop`` is None) rewritten to its
    twin ``which`` (0: the op around no effect, 1: the bare call); None where the IR
    refuses it."""
    twins = TWINS if twins is None else twins
    body = []
    for stmt in case.program.body:
        if stmt.form in twins and (hop is None or forms.form(stmt.form).hop == hop):
            twin = forms.form(twins[stmt.form][which])
            attrs = {k: v for k, v in stmt.attrs.items() if k in ("site", "no_grad") or (k == "site2" and twin.branches)
                     or (k == "obj" and twin.object_class)}
            stmt = Stmt(twin.name, stmt.args[:twin.arity], stmt.out, attrs)
        body.append(stmt)
    cut = dataclasses.replace(case, program=dataclasses.replace(case.program, body=tuple(body)))
    try:
        cut.validate()
    except InvalidProgram:
        return None
    return cut


def _shown_by_twins(twins: dict[str, tuple[str, str]], hop: str | None = None) -> Callable[[Probe, str], bool]:
    """Whether the bug is gone with each form of ``twins`` (in a ``hop`` body; any where
    None) made its bare call, and gone with it made the op around a body without it."""
    def shown(probe: Probe, stage: str) -> bool:
        for which in (1, 0):  # the bare call first: most findings of other causes keep the op
            twin = _rewritten(probe.case, hop, which, twins)
            if twin is None or probe.outcome(stage, case=twin) is not Outcome.GONE:
                return False
        return True
    return shown


def _shown_in_body(hop: str) -> Callable[[Probe, str], bool]:
    return _shown_by_twins(TWINS, hop)


#: each form with a value-type object's op inside a higher-order op: the same op around
#: a body without the object, and the bare call beside its object
VALUE_TWINS: dict[str, tuple[str, str]] = {
    "o_scale_cond": ("cond_sin", "o_scale"),
    "o_scale_layer": ("layer_sin", "o_scale"),
}


def _value_in_subgraph(case: Case, kind: str, stage: str) -> bool:
    return kind in contract.ERROR_KINDS and stage == "inductor" and _value_held(case.program)


def _value_held(program: Program) -> bool:
    return any(stmt.form in VALUE_TWINS for stmt in program.body)


def _tagged_result(case: Case, kind: str, stage: str) -> bool:
    return kind in VALUE_KINDS and stage == "aot_eager" and any(
        forms.form(stmt.form).result_aliases for stmt in case.program.body)


def _untagged(case: Case) -> Case | None:
    """``case`` with each call whose result is the operand it writes (a tagged op's) made
    the plain mutating call of that operand (its form's first simpler form that returns
    nothing), every later read of the result reading the operand; None where a form has
    no such plain form or the IR refuses the case."""
    program = case.program
    for n in reversed(range(len(program.body))):
        stmt = program.body[n]
        form = forms.form(stmt.form)
        if not form.result_aliases:
            continue
        plain = next((forms.form(name) for name in form.shrink.simpler if not forms.form(name).returns), None)
        if plain is None:
            return None
        call = Stmt(plain.name, stmt.args[:plain.arity], None, {"site": stmt.attrs["site"]} if "site" in stmt.attrs else {})
        program = read_as_operand(program, n, call)
    untagged = dataclasses.replace(case, program=program)
    try:
        untagged.validate()
    except InvalidProgram:
        return None
    return untagged


def _shown_tagged(probe: Probe, stage: str) -> bool:
    untagged = _untagged(probe.case)
    return untagged is not None and probe.outcome(stage, case=untagged) is Outcome.GONE


def _reordered_on_inductor(case: Case, kind: str, stage: str) -> bool:
    """A reordering of effects on Inductor, or a wrong value on Inductor in a program of
    two ORDERED effects or more: the order of two effects on one state (an opaque
    object's, a library's global) shows in the values they leave, not in the log."""
    if stage != "inductor" or not edges.available():
        return False
    return kind == contract.EFFECT_LOG or (
        kind in VALUE_KINDS and sum(forms.form(stmt.form).is_effectful for stmt in case.program.body) >= 2)


def _shown_edge(probe: Probe, stage: str) -> bool:
    return probe.outcome(stage, within=edges.kept) is Outcome.GONE


#: what the probes of an effect in a body show, in words
BODY_PROBES = ("gone with the effect's bare call in its place, and gone with the same higher-order op around a "
               "body without an effect")


def _effect_in(name: str, form: str, where: str) -> Cause:
    """``effect-in-<name>``: the token of an ORDERED effect inside ``where``, the body
    of form ``form``'s higher-order op, is not threaded through the call."""
    hop = forms.form(form).hop
    return Cause(f"effect-in-{name}", f"the effect token of an ORDERED custom op inside {where} is not threaded",
                 f"an ORDERED effect inside {where}: the token its functionalized body discovers is not "
                 "threaded through the call", BODY_PROBES, _effect_in_body(hop), _shown_in_body(hop), _body_holds(hop))


def named(name: str) -> Cause | None:
    """The cause of that name (a cause key's blame), None for none."""
    return next((c for c in CAUSES if c.name == name), None)


#: every cause, in the order they are asked; the first shown is the key
CAUSES: tuple[Cause, ...] = (
    _effect_in("cond", "cond_tap", "a torch.cond branch"),
    _effect_in("while_loop", "while_tap", "a while_loop body"),
    _effect_in("map", "map_tap", "a map body"),
    Cause("tagged-result", "a tagged custom op's result is not an alias of the argument it writes",
          "a tagged custom op's result (Tag.inplace's argument, Tag.out's buffer, a schema's "
          "-> Tensor(a!)) is returned from functionalization as a fresh tensor, not as an alias of what it wrote, "
          "so a write through it, or a read of it after a write, misses the other",
          "gone at aot_eager with the plain mutating op in its place and its result read as the operand it writes",
          _tagged_result, _shown_tagged),
    Cause("value-object-in-subgraph", "a value-type opaque object's class is unbound in Inductor's code for a "
          "subgraph",
          "a custom op given a value-type opaque object inside a higher-order op (a torch.cond branch, a "
          "nested_compile_region): Inductor lowers the call in the subgraph's own lowering, which records the names "
          "the object's __fx_repr__ uses where the module it loads never binds them",
          "gone on Inductor with the object's op called beside its object outside the higher-order op, and gone with "
          "the same higher-order op around a body without the object",
          _value_in_subgraph, _shown_by_twins(VALUE_TWINS), _value_held),
    Cause("effect-edge", "the ordering edge between ORDERED effectful custom-op calls is dropped",
          "the ordering edge between consecutive ORDERED effects is dropped in Inductor's scheduler "
          "(with_effects' lowering records it under the operation's name, the scheduler reads buffer names)",
          "gone with the edge read under the operation's name as well, for one compile (fuzzer/triage/edges.py)",
          _reordered_on_inductor, _shown_edge),
)
BY_NAME = {cause.name: cause for cause in CAUSES}


def shown(probe: Probe, stage: str) -> str:
    """The name of the first cause that applies to the probe's finding, first shown on
    ``stage``, and that its probes show ("" where none)."""
    for cause in CAUSES:
        if cause.applies(probe.case, probe.kind, stage) and cause.shown(probe, stage):
            return cause.name
    return ""
