"""A user's op library: the module that registers the ops, found and loaded.

``--ops`` names a module (``mypkg.ops``) or a file (``path/to/ops.py``).  Either is
recorded as a :class:`ModuleRef`, the module's dotted name and the folder it is
imported from, so every process that meets a program calling the ops (a worker, a
shrink child, a replay, a repro script) imports the same file by its path.

The module's ops are those it registers: every ``CustomOpDef`` and every ``Library``
it holds, and every op that appears while it is first imported (which also finds
ops defined through ``torch.library.define`` or in a submodule).  Each op's shapes
come from ``DCEFUZZ_SIGNATURES`` (qualified name to a gufunc signature) or
:func:`fuzzer.user.declare`, and its scalars' values from ``DCEFUZZ_SCALARS``
(qualified name to {argument: values}).
"""

from __future__ import annotations

import dataclasses
import importlib
import sys
from dataclasses import dataclass, field
from pathlib import Path

import fnmatch

from fuzzer.program import forms
from fuzzer.user import declared, gufunc, hints, tracing, transforms
from fuzzer.user.declared import UserOp
from fuzzer.user.form import forms_of

SIGNATURES = "DCEFUZZ_SIGNATURES"
SCALARS = "DCEFUZZ_SCALARS"
#: namespaces never taken for a user's (torch's own and dcefuzz's)
RESERVED = frozenset({"aten", "prim", "prims", "_c10d_functional", "c10d", "profiler", "dcefuzz",
                      "higher_order", "inductor", "quantized", "_quantized", "_test"})

#: what ``declare`` has been told, by qualified name
DECLARED: dict[str, dict] = {}


class LoadError(ValueError):
    """A module that cannot be imported, or registers no op dcefuzz can call."""


def declare(signature: str | None = None, scalars: dict | None = None):
    """Decorate a custom op (above ``@torch.library.custom_op``) with its gufunc
    signature and its scalars' values, instead of the module's dicts."""
    def mark(opdef):
        qualname = getattr(opdef, "_qualname", None) or getattr(opdef, "_name", None)
        if not isinstance(qualname, str) or "::" not in qualname:
            raise TypeError("declare() decorates what torch.library.custom_op returns")
        DECLARED[qualname] = {"signature": signature, "scalars": scalars or {}}
        return opdef
    return mark


def _recorded(folder: Path) -> str:
    """A folder as programs record it: relative to the working directory when inside
    it (a project's corpus then names ``examples/ops`` on any checkout), else absolute."""
    try:
        return str(folder.relative_to(Path.cwd()))
    except ValueError:
        return str(folder)


@dataclass(frozen=True)
class ModuleRef:
    """A module by dotted name and the folder its top package is imported from
    (relative to the working directory, or absolute)."""

    name: str
    root: str
    #: a hints file for a library the user does not own (``fuzzer.user.hints``; "": none),
    #: recorded like ``root``
    hints: str = ""

    @classmethod
    def of(cls, spec: str) -> ModuleRef:
        """``spec`` as given to ``--ops``: a ``.py`` file, a package folder, a dotted
        module name importable from here, or a hints file naming one."""
        if hints.is_hints(spec):
            try:
                given = hints.load(spec)
            except hints.HintsError as exc:
                raise LoadError(f"--ops {spec}: {exc}") from None
            target = given.library
            beside = Path(spec).resolve().parent / target
            if target.endswith(".py") or beside.is_dir():
                target = str(beside)  # a file or folder named relative to the hints file
            return dataclasses.replace(cls.of(target), hints=_recorded(Path(spec).resolve()))
        path = Path(spec)
        if spec.endswith(".py") or path.is_dir():
            if not path.exists():
                raise LoadError(f"--ops {spec}: no such file")
            path = path.resolve()
            parts = [path.stem] if path.suffix == ".py" else [path.name]
            folder = path.parent
            while (folder / "__init__.py").exists():  # a module inside a package
                parts.insert(0, folder.name)
                folder = folder.parent
            if parts[-1] == "__init__":
                parts.pop()
            return cls(".".join(parts), _recorded(folder))
        try:
            module = importlib.import_module(spec)
        except Exception as exc:
            raise LoadError(f"--ops {spec}: cannot import it: {type(exc).__name__}: {exc}") from exc
        return cls.of_module(module)

    @classmethod
    def of_module(cls, module) -> ModuleRef:
        file = getattr(module, "__file__", None)
        if file is None:
            raise LoadError(f"module {module.__name__} has no file to import it from")
        folder = Path(file).resolve().parent
        depth = module.__name__.count(".") + (Path(file).name == "__init__.py")
        for _ in range(depth):
            folder = folder.parent
        return cls(module.__name__, _recorded(folder))

    @property
    def imported(self) -> tuple:
        """As a program records it (``Program.imports``)."""
        return (self.name, self.root, self.hints) if self.hints else (self.name, self.root)

    def import_(self):
        """Import the module from its folder (once per process)."""
        folder = str(Path(self.root).resolve())
        if folder not in sys.path:
            sys.path.insert(0, folder)
        return importlib.import_module(self.name)


