"""Targets: the pipelines a program is compiled and run through, each behind one interface.

A trial (``fuzzer.judge.trial``) runs a program eagerly and through one target, and
the contract judges the target's runs against eager whichever it is.  A target says
how a program is made into the function every binding's run calls (once a program:
all bindings run through it, in order), how one of those runs is recorded, which
features its programs never have (they are not drawn for it), what it documents as
unsupported (``declines``: the contract's refusals, ``contract.Asks.declines``), and
whether its graphs can be read for dead calls (``missed-dce``).

* ``compile``: ``torch.compile`` with the program's dynamic mode and the backend, run
  through the program's ``step`` (its marks, gradients, settings): what a trial always was.
* ``export``: ``torch.export.export`` of the program (not strict), every symbol of its
  input dims given as ``Dim.DYNAMIC``, on the first binding's inputs; each binding runs
  the exported program's ``.module()``.  Export may narrow the shapes the exported
  program accepts (its guards, checked when ``.module()`` is called): a binding outside
  them is refused, as is what export declines to trace (a constraint it cannot meet,
  control flow on data).  Export promises no dead-code elimination of a custom op's
  calls, so ``missed-dce`` is not judged.  Programs with graph breaks (export traces
  one whole graph) and modules with state are not drawn for it.

A stage asks for a target by name (:func:`get`); adding one is a class here and a
line in :data:`TARGETS`, and touches no stage below.
"""

from __future__ import annotations

from typing import Any, Protocol

import torch

from fuzzer.judge import observe
from fuzzer.judge.observe import COMPILE as COMPILE_STAGE
from fuzzer.judge.observe import RUNTIME, Coverage, Run
from fuzzer.program import codegen, custom_ops, features, sizes
from fuzzer.program.ir import Case

COMPILE, EXPORT = "compile", "export"
#: the target of a campaign, an entry or a replay that names none
DEFAULT = COMPILE


class Target(Protocol):
    """One pipeline a program is compiled and run through."""

    #: the name ``--target`` takes and an entry records
    name: str
    #: the features (``fuzzer.program.features``) it cannot run: never drawn for it
    unsupported: tuple[str, ...]
    #: what it documents as unsupported, as ``(exception type, stage, message prefix)``
    #: triples: a compiled run that failed so is untested, never a finding
    declines: frozenset
    #: whether dead calls its compiled code kept are judged (``missed-dce``)
    judges_dce: bool

    def build(self, case: Case, backend: str, dynamic: bool = True) -> Any:
        """The function every binding's run calls: made once, run over the bindings in order."""

    def run(self, fn, inputs: list) -> Run:
        """One binding's run of ``fn`` (from :meth:`build`), recorded."""


class CompileTarget:
    """``torch.compile`` with the program's dynamic mode (``dynamic=False``: static
    shapes, one compile per binding, as triage asks)."""

    name = COMPILE
    unsupported: tuple[str, ...] = ()
    declines: frozenset = frozenset()
    judges_dce = True

    def build(self, case: Case, backend: str = "inductor", dynamic: bool = True):
        fn, step = codegen.build_with_step(case.program)
        mode = codegen.dynamic_arg(case.program) if dynamic else False
        return codegen.driven(step, torch.compile(fn, dynamic=mode, backend=backend))

    def run(self, fn, inputs: list) -> Run:
        return observe.run_once(fn, inputs, custom_ops.LIB.TRACE, compiled=True)


#: what ``torch.export`` documents it may decline: a constraint on a dynamic dim it
#: cannot keep (``UserError``, ``ConstraintViolationError``), control flow or a guard
#: on a size from data (``GuardOnDataDependentSymNode``), what it cannot trace
#: (``Unsupported``); and, when the exported program is called, a binding whose shapes
#: fail the guards export narrowed its inputs to (``AssertionError: Guard failed``)
EXPORT_DECLINES = frozenset({
    ("UserError", COMPILE_STAGE, ""),
    ("ConstraintViolationError", COMPILE_STAGE, ""),
    ("GuardOnDataDependentSymNode", COMPILE_STAGE, ""),
    ("Unsupported", COMPILE_STAGE, ""),
    ("AssertionError", RUNTIME, "Guard failed:"),
})


class _Exported:
    """A program exported on its first call's inputs, and run as ``.module()`` on every
    call; what export raised is raised again on every later call, as the program's."""

    def __init__(self, fn, dynamic_shapes) -> None:
        self.fn, self.dynamic_shapes = fn, dynamic_shapes
        self.module = None
        self.error: BaseException | None = None
        #: whether the last call exported (its graph counts once)
        self.exported_now = False

    def __call__(self, *inputs):
        self.exported_now = False
        if self.module is None and self.error is None:
            fn = self.fn

            class Program(torch.nn.Module):
                def forward(self, *args):
                    return fn(*args)

            try:
                self.module = torch.export.export(Program(), tuple(inputs),
                                                  dynamic_shapes=(self.dynamic_shapes,)).module()
            except Exception as exc:  # noqa: BLE001 - the program's failure, recorded
                self.error = exc
            self.exported_now = self.module is not None
        if self.error is not None:
            raise _ExportFailed(self.error)
        return self.module(*inputs)


class _ExportFailed(Exception):
    """Carries what ``torch.export.export`` raised out of a run, so it is recorded at
    the compile stage under its own type."""

    def __init__(self, error: BaseException) -> None:
        super().__init__(str(error))
        self.error = error


def export_dynamic_shapes(case: Case) -> tuple:
    """The ``dynamic_shapes`` of ``case``'s inputs: ``Dim.DYNAMIC`` on every dim that is
    a symbol, None for an input with none."""
    return tuple({k: torch.export.Dim.DYNAMIC for k, d in enumerate(inp.dims) if sizes.is_symbol(d)} or None
                 for inp in case.program.inputs)


class ExportTarget:
    """``torch.export.export``, run as its ``.module()`` (see the module's docstring)."""

    name = EXPORT
    unsupported: tuple[str, ...] = (features.GRAPH_BREAK, features.MODULE_STATE)
    declines = EXPORT_DECLINES
    judges_dce = False

    def build(self, case: Case, backend: str = "inductor", dynamic: bool = True):
        fn, step = codegen.build_with_step(case.program)
        return codegen.driven(step, _Exported(fn, export_dynamic_shapes(case)))

    def run(self, fn, inputs: list) -> Run:
        run = observe.run_once(fn, inputs, custom_ops.LIB.TRACE)
        exported = getattr(fn, "args", (fn,))[0]  # through the step: its partial's argument
        failure = run.failure
        if failure is not None and failure.type == _ExportFailed.__name__:
            error = exported.error
            run.failure = observe.Failure(type(error).__name__, str(error), COMPILE_STAGE, failure.traceback,
                                          failure.site, failure.site_message)
        graphs = 1 if exported.exported_now else 0
        run.coverage = Coverage(frames=graphs, graphs=graphs)
        return run


TARGETS: dict[str, Target] = {t.name: t for t in (CompileTarget(), ExportTarget())}


class UnknownTarget(LookupError):
    """No target has that name."""


def get(name: str | None) -> Target:
    """The target called ``name`` (None: the default)."""
    try:
        return TARGETS[name or DEFAULT]
    except KeyError:
        raise UnknownTarget(f"no target {name!r}; known: {', '.join(sorted(TARGETS))}") from None


def names() -> list[str]:
    return sorted(TARGETS)


def drawn_for(name: str, table: dict[str, float]) -> dict[str, float]:
    """The feature table ``table`` without the features target ``name`` cannot run."""
    return {f: w for f, w in table.items() if f not in get(name).unsupported}
