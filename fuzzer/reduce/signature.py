"""Signatures: when are two findings the same bug?

A signature has two parts, ``<bug class> :: <normal form>``.

The **bug class** (``fuzzer.judge.contract.bug_class``, part of the contract so
that repro scripts carry it) is what must stay fixed while a finding is shrunk, so
that a reduction never slides from one bug to another:

* the kind (``effect-log``, ``wrong-mutation``, ``compile-error``, ...), which
  carries the stage for errors (compile vs run time);
* for errors, the exception type and its first message line, with numbers,
  symbols and value names normalised away; for crashes and timeouts, how the
  process died (the signal, the memory cap, the time limit), the same way;
* for effect-log, the shape of the change: missing / extra / duplicated /
  reordered / data (an event saw other data);
* for wrong values, what differed: shape / dtype / count / non-finite / values;
* for missed-dce, nothing more.

The **normal form** is the program with names, call sites and symbols renumbered
in order of appearance, written one statement per clause.  Shrinking drives every
program that shows a bug toward the same few minimal programs, so after shrinking
the normal form names the bug rather than the random program it was found in: a
campaign in which one bug fires a hundred times yields one entry with a hit count.
Two findings are the same when their signatures are equal strings.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass

from fuzzer.judge.contract import BugClass, Divergence, bug_class
from fuzzer.program.attrs import SITE_KEYS
from fuzzer.program.ir import Case, Input, Program, Stmt
from fuzzer.program.sizes import symbols_in


def symbol_renaming(program: Program) -> dict[str, str]:
    """Old symbol -> ``s<i>``, numbered in order of first appearance in the inputs."""
    mapping: dict[str, str] = {}
    for inp in program.inputs:
        for d in inp.dims:
            for s in sorted(symbols_in(d), key=d.index):
                mapping.setdefault(s, f"s{len(mapping)}")
    return mapping


@dataclass(frozen=True)
class Renaming:
    """What :func:`canonical` renames: each input and value's name, each call site."""

    names: dict[str, str]
    sites: dict[int, int]


def renaming(program: Program) -> Renaming:
    """Inputs ``x<i>`` in order, values ``v<i>`` in order of definition, sites in order
    of appearance (an identical call keeps sharing its site)."""
    names = {inp.name: f"x{i}" for i, inp in enumerate(program.inputs)}
    sites: dict[int, int] = {}
    for stmt in program.body:
        for key in SITE_KEYS:
            if key in stmt.attrs:
                sites.setdefault(stmt.attrs[key], len(sites))
        if stmt.out is not None:
            names[stmt.out] = f"v{sum(1 for n in names.values() if n.startswith('v'))}"
    return Renaming(names, sites)


def canonical(program: Program) -> Program:
    """Rename values, sites and symbols in order of appearance; behaviour is unchanged."""
    sym_map = symbol_renaming(program)

    def dim(expr: str) -> str:
        return re.sub(r"s\d+", lambda m: sym_map[m.group(0)], expr)

    renamed = renaming(program)
    names, sites = renamed.names, renamed.sites
    body = []
    data_sizes = 0
    for stmt in program.body:
        attrs = dict(stmt.attrs)
        for key in SITE_KEYS:
            if key in attrs:
                attrs[key] = sites[attrs[key]]
        if "size" in attrs:
            attrs["size"] = f"u{data_sizes}"
            data_sizes += 1
        out = names[stmt.out] if stmt.out is not None else None
        body.append(Stmt(stmt.form, tuple(names[a] for a in stmt.args), out, attrs))
    return Program(
        symbols=tuple(sym_map[s] for s in sorted(sym_map, key=lambda s: sym_map[s])),
        sym_min={sym_map[s]: v for s, v in program.sym_min.items() if s in sym_map},
        inputs=tuple(Input(names[i.name], tuple(dim(d) for d in i.dims), i.dtype) for i in program.inputs),
        body=tuple(body),
        outputs=tuple(names[o] for o in program.outputs),
        mode=dataclasses.replace(program.mode,
                                 marks=tuple((names[n], d, h) for n, d, h in program.mode.marks),
                                 strided=tuple(names[n] for n in program.mode.strided),
                                 aliases=tuple((names[n], names[b]) for n, b in program.mode.aliases),
                                 module=tuple(names[n] for n in program.mode.module),
                                 layouts=tuple((names[n], how) for n, how in program.mode.layouts),
                                 windows=tuple((names[n], names[b], d, k) for n, b, d, k in program.mode.windows),
                                 objects=tuple((n, c, names[s]) for n, c, s in program.mode.objects),
                                 pairs=tuple((names[n], names[p]) for n, p in program.mode.pairs)),
        imports=program.imports,
    )


def mode_text(program: Program) -> str:
    """The program's mode as the normal form writes it ("" for the default)."""
    mode = program.mode
    if mode.is_default:
        return ""
    parts = [f"dynamic={mode.dynamic}"] + [f"mark {n}:{d}:{h}" for n, d, h in mode.marks]
    parts += (["grad"] if mode.grad else []) + [f"dtype={mode.dtype}"]
    parts += [f"strided {n}" for n in mode.strided] + [f"alias {n}={b}" for n, b in mode.aliases]
    parts += [f"buffer {n}" for n in mode.module] + (["carry"] if mode.carry else [])
    parts += [f"{how} {n}" for n, how in mode.layouts]
    parts += [f"{k} {n}={b}:{d}" for n, b, d, k in mode.windows] + ([f"windows {mode.window_calls}"]
                                                                    if mode.window_calls else [])
    parts += [f"{n}={c}({s})" for n, c, s in mode.objects] + (["objects on module"] if mode.object_attrs else [])
    parts += [f"pair {n}={p}" for n, p in mode.pairs]
    return "[" + " ".join(parts) + "] "


def normal_form(program: Program) -> str:
    p = canonical(program)
    ins = " ".join(f"{i.name}[{','.join(i.dims)}]" for i in p.inputs)
    stmts = []
    for s in p.body:
        extra = [f"{k}={v}" for k, v in sorted(s.attrs.items()) if k != "site"]
        call = f"{s.form}({', '.join(list(s.args) + extra)})"
        stmts.append(f"{s.out} = {call}" if s.out else call)
    return mode_text(p) + f"{ins}; " + "; ".join(stmts) + f"; return ({', '.join(p.outputs)})"


#: what parts a signature's two halves in its text
SEPARATOR = " :: "


@dataclass(frozen=True)
class Signature:
    """A finding's bug class and its program's normal form; its text is what entries
    keep (their JSON, their id's hash), :meth:`parse` the one way back, where an entry
    is read (``Entry.from_json``)."""

    bug_class: BugClass
    normal_form: str

    @property
    def text(self) -> str:
        return f"{self.bug_class.text}{SEPARATOR}{self.normal_form}"

    def __str__(self) -> str:
        return self.text

    @classmethod
    def parse(cls, text: str) -> Signature:
        bug, _, form = text.partition(SEPARATOR)
        return cls(BugClass.parse(bug), form)


def of(kind: str, case: Case, divs: list[Divergence]) -> Signature:
    return Signature(bug_class(kind, divs), normal_form(case.program))