@dataclass
class Library:
    ref: ModuleRef
    ops: list[UserOp] = field(default_factory=list)
    #: (qualified name, why dcefuzz cannot call it)
    skipped: list[tuple[str, str]] = field(default_factory=list)

    @property
    def qualnames(self) -> list[str]:
        return [op.qualname for op in self.ops]


_loaded: dict[ModuleRef, Library] = {}


def load(ref) -> Library:
    """Import a user's module (a ``ModuleRef``, an ``--ops`` string or the module
    itself), read its ops and register their forms (once per process)."""
    if isinstance(ref, str):
        ref = ModuleRef.of(ref)
    elif not isinstance(ref, ModuleRef):
        ref = ModuleRef.of_module(ref)
    if ref in _loaded:
        return _loaded[ref]
    import torch

    before = set(torch._C._dispatch_get_all_op_names())
    fresh = ref.name not in sys.modules
    try:
        module = ref.import_()
    except Exception as exc:
        raise LoadError(f"{ref.name} (from {ref.root}): cannot import it: {type(exc).__name__}: {exc}") from exc
    said = _declarations(module, ref)
    library = _read(ref, _found(module, said, fresh, before), said)
    effectful = [op.qualname for op in library.ops if op.effect]
    if effectful and not tracing.supported():
        raise LoadError(f"{ref.name}: this torch cannot log the calls of its ORDERED ops {effectful} "
                        "(it lacks torch.library.get_kernel)")
    tracing.trace_effects(effectful)
    for op in library.ops:
        for form in forms_of(op) + transforms.forms_of(op):
            forms.add(form)
    _loaded[ref] = library
    return library


@dataclass(frozen=True)
class _Said:
    """What a module and its hints file say of its ops beyond their schemas: signatures,
    scalars' values and dtypes, by qualified name, and the hints themselves (None: no
    hints file)."""

    signatures: dict
    scalars: dict
    dtypes: dict
    hints: hints.Hints | None


def _declarations(module, ref: ModuleRef) -> _Said:
    """What ``module`` declares (``SIGNATURES``, ``SCALARS``), with its hints file's
    (``ref.hints``) over it."""
    signatures = dict(getattr(module, SIGNATURES, {}) or {})
    scalars = dict(getattr(module, SCALARS, {}) or {})
    dtypes: dict = {}
    given_hints = None
    if ref.hints:
        try:
            given_hints = hints.load(ref.hints)
        except hints.HintsError as exc:
            raise LoadError(str(exc)) from None
        for qualname, h in given_hints.ops.items():
            if h.signature is not None:
                signatures[qualname] = h.signature
            if h.scalars:
                scalars[qualname] = h.scalars
            if h.dtypes:
                dtypes[qualname] = h.dtypes
    return _Said(signatures, scalars, dtypes, given_hints)


