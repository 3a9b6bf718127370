"""The typed program IR: inputs over shared size symbols, a body of statements, outputs.

A program is data, not code: it is generated, checked, shrunk, saved as JSON and
lowered to Python (``codegen``).  :func:`check` re-derives every value's dims and
storage from the statement forms, so any edited program (the shrinker's, a corpus
entry's) is held to the same legality rules as a freshly generated one:

* every operand is defined before use and has dims its form accepts;
* a mutated operand never overlaps another operand of the same statement: where
  they share a storage, their elements are proven disjoint for every binding
  (``fuzzer.program.storage``), since where they may overlap eager's result depends
  on the order of the kernel's writes and has no single answer;
* a value ``set_`` swapped onto another storage is read only as that statement's
  result, and its old storage is not written again (``storage.Swaps``);
* an ``as_strided`` view (``Form.dense_root``) is laid over the storage of an input
  handed over contiguous or of a result laid out row-major (``Form.dense_result``),
  whose dims its ``base`` attribute gives, and a view to a dtype of another element
  size (``Form.unit_last``) over a view of one whose last dim has stride 1; nothing
  writes the storage of an input handed over expanded (``fuzzer.program.layouts``);
  no aten form writes an ``as_strided`` of a view, nor a view of one, which
  functionalization refuses in compile (``strided_writes.LateStrided``);
* every symbol is the bare dim of some input, so the function can read it;
* a call site is unique, except that an *identical call* (same form, operands and
  attributes as an earlier statement) repeats its site: that is how a program asks
  for common-subexpression elimination, which a pure call allows and an effectful
  or mutating one forbids;
* a form that may be called once (``Form.once``) is;
* under ``Mode.grad`` (inputs are leaves that require grad, a loss is taken and
  its gradients judged), nothing is written that autograd would refuse: see
  :class:`GradRules` (under ``torch.func.grad``: ``fuzzer.program.func_grad``);
* every operand has the dtype its form takes: the program's own, or a fixed one
  (``FIXED_DTYPES``: the integer, float8 or pinned float tensors a user's op takes or
  gives), and an integer or float8 tensor is made only from values the compiler does
  not compute (:class:`fuzzer.program.exact.ExactRules`), so it can be compared exactly.

A program's :class:`Mode` says how it is run beyond its body: how it is compiled
(``dynamic=True`` or automatic dynamic), which input dims are marked, whether
gradients are taken, the inputs' dtype and layout, which inputs are a module's buffers.
``codegen`` prints all of it.

The liveness behind the ``missed-dce`` report is ``fuzzer.program.liveness``; what
autograd allows a program that takes gradients is ``fuzzer.program.grad``.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field

from fuzzer.program import dtypes as dtypes_
from fuzzer.program import forms, layouts, objects, pairs, sizes, sources, storage, strided_writes, windows
from fuzzer.program import mode as mode_
from fuzzer.program.attrs import SITE_KEYS, Attrs
from fuzzer.program.form_record import Illegal
from fuzzer.program.mode import DYNAMIC_MODES, MARKS, Mode  # noqa: F401 - the IR's names, as callers know them
from fuzzer.program.exact import ExactRules
from fuzzer.program.func_grad import grad_rules
from fuzzer.program.sizes import Dims


class InvalidProgram(ValueError):
    """A program that breaks the IR's legality rules."""


@dataclass(frozen=True)
class Input:
    name: str
    dims: Dims
    #: a fixed dtype (one of FIXED_DTYPES) the input has whatever the program's dtype;
    #: None: the program's own (``Mode.dtype``)
    dtype: str | None = None

    def to_json(self) -> dict:
        return {"name": self.name, "dims": list(self.dims), **({"dtype": self.dtype} if self.dtype else {})}


#: the program's dtype, and the fixed dtypes a tensor may have whatever the program's:
#: those a user's op takes or gives (``fuzzer.program.dtypes``)
DTYPES, FIXED_DTYPES = dtypes_.DTYPES, dtypes_.FIXED_DTYPES


