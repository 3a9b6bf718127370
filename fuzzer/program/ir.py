"""The typed program IR: inputs over shared size symbols, a body of statements, outputs.

A program is data, not code: it is generated, checked, shrunk, saved as JSON and
lowered to Python (``codegen``).  :func:`check` re-derives every value's dims and
storage from the statement forms, so any edited program (the shrinker's, a corpus
entry's) is held to the same legality rules as a freshly generated one:

* every operand is defined before use and has dims its form accepts;
* a mutated operand never shares storage with another operand of the same
  statement (eager aliasing between a written and a read argument is outside what
  a custom op may be handed, so such programs are never produced);
* every symbol is the bare dim of some input, so the function can read it.

:func:`dead_pure_sites` is the program-level liveness used by the ``missed-dce``
report.  It over-approximates liveness (any write to a storage something live
reads counts), so it never calls a needed call dead.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field

from fuzzer.program import forms, sizes
from fuzzer.program.custom_ops import EFFECTFUL, PURE
from fuzzer.program.sizes import Dims


class InvalidProgram(ValueError):
    """A program that breaks the IR's legality rules."""


@dataclass(frozen=True)
class Input:
    name: str
    dims: Dims


@dataclass(frozen=True)
class Stmt:
    """One statement: ``out = form(args..., **attrs)``; ``out`` is None for no result.

    ``attrs`` holds the form's scalars (``dim``, ``c``, ``fn``) and, for custom ops,
    ``site``: the call-site id recorded in the run-time trace.
    """

    form: str
    args: tuple[str, ...]
    out: str | None = None
    attrs: dict = field(default_factory=dict, hash=False, compare=True)

    @property
    def site(self) -> int | None:
        return self.attrs.get("site")


