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
  one whole graph), modules with state and programs that take gradients (export traces
  the forward: a backward through ``.module()`` differentiates the traced ops, not an
  ``autograd.Function``'s own backward) are not drawn for it.

A stage asks for a target by name (:func:`get`); adding one is a class here and a
line in :data:`TARGETS`, and touches no stage below.
"""

from __future__ import annotations

from typing import Any, Protocol

import torch

from fuzzer.judge import observe
from fuzzer.judge.exporting import EXPORT_DECLINES, Exported, export_dynamic_shapes, run_exported
from fuzzer.judge.observe import Run
from fuzzer.program import codegen, custom_ops, features
from fuzzer.program.ir import Case

COMPILE, EXPORT, AOTI = "compile", "export", "aoti"
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


class ExportTarget:
    """``torch.export.export``, run as its ``.module()`` (see the module's docstring)."""

    name = EXPORT
    unsupported: tuple[str, ...] = (features.GRAPH_BREAK, features.MODULE_STATE, features.MODULE_CARRY,
                                    features.AUTOGRAD, features.AUTOGRAD_FUNCTION)
    declines = EXPORT_DECLINES
    judges_dce = False

    def build(self, case: Case, backend: str = "inductor", dynamic: bool = True):
        fn, step = codegen.build_with_step(case.program)
        exported = Exported(fn, export_dynamic_shapes([inp.dims for inp in case.program.inputs]), self.name)
        if step is None:
            return exported
        driven = codegen.driven(step, exported)
        driven.exported = exported
        return driven

    def run(self, fn, inputs: list) -> Run:
        return run_exported(fn, getattr(fn, "exported", fn), inputs, custom_ops.LIB.TRACE)


class AotiTarget(ExportTarget):
    """AOTInductor: the program exported as for ``export``, compiled once into a package
    (``torch._inductor.aoti_compile_and_package``, the C++ toolchain Inductor uses on the
    CPU) and loaded (``aoti_load_package``); every binding runs the loaded package, after
    the exported module's guard check.  It refuses what export refuses; what AOTInductor
    raises compiling the package is a ``compile-error``."""

    name = AOTI


TARGETS: dict[str, Target] = {t.name: t for t in (CompileTarget(), ExportTarget(), AotiTarget())}


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