@dataclass(frozen=True)
class Stmt:
    """One statement: ``out = form(args..., **attrs)``; ``out`` is None for no result.

    ``attrs`` holds the form's scalars (``dim``, ``c``, ``fn``) and, for custom ops,
    ``site``: the call-site id recorded in the run-time trace (every key:
    :class:`fuzzer.program.attrs.Attrs`).
    """

    form: str
    args: tuple[str, ...]
    out: str | None = None
    attrs: Attrs = field(default_factory=dict, hash=False, compare=True)

    @property
    def site(self) -> int | None:
        return self.attrs.get("site")

    @property
    def sites(self) -> tuple[int, ...]:
        """Every call site of the statement (a ``torch.cond`` has one per branch)."""
        return tuple(self.attrs[k] for k in SITE_KEYS if k in self.attrs)

    @property
    def data_size(self) -> str | None:
        """The name of the size only the data knows that it binds (``Attrs.size``)."""
        return self.attrs.get("size")

    @property
    def no_grad(self) -> bool:
        """Whether it runs under ``torch.no_grad()`` (``Attrs.no_grad``)."""
        return bool(self.attrs.get("no_grad"))


@dataclass(frozen=True)
class Program:
    symbols: tuple[str, ...]
    sym_min: dict = field(hash=False, compare=True)
    inputs: tuple[Input, ...] = ()
    body: tuple[Stmt, ...] = ()
    outputs: tuple[str, ...] = ()
    mode: Mode = field(default_factory=Mode)
    #: the user modules whose ops it calls (``fuzzer.user``), as (module, folder) or
    #: (module, folder, hints file): whoever reads the program imports them first
    imports: tuple[tuple[str, ...], ...] = ()

    # ------------------------------------------------------------- serialisation
    def to_json(self) -> dict:
        data = {
            "symbols": list(self.symbols),
            "sym_min": dict(self.sym_min),
            "inputs": [i.to_json() for i in self.inputs],
            "body": [
                {"form": s.form, "args": list(s.args), "out": s.out, "attrs": dict(s.attrs)}
                for s in self.body
            ],
            "outputs": list(self.outputs),
        }
        if not self.mode.is_default:
            data["mode"] = self.mode.to_json()
        if self.imports:
            data["imports"] = [{"module": i[0], "path": i[1], **({"hints": i[2]} if len(i) > 2 else {})}
                               for i in self.imports]
        return data

    @classmethod
    def from_json(cls, data: dict) -> Program:
        try:
            imports = tuple((str(i["module"]), str(i["path"])) + ((str(i["hints"]),) if i.get("hints") else ())
                            for i in data.get("imports", ()))
        except (KeyError, TypeError) as exc:
            raise InvalidProgram(f"malformed program JSON: {exc!r}") from exc
        if imports:  # the ops it calls are registered before its body is read
            try:
                sources.load(imports)
            except ValueError as exc:
                raise InvalidProgram(f"the program calls ops it imports: {exc}") from exc
        try:
            return cls(
                symbols=tuple(data["symbols"]),
                sym_min={str(k): int(v) for k, v in data["sym_min"].items()},
                inputs=tuple(Input(i["name"], tuple(i["dims"]), i.get("dtype")) for i in data["inputs"]),
                body=tuple(
                    Stmt(s["form"], tuple(s["args"]), s.get("out"), dict(s.get("attrs", {})))
                    for s in data["body"]
                ),
                outputs=tuple(data["outputs"]),
                mode=Mode.from_json(data.get("mode", {})),
                imports=imports,
            )
        except (KeyError, TypeError, AttributeError, ValueError) as exc:
            raise InvalidProgram(f"malformed program JSON: {exc!r}") from exc

    def digest(self) -> str:
        """Content hash: equal programs (same IR) have equal digests."""
        text = json.dumps(self.to_json(), sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()

    # --------------------------------------------------------------- structure
    def custom_ops(self) -> list[str]:
        """Names of the custom ops the program calls, each once, in library order."""
        used = {op for s in self.body for op in forms.form(s.form).ops}
        from fuzzer.program.custom_ops import CUSTOM_OPS
        return [op.name for op in CUSTOM_OPS if op.name in used]

    def user_ops(self) -> list[str]:
        """Qualified names of the user's ops it calls (``fuzzer.user``), each once."""
        return sorted({s.form for s in self.body if not forms.form(s.form).site_traced})

    def sites(self) -> dict[int, Stmt]:
        return {site: s for s in self.body for site in s.sites}

    def features(self) -> list[str]:
        """The features (``fuzzer.program.features``) the program uses, read off it."""
        from fuzzer.program.features import used_by
        return used_by(self)


@dataclass(frozen=True)
class Typing:
    """What :func:`check` derives: dims, storage root and dtype of every value (None:
    the program's own; else one of FIXED_DTYPES)."""

    dims: dict[str, Dims]
    root: dict[str, str]
    dtypes: dict[str, str | None] = field(default_factory=dict)
    #: the elements of its root's storage each value covers (None: maybe all)
    prints: dict[str, storage.Footprint | None] = field(default_factory=dict)
    #: the roots laid out row-major from offset 0, that an ``as_strided`` may be laid
    #: over: inputs handed over contiguous (:func:`dense_inputs`), ``Form.dense_result``
    #: results
    dense: set[str] = field(default_factory=set)
    #: the values no aten form writes, the inputs no statement reads (``strided_writes.LateStrided``)
    late: strided_writes.LateStrided = field(default_factory=strided_writes.LateStrided)


def _check_mode(program: Program, dims: dict[str, Dims]) -> None:
    wrong = mode_.problem(program.mode, dims, program.inputs, dtypes_of(program))
    wrong = wrong or windows.problem(program.mode, dims, dtypes_of(program), program.sym_min)
    wrong = wrong or pairs.problem(program.mode, dims, dtypes_of(program))
    if wrong is not None:
        raise InvalidProgram(wrong)


def dtypes_of(program: Program) -> dict[str, str | None]:
    return {i.name: i.dtype for i in program.inputs}


def dense_inputs(program: Program) -> set[str]:
    """The inputs handed over contiguous (row-major, from offset 0), over whose storage
    an ``as_strided`` may be laid (not a window's base where the windows are distinct
    inputs at some call: a view of such a window would not view the base there)."""
    apart = {w[1] for w in program.mode.windows} if program.mode.window_calls else set()
    return {i.name for i in program.inputs
            if i.name not in program.mode.strided and i.name not in dict(program.mode.layouts) and i.name not in apart}


def check(program: Program) -> Typing:
    """Type the program; raise :class:`InvalidProgram` on any broken rule."""
    typing = _typed_inputs(program)
    rules = _Rules(program, typing)
    for n, stmt in enumerate(program.body):
        rules.admit(n, stmt)
    for o in program.outputs:
        if o not in typing.dims or o in rules.swaps.swapped or o in rules.partners:
            raise InvalidProgram(f"output {o} is not defined, swapped onto another storage, or a pair's part")
    return typing


def _typed_inputs(program: Program) -> Typing:
    """The typing of the inputs alone: each symbol well named and the bare dim of some
    input, each input over declared symbols, the mode legal, aliases and windows rooted
    in their base."""
    dims: dict[str, Dims] = {}
    root: dict[str, str] = {}
    prints: dict[str, storage.Footprint | None] = {}
    for sym in program.symbols:
        if not sizes.is_symbol(sym):
            raise InvalidProgram(f"bad symbol name {sym!r}")
    for inp in program.inputs:
        if inp.name in dims:
            raise InvalidProgram(f"duplicate value {inp.name}")
        for d in inp.dims:
            if not sizes.symbols_in(d) <= set(program.symbols) or sizes.has_unbacked(d):
                raise InvalidProgram(f"input {inp.name} uses an undeclared symbol in {d!r}")
        dims[inp.name] = tuple(inp.dims)
        root[inp.name] = inp.name
        prints[inp.name] = storage.Footprint.whole(dims[inp.name])
    readable = {d for inp in program.inputs for d in inp.dims if sizes.is_symbol(d)}
    for sym in program.symbols:
        if sym not in readable:
            raise InvalidProgram(f"symbol {sym} is not the bare dim of any input")
    _check_mode(program, dims)
    for name, base in program.mode.aliases:
        root[name] = base
    windows.enter(program.mode.windows, root, prints, dims)
    return Typing(dims=dims, root=root, dtypes={**dtypes_of(program), **pairs.kinds(program.mode)}, prints=prints,
                  dense=dense_inputs(program))


class _Rules:
    """The rules each statement is held to in turn, with what they keep from the
    statements before it (``typing``, grown statement by statement)."""

    def __init__(self, program: Program, typing: Typing) -> None:
        self.program, self.typing = program, typing
        self.inputs = {i.name for i in program.inputs}
        self.grad = grad_rules(program.mode.func_grad) if program.mode.grad else None
        for name in self.inputs if self.grad else ():
            self.grad.add_input(name)
        self.calls: dict[int, Stmt] = {}
        self.unbacked: set[str] = set()
        self.exact, self.swaps, self.partners = ExactRules(), storage.Swaps(), pairs.partners(program.mode)
        self.late = typing.late

    def admit(self, n: int, stmt: Stmt) -> None:
        """Type statement ``n``, or raise :class:`InvalidProgram`."""
        try:
            form = forms.form(stmt.form)
            out_dims = self._result_dims(n, stmt, form)
        except (Illegal, ValueError) as exc:
            raise InvalidProgram(f"statement {n} ({stmt.form}): {exc}") from exc
        self._record(n, stmt, form, out_dims)

    def _result_dims(self, n: int, stmt: Stmt, form) -> Dims | None:
        """The dims of ``stmt``'s result (None: it has none) once every rule it is held
        to passes; raises ``form_record.Illegal``."""
        program, t = self.program, self.typing
        if len(stmt.args) != form.arity:
            raise Illegal(f"{form.name} takes {form.arity} operands")
        for a in stmt.args:
            if a not in t.dims or a in self.partners:
                raise Illegal(f"operand {a} is not defined, or is a pair's part only (Mode.pairs)")
        check_dtypes(stmt, form, t.dtypes, program.mode)
        objects.check_named(form.object_class, stmt.attrs.get("obj"), program.mode.objects)
        if form.specialises and any(how == "unbacked" for _, _, how in program.mode.marks):
            raise Illegal(f"{form.name} passes a size as a plain int, which a dim marked unbacked "
                                "cannot be")
        self.exact.admit(stmt, form, t.root, {a for a in stmt.args if dtypes_.is_exact(t.dtypes[a])})
        storage.check_writes(stmt, form, t.root, t.prints, program.sym_min)
        self.swaps.check(stmt, form, t.root, self.inputs)
        if (target := layouts.written_expanded(stmt, form, t.root, program.mode)) is not None:
            raise Illegal(f"written operand {target} is in an expanded input's storage (stride 0)")
        if (why := self.late.refused(stmt, form, t.root, self.inputs)) is not None:
            raise Illegal(why)
        storage.check_dense_root(stmt, form, t.root, t.dims, t.dense, t.prints)
        _check_sites(stmt, form, self.calls)
        if form.once and any(s.form == stmt.form for s in program.body[:n]):
            raise Illegal(f"{form.name} is called once at most")
        size = stmt.data_size
        if size is not None:
            if not isinstance(size, str) or not sizes.is_unbacked(size) or size in self.unbacked:
                raise Illegal(f"a size from data needs a fresh name, got {size!r}")
            self.unbacked.add(size)
        if stmt.no_grad and self.grad is None:
            raise Illegal("no_grad outside a program that takes gradients")
        out_dims = form.infer([t.dims[a] for a in stmt.args], stmt.attrs, program.sym_min)
        if self.grad is not None:
            self.grad.admit(stmt, form, t.root, self.inputs)
        return out_dims

    def _record(self, n: int, stmt: Stmt, form, out_dims: Dims | None) -> None:
        """Enter ``stmt``'s result (its dims, storage root, dtype and footprint) and its
        swaps."""
        t = self.typing
        if (out_dims is None) != (stmt.out is None):
            raise InvalidProgram(f"statement {n} ({stmt.form}): result/no-result mismatch")
        if stmt.out is not None:
            if stmt.out in t.dims:
                raise InvalidProgram(f"statement {n}: value {stmt.out} defined twice")
            t.dims[stmt.out] = out_dims
            t.root[stmt.out] = t.root[stmt.args[0]] if form.aliases_operand else stmt.out
            t.dtypes[stmt.out] = result_dtype(form, stmt, t.dtypes)
            t.prints[stmt.out] = storage.result_footprint(form, t.prints[stmt.args[0]] if stmt.args else None,
                                                          stmt.attrs, out_dims)
            if form.dense_result:
                t.dense.add(stmt.out)
        self.late.record(stmt, form, t.root, self.inputs)
        self.swaps.record(stmt, form, t.root)


def result_dtype(form, stmt: Stmt, dtypes: dict[str, str | None]) -> str | None:
    """The dtype of ``stmt``'s result: the one its form gives, else its operand's where
    the result is that operand's storage (a view), else the program's own (None)."""
    if form.result_dtype is None and form.aliases_operand:
        return dtypes[stmt.args[0]]
    return form.dtype_of_result(stmt.attrs)


def check_dtypes(stmt: Stmt, form, dtypes: dict[str, str | None], mode: Mode) -> None:
    """Every operand has the dtype the form takes there; a program that takes
    gradients carries no tensor of a fixed dtype.  Raises ``form_record.Illegal``."""
    for k, a in enumerate(stmt.args):
        want = form.operand_dtype(k)
        if dtypes[a] != want:
            raise Illegal(f"operand {a} is {dtypes[a] or 'of the program dtype'}; {form.name} takes "
                                f"{want or 'the program dtype'} there")
    if stmt.args and (dtype := dtypes[stmt.args[0]] or mode.dtype) in dtypes_.eager_refuses(form.name, stmt.attrs):
        raise Illegal(f"eager's kernel refuses {form.name} with {stmt.attrs} in {dtype}")
    if mode.grad and form.fixes_dtypes:
        raise Illegal(f"{form.name} takes or gives a fixed dtype: a program that takes gradients "
                            "carries floating tensors only")


def _check_sites(stmt: Stmt, form, calls: dict[int, Stmt]) -> None:
    """Each call site is new, or the whole statement repeats the one that has it."""
    if not form.is_custom:
        if stmt.sites:
            raise Illegal(f"{form.name} is not a call and has no site")
        return
    wanted = form.sites
    if len(stmt.sites) != wanted or not all(isinstance(x, int) for x in stmt.sites):
        raise Illegal(f"custom call needs {wanted} int site(s), got {stmt.sites!r}")
    if len(set(stmt.sites)) != wanted:
        raise Illegal("the branches of a call need different sites")
    earlier = {calls[x] for x in stmt.sites if x in calls}
    if earlier:
        first = next(iter(earlier))
        if len(earlier) > 1 or (first.form, first.args, first.attrs) != (stmt.form, stmt.args, stmt.attrs):
            raise Illegal(f"site {stmt.sites} repeats, but not as an identical call")
    for x in stmt.sites:
        calls.setdefault(x, stmt)


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
