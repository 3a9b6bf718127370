"""Edits of a case the shrinker proposes: each gives another legal-looking case (the
IR's check and the oracle decide whether it is one), never changing the bug's class
on its own."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable

from fuzzer.program import forms, objects
from fuzzer.program.ir import Case, Input, Mode, Program, Stmt
from fuzzer.program.sizes import symbols_in
from fuzzer.reduce import signature
from fuzzer.reduce.order import SIMPLEST_ATTRS


def with_program(case: Case, **program_changes) -> Case:
    return dataclasses.replace(case, program=dataclasses.replace(case.program, **program_changes))


def with_mode(case: Case, mode: Mode) -> Case:
    """``case`` in ``mode``; a program that no longer takes gradients has no statement run
    under ``torch.no_grad()`` either (the mark means nothing there, and the IR refuses it),
    so the shrinker can drop gradients from a program that has one."""
    body = case.program.body
    if case.program.mode.grad and not mode.grad:
        body = tuple(dataclasses.replace(s, attrs={k: v for k, v in s.attrs.items() if k != "no_grad"})
                     if "no_grad" in s.attrs else s for s in body)
    return with_program(case, mode=mode, body=body)


def remove_statements(case: Case, indices: set[int]) -> Case:
    """Delete statements and, transitively, everything that reads what they defined."""
    removed_values: set[str] = set()
    body = []
    for n, stmt in enumerate(case.program.body):
        if n in indices or any(a in removed_values for a in stmt.args):
            if stmt.out is not None:
                removed_values.add(stmt.out)
            continue
        body.append(stmt)
    outputs = tuple(o for o in case.program.outputs if o not in removed_values)
    return with_program(case, body=tuple(body), outputs=outputs)


def keeping_forms(case: Case, forms: Iterable[str]) -> Case:
    """``case`` with only the statements of ``forms`` and, transitively, those whose
    results they read: where a bug's 1-minimal program is known to use those forms, the
    candidate a shrink of another finding of it may jump to (``Shrinker``'s hints)."""
    wanted, body = set(forms), case.program.body
    needed: set[str] = set()
    kept: set[int] = set()
    for n in reversed(range(len(body))):
        stmt = body[n]
        if stmt.form in wanted or (stmt.out is not None and stmt.out in needed):
            kept.add(n)
            needed.update(stmt.args)
    return remove_statements(case, set(range(len(body))) - kept)


def drop_unused_symbols(case: Case) -> Case:
    p = case.program
    used = {s for i in p.inputs for d in i.dims for s in symbols_in(d)}
    if used == set(p.symbols):
        return case
    symbols = tuple(s for s in p.symbols if s in used)
    return dataclasses.replace(
        case,
        program=dataclasses.replace(p, symbols=symbols,
                                    sym_min={s: v for s, v in p.sym_min.items() if s in used}),
        bindings=tuple({s: v for s, v in b.items() if s in used} for b in case.bindings),
    )


def canonical_case(case: Case) -> Case:
    """Renumber values, sites and symbols; the bindings follow the symbols."""
    renamed = signature.canonical(case.program)
    mapping = signature.symbol_renaming(case.program)
    bindings = tuple({mapping[s]: v for s, v in b.items() if s in mapping} for b in case.bindings)
    return dataclasses.replace(case, program=renamed, bindings=bindings)




def simpler_stmt(stmt: Stmt, simpler: str) -> Stmt:
    """``stmt`` rewritten into form ``simpler``: its sites and ``no_grad`` mark kept, the
    attributes the form starts with (``Shrink.start``) and those it keeps from the
    statement it was (``Form.kept_attrs``, else their simplest values)."""
    form = forms.form(simpler)
    attrs = {"site": stmt.attrs["site"]} if form.is_custom else {}
    if form.sites == 2 and "site2" in stmt.attrs:  # a Function toward one of fewer operands
        attrs["site2"] = stmt.attrs["site2"]
    if stmt.attrs.get("no_grad"):
        attrs["no_grad"] = True
    attrs.update(form.shrink.start)
    for key in form.kept_attrs:  # an object it named, or (past a dim) its simplest value
        if key in stmt.attrs or key in SIMPLEST_ATTRS:
            attrs[key] = stmt.attrs[key] if key in stmt.attrs else SIMPLEST_ATTRS[key]
    # a form without a result can replace a call only if the call's result is unused
    out = stmt.out if form.returns else None
    return Stmt(simpler, stmt.args[:form.arity], out, attrs)


def unused(p: Program, value: str) -> bool:
    return value not in p.outputs and not any(value in s.args for s in p.body)


def merge_symbols(case: Case, old: str, new: str) -> Case:
    pat = re.compile(rf"\b{old}\b")

    def dim(d: str) -> str:
        return pat.sub(new, d)

    p = case.program
    inputs = tuple(Input(i.name, tuple(dim(d) for d in i.dims), i.dtype) for i in p.inputs)
    # an as_strided names its input's dims (``base``): they are renamed with the input's
    body = tuple(dataclasses.replace(s, attrs={**s.attrs, "base": [dim(d) for d in s.attrs["base"]]})
                 if isinstance(s.attrs.get("base"), list) else s for s in p.body)
    program = dataclasses.replace(
        p, symbols=tuple(s for s in p.symbols if s != old), inputs=inputs, body=body,
        sym_min={s: (max(v, p.sym_min.get(old, 0)) if s == new else v)
                 for s, v in p.sym_min.items() if s != old})
    bindings = tuple({s: v for s, v in b.items() if s != old} for b in case.bindings)
    bindings = tuple({s: max(v, program.sym_min.get(s, 0)) for s, v in b.items()} for b in bindings)
    return dataclasses.replace(case, program=program, bindings=bindings)


def without_input(mode: Mode, name: str) -> Mode:
    """The mode once input ``name`` is gone."""
    return objects.settled(dataclasses.replace(mode, marks=tuple(m for m in mode.marks if m[0] != name),
                               strided=tuple(n for n in mode.strided if n != name),
                               aliases=tuple(a for a in mode.aliases if name not in a),
                               module=tuple(n for n in mode.module if n != name),
                               carry=mode.carry and mode.module != (name,),
                               layouts=tuple(x for x in mode.layouts if x[0] != name),
                               objects=tuple(o for o in mode.objects if o[2] != name),
                               pairs=tuple(p for p in mode.pairs if name not in p), **_windows_without(mode, name)))


def _windows_without(mode: Mode, name: str) -> dict:
    """The windows once input ``name`` is gone or changed (those it is or is the base of
    go; with none left, the calls are all alike)."""
    windows = tuple(w for w in mode.windows if name not in w[:2])
    return {"windows": windows, "window_calls": mode.window_calls if windows else ""}


def without_dim(mode: Mode, name: str, k: int) -> Mode:
    """The mode once dim ``k`` of input ``name`` is gone (later dims move down one)."""
    marks = tuple((n, d - (n == name and d > k), h) for n, d, h in mode.marks if (n, d) != (name, k))
    return dataclasses.replace(mode, marks=marks, aliases=tuple(a for a in mode.aliases if name not in a),
                               layouts=tuple(x for x in mode.layouts if x[0] != name), **_windows_without(mode, name))
