"""A program run through ``torch.export``, the same way in the package and in every
standalone repro script.

Depends on torch, the standard library and ``observe`` only: ``fuzzer.render.repro``
pastes this module's text into the script of an entry found through the ``export``
target (``fuzzer.judge.targets``), so the script exports and runs exactly as the
fuzzer did.

The program is exported (not strict) on its first call's inputs, every dim of an input
that is a symbol (``s0``) given as ``Dim.DYNAMIC``, and lowered once (:data:`LOWERINGS`):
every call runs the exported program's ``.module()`` (``export``) or the AOTInductor
package compiled from it and loaded (``aoti``); what exporting or lowering raised is
raised again on every later call, and recorded at the compile stage under its own type
(:func:`run_exported`).
"""

from __future__ import annotations

import os
import re
import tempfile

import torch

from fuzzer.judge.observe import COMPILE, RUNTIME, Coverage, Failure, Run, run_once

#: what ``torch.export`` documents it may decline, as ``(type, stage, message prefix)``
#: (``contract.Asks.declines``): a constraint on a dynamic dim it cannot keep
#: (``UserError``, ``ConstraintViolationError``), control flow or a guard on a size from
#: data (``GuardOnDataDependentSymNode``), what it cannot trace (``Unsupported``); and,
#: when the exported program is called, a binding its guard check rejects (its shapes
#: outside those export narrowed its inputs to: :class:`OutsideGuards`, or the check's
#: own ``AssertionError: Guard failed`` where this torch's module has no separate check)
EXPORT_DECLINES = frozenset({
    ("UserError", COMPILE, ""),
    ("ConstraintViolationError", COMPILE, ""),
    ("GuardOnDataDependentSymNode", COMPILE, ""),
    ("Unsupported", COMPILE, ""),
    ("OutsideGuards", RUNTIME, ""),
    ("AssertionError", RUNTIME, "Guard failed:"),
})

_SYMBOL = re.compile(r"s\d+")


def export_dynamic_shapes(input_dims) -> tuple:
    """The ``dynamic_shapes`` of inputs of these dims: ``Dim.DYNAMIC`` on every dim that
    is a symbol, None for an input with none."""
    return tuple({k: torch.export.Dim.DYNAMIC for k, d in enumerate(dims) if _SYMBOL.fullmatch(str(d))} or None
                 for dims in input_dims)


class ExportFailed(Exception):
    """Carries what ``torch.export.export`` raised out of a run."""

    def __init__(self, error: BaseException) -> None:
        super().__init__(str(error))
        self.error = error


class OutsideGuards(Exception):
    """The exported module's guard check rejected a call's inputs: whatever it raised
    (``AssertionError: Guard failed``, or an error evaluating a guard on a size the
    exported range excludes, such as a division by a size of 0), named in the message."""


def aoti_package(program, module=None):
    """The exported program compiled by AOTInductor into a package, and loaded."""
    with tempfile.TemporaryDirectory(prefix="dcefuzz-aoti-") as folder:
        path = torch._inductor.aoti_compile_and_package(program, package_path=os.path.join(folder, "program.pt2"))
        return torch._inductor.aoti_load_package(path)


#: how an exported program (and its ``.module()``) is made into what every call runs, by target
LOWERINGS = {"export": lambda program, module: module, "aoti": aoti_package}


class Exported:
    """``fn`` exported on its first call's inputs, lowered as ``target`` lowers it
    (:data:`LOWERINGS`), and run so on every call, after the exported module's guard check."""

    def __init__(self, fn, dynamic_shapes, target: str = "export") -> None:
        self.fn, self.dynamic_shapes, self.lower = fn, dynamic_shapes, LOWERINGS[target]
        self.module = None
        self.guards = None
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
                program = torch.export.export(Program(), tuple(inputs), dynamic_shapes=(self.dynamic_shapes,))
                module = program.module()
                self.guards = getattr(module, "_guards_fn", None)  # the check ``.module()`` runs first
                self.module = self.lower(program, module)
            except Exception as exc:  # noqa: BLE001 - the program's failure, recorded
                self.error = exc
            self.exported_now = self.module is not None
        if self.error is not None:
            raise ExportFailed(self.error)
        guards = self.guards
        if guards is not None:
            try:
                guards(*inputs)
            except Exception as exc:  # noqa: BLE001 - any failure of the check rejects the inputs
                raise OutsideGuards(f"{type(exc).__name__}: {exc}") from exc
        return self.module(*inputs)


def run_exported(fn, exported: Exported, inputs: list, trace: dict) -> Run:
    """One run of ``fn`` (``exported``, or a step around it), recorded: a failure of the
    export itself at the compile stage under its own type, one graph for the run that
    exported."""
    run = run_once(fn, inputs, trace)
    failure = run.failure
    if failure is not None and failure.type == ExportFailed.__name__ and exported.error is not None:
        error = exported.error
        run.failure = Failure(type(error).__name__, str(error), COMPILE, failure.traceback, failure.site,
                              failure.site_message)
    graphs = 1 if exported.exported_now else 0
    run.coverage = Coverage(frames=graphs, graphs=graphs)
    return run