def _found(module, said: _Said, fresh: bool, before: set[str]) -> set[str]:
    """The qualified names of the ops ``module`` brings: those it holds and declares, and
    those its hints include, or, imported afresh (``fresh``), those that appeared since
    ``before`` in its namespaces."""
    import torch

    found = set(_held_ops(module)) | set(said.signatures) | set(said.scalars)
    if said.hints is not None and said.hints.include:
        # a library not owned: the ops the hints include, wherever they were registered
        found |= {n for n in torch._C._dispatch_get_all_op_names()
                  if any(fnmatch.fnmatchcase(n, g) for g in said.hints.include)}
    elif fresh:
        # ops that appeared while it was imported, in its namespaces (not those of
        # libraries it imports), or all of them when it holds none
        namespaces = {n.split("::")[0] for n in found}
        found |= {n for n in set(torch._C._dispatch_get_all_op_names()) - before
                  if not namespaces or n.split("::")[0] in namespaces}
    return found


def _read(ref: ModuleRef, found: set[str], said: _Said) -> Library:
    """The library of the ops ``found`` that dcefuzz can call (the others skipped, with
    why); ``LoadError`` where none is."""
    library = Library(ref)
    for qualname in sorted(found):
        if qualname.split("::")[0] in RESERVED:
            continue
        if said.hints is not None and not said.hints.wants(qualname):
            continue
        given = DECLARED.get(qualname, {})
        try:
            op = declared.read(qualname, said.signatures.get(qualname, given.get("signature")),
                               said.scalars.get(qualname, given.get("scalars")), said.dtypes.get(qualname))
        except (declared.Unsupported, gufunc.SignatureError) as exc:
            library.skipped.append((qualname, str(exc)))
            continue
        library.ops.append(op)
    if not library.ops:
        why = "; ".join(reason for _, reason in library.skipped)
        raise LoadError(f"{ref.name}{' with ' + ref.hints if ref.hints else ''} registers no custom op dcefuzz "
                        "can call" + (f": {why}" if why else ""))
    return library


def _held_ops(module) -> list[str]:
    """Ops held by the module's globals: what ``custom_op`` returned, the ``Library``
    objects it defined ops in."""
    import torch
    from torch._library.custom_ops import CustomOpDef

    names = []
    for value in vars(module).values():
        if isinstance(value, CustomOpDef):
            names.append(value._qualname)
        elif isinstance(value, torch.library.Library):
            names += sorted(getattr(value, "_op_defs", ()))
    return names


def ensure(refs) -> list[Library]:
    """Load every module a program imports (``Program.imports``: (module, folder) pairs)."""
    return [load(ref if isinstance(ref, ModuleRef) else ModuleRef(*ref)) for ref in refs]


def adjust(audited: UserOp) -> None:
    """Programs call the loaded op of the same name as ``audited`` says (its declaration
    check dropped scalar values it fails on, or a backward that fails): the op and its
    statement form are replaced, in this process."""
    for library in _loaded.values():
        for k, candidate in enumerate(library.ops):
            if candidate.qualname == audited.qualname:
                library.ops[k] = audited
                for form in forms_of(audited) + transforms.forms_of(audited):
                    forms.add(form)
                return
    raise KeyError(f"{audited.qualname} is not an op of a loaded module")


def adjustment(audited: UserOp) -> tuple:
    """What ``adjust`` changes, as data a worker process applies (``apply``)."""
    return (audited.qualname, tuple((a.name, a.values) for a in audited.scalars), audited.backward,
            audited.takes, audited.result_dtypes, audited.nonempty)


def apply(adjustments) -> None:
    """Apply ``adjustment`` records to the loaded ops (a worker, before its first program)."""
    for qualname, values, backward, *rest in adjustments:
        loaded = op(qualname)
        kept = dict(values)
        arguments = tuple(dataclasses.replace(a, values=kept[a.name]) if a.name in kept else a
                          for a in loaded.arguments)
        takes = tuple(rest[0]) if rest and rest[0] is not None else None
        result_dtypes = tuple(rest[1]) if len(rest) > 1 and rest[1] is not None else None
        nonempty = bool(rest[2]) if len(rest) > 2 else False
        adjust(dataclasses.replace(loaded, arguments=arguments, backward=backward, takes=takes,
                                   result_dtypes=result_dtypes, nonempty=nonempty))


def op(qualname: str) -> UserOp:
    """A loaded user op by its qualified name."""
    for library in _loaded.values():
        for candidate in library.ops:
            if candidate.qualname == qualname:
                return candidate
    raise KeyError(f"{qualname} is not an op of a loaded module")