@dataclass(frozen=True)
class Program:
    symbols: tuple[str, ...]
    sym_min: dict = field(hash=False, compare=True)
    inputs: tuple[Input, ...] = ()
    body: tuple[Stmt, ...] = ()
    outputs: tuple[str, ...] = ()

    # ------------------------------------------------------------- serialisation
    def to_json(self) -> dict:
        return {
            "symbols": list(self.symbols),
            "sym_min": dict(self.sym_min),
            "inputs": [{"name": i.name, "dims": list(i.dims)} for i in self.inputs],
            "body": [
                {"form": s.form, "args": list(s.args), "out": s.out, "attrs": dict(s.attrs)}
                for s in self.body
            ],
            "outputs": list(self.outputs),
        }

    @classmethod
    def from_json(cls, data: dict) -> Program:
        try:
            return cls(
                symbols=tuple(data["symbols"]),
                sym_min={str(k): int(v) for k, v in data["sym_min"].items()},
                inputs=tuple(Input(i["name"], tuple(i["dims"])) for i in data["inputs"]),
                body=tuple(
                    Stmt(s["form"], tuple(s["args"]), s.get("out"), dict(s.get("attrs", {})))
                    for s in data["body"]
                ),
                outputs=tuple(data["outputs"]),
            )
        except (KeyError, TypeError, AttributeError) as exc:
            raise InvalidProgram(f"malformed program JSON: {exc!r}") from exc

    def digest(self) -> str:
        """Content hash: equal programs (same IR) have equal digests."""
        text = json.dumps(self.to_json(), sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()

    # --------------------------------------------------------------- structure
    def custom_ops(self) -> list[str]:
        """Names of the custom ops the program calls, each once, in library order."""
        used = {forms.form(s.form).custom for s in self.body} - {None}
        from fuzzer.program.custom_ops import CUSTOM_OPS
        return [op.name for op in CUSTOM_OPS if op.name in used]

    def sites(self) -> dict[int, Stmt]:
        return {s.site: s for s in self.body if s.site is not None}


@dataclass(frozen=True)
class Typing:
    """What :func:`check` derives: dims and storage root of every value."""

    dims: dict[str, Dims]
    root: dict[str, str]


def check(program: Program) -> Typing:
    """Type the program; raise :class:`InvalidProgram` on any broken rule."""
    dims: dict[str, Dims] = {}
    root: dict[str, str] = {}
    for sym in program.symbols:
        if not sizes.is_symbol(sym):
            raise InvalidProgram(f"bad symbol name {sym!r}")
    for inp in program.inputs:
        if inp.name in dims:
            raise InvalidProgram(f"duplicate value {inp.name}")
        for d in inp.dims:
            if not sizes.symbols_in(d) <= set(program.symbols):
                raise InvalidProgram(f"input {inp.name} uses an undeclared symbol in {d!r}")
        dims[inp.name] = tuple(inp.dims)
        root[inp.name] = inp.name
    readable = {d for inp in program.inputs for d in inp.dims if sizes.is_symbol(d)}
    for sym in program.symbols:
        if sym not in readable:
            raise InvalidProgram(f"symbol {sym} is not the bare dim of any input")
    sites: set[int] = set()
    for n, stmt in enumerate(program.body):
        try:
            form = forms.form(stmt.form)
            if len(stmt.args) != form.arity:
                raise forms.Illegal(f"{form.name} takes {form.arity} operands")
            for a in stmt.args:
                if a not in dims:
                    raise forms.Illegal(f"operand {a} is not defined")
            for w in form.mutates:
                for j, other in enumerate(stmt.args):
                    if j != w and root[other] == root[stmt.args[w]]:
                        raise forms.Illegal(f"written operand {stmt.args[w]} shares storage with {other}")
            if form.is_custom:
                site = stmt.site
                if not isinstance(site, int) or site in sites:
                    raise forms.Illegal(f"custom call needs a unique int site, got {site!r}")
                sites.add(site)
            out_dims = form.infer([dims[a] for a in stmt.args], stmt.attrs, program.sym_min)
        except (forms.Illegal, ValueError) as exc:
            raise InvalidProgram(f"statement {n} ({stmt.form}): {exc}") from exc
        if (out_dims is None) != (stmt.out is None):
            raise InvalidProgram(f"statement {n} ({stmt.form}): result/no-result mismatch")
        if stmt.out is not None:
            if stmt.out in dims:
                raise InvalidProgram(f"statement {n}: value {stmt.out} defined twice")
            dims[stmt.out] = out_dims
            root[stmt.out] = root[stmt.args[0]] if form.is_view else stmt.out
    for o in program.outputs:
        if o not in dims:
            raise InvalidProgram(f"output {o} is not defined")
    return Typing(dims=dims, root=root)


def live_statements(program: Program, typing: Typing | None = None) -> set[int]:
    """Indices of statements whose work can reach an output, an input or an effect."""
    typing = typing or check(program)
    root = typing.root
    inputs = {i.name for i in program.inputs}
    live_values = set(program.outputs)
    live_roots = {root[v] for v in live_values} | inputs
    live: set[int] = set()
    changed = True
    while changed:
        changed = False
        for n, stmt in enumerate(program.body):
            if n in live:
                continue
            form = forms.form(stmt.form)
            writes = {root[stmt.args[w]] for w in form.mutates}
            if (form.category == EFFECTFUL or writes & live_roots
                    or (stmt.out is not None and stmt.out in live_values)):
                live.add(n)
                changed = True
                for a in stmt.args:
                    live_values.add(a)
                    live_roots.add(root[a])
                if stmt.out is not None:
                    live_roots.add(root[stmt.out])
        # a value read by a live statement makes earlier writes to its storage live
    return live


def dead_pure_sites(program: Program) -> set[int]:
    """Call sites of pure custom ops whose results nothing live ever reads."""
    live = live_statements(program)
    return {
        s.site for n, s in enumerate(program.body)
        if n not in live and forms.category_of(s.form) == PURE and s.site is not None
    }


@dataclass(frozen=True)
class Case:
    """A program with the bindings it runs on and the seed of its input data.

    All bindings run through one compiled function, in order: the first compiles,
    later ones exercise guards and recompiles (sizes 0 and 1 are specialised).
    """

    program: Program
    bindings: tuple[dict, ...]
    input_seed: int

    def to_json(self) -> dict:
        return {
            "program": self.program.to_json(),
            "bindings": [dict(b) for b in self.bindings],
            "input_seed": self.input_seed,
        }

    @classmethod
    def from_json(cls, data: dict) -> Case:
        try:
            return cls(
                program=Program.from_json(data["program"]),
                bindings=tuple({str(k): int(v) for k, v in b.items()} for b in data["bindings"]),
                input_seed=int(data["input_seed"]),
            )
        except (KeyError, TypeError, AttributeError, ValueError) as exc:
            raise InvalidProgram(f"malformed case JSON: {exc!r}") from exc

    def validate(self) -> Typing:
        typing = check(self.program)
        if not self.bindings:
            raise InvalidProgram("a case needs at least one binding")
        for b in self.bindings:
            if set(b) != set(self.program.symbols):
                raise InvalidProgram(f"binding {b} does not bind exactly {self.program.symbols}")
            for s, v in b.items():
                if v < self.program.sym_min.get(s, 0):
                    raise InvalidProgram(f"binding {b} puts {s} below its minimum")
        return typing
