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
* ``export``: ``torch.export.export`` of the program (not strict), every input dim
  that holds a symbol given as ``Dim.AUTO``, on the first binding's inputs; each binding
  runs the exported program's ``.module()``.  Export may narrow the shapes the exported
  program accepts (its guards): a binding outside them is exported anew on its own
  inputs (``exporting.Exported``), and refused only past the exports a target allows;
  what export declines to trace (a constraint it cannot meet, a guard on data) is refused.  Export promises no dead-code elimination of a custom op's
  calls, so ``missed-dce`` is not judged.  Programs with graph breaks (export traces
  one whole graph), modules with state and programs that take gradients (export traces
  the forward: a backward through ``.module()`` differentiates the traced ops, not an
  ``autograd.Function``'s own backward) are not drawn for it, nor programs with opaque
  objects (the step hands them to ``torch.compile``'s program; an export of them is
  another pipeline, not run here).
* ``func-grad``: ``compile`` of programs whose gradients ``torch.func.grad`` takes
  (feature ``func-grad``, ``codegen.program_grad``), eagerly and compiled alike: see
  :class:`FuncGradTarget`.

A stage asks for a target by name (:func:`get`); adding one is a class here and a
line in :data:`TARGETS`, and touches no stage below.
"""

from __future__ import annotations

from typing import Any, Protocol

import torch

from fuzzer.judge import compiled_autograd, observe
from fuzzer.judge.exporting import AOTI_DECLINES, EXPORT_DECLINES, Exported, export_dynamic_shapes, run_exported
from fuzzer.judge.observe import Run
from fuzzer.program import codegen, custom_ops, features
from fuzzer.program.ir import Case

COMPILE, EXPORT, AOTI = "compile", "export", "aoti"
COMPILED_AUTOGRAD, REDUCE_OVERHEAD, FUNC_GRAD = "compiled-autograd", "reduce-overhead", "func-grad"
#: the target of a campaign, an entry or a replay that names none
DEFAULT = COMPILE


class Target(Protocol):
    """One pipeline a program is compiled and run through."""

    #: the name ``--target`` takes and an entry records
    name: str
    #: what it runs, in words (a repro script's header)
    api: str
    #: the features (``fuzzer.program.features``) it cannot run: never drawn for it
    unsupported: tuple[str, ...]
    #: the features every program drawn for it has (weight 1): what it exists to run
    required: tuple[str, ...]
    #: what it documents as unsupported, as ``(exception type, stage, message prefix)``
    #: triples: a compiled run that failed so is untested, never a finding
    declines: frozenset
    #: whether dead calls its compiled code kept are judged (``missed-dce``)
    judges_dce: bool

    def build(self, case: Case, backend: str, dynamic: bool = True) -> Any:
        """The function every binding's run calls: made once, run over the bindings in order."""

    def run(self, fn, inputs: list) -> Run:
        """One binding's run of ``fn`` (from :meth:`build`), recorded."""

    def unavailable(self, device: str) -> str | None:
        """Why it cannot run on ``device`` with this torch (None: it can)."""


class CompileTarget:
    """``torch.compile`` with the program's dynamic mode (``dynamic=False``: static
    shapes, one compile per binding, as triage asks)."""

    name = COMPILE
    api = "torch.compile"
    unsupported: tuple[str, ...] = ()
    required: tuple[str, ...] = ()
    declines: frozenset = frozenset()
    judges_dce = True
    #: ``torch.compile``'s ``mode`` (None: its default)
    mode: str | None = None

    def build(self, case: Case, backend: str = "inductor", dynamic: bool = True):
        fn, step = codegen.build_with_step(case.program)
        dyn = codegen.dynamic_arg(case.program) if dynamic else False
        how = {} if self.mode is None else {"mode": self.mode}
        return codegen.driven(step, torch.compile(fn, dynamic=dyn, backend=backend, **how))

    def run(self, fn, inputs: list) -> Run:
        return observe.run_once(fn, inputs, custom_ops.LIB.TRACE, compiled=True)

    def unavailable(self, device: str) -> str | None:
        return None


class ExportTarget:
    """``torch.export.export``, run as its ``.module()`` (see the module's docstring)."""

    name = EXPORT
    api = "torch.export.export, run as its .module()"
    unsupported: tuple[str, ...] = (features.GRAPH_BREAK, features.MODULE_STATE, features.MODULE_CARRY,
                                    features.AUTOGRAD, features.AUTOGRAD_FUNCTION, features.FUNCTION_SHAPES,
                                    features.OPAQUE_OBJECTS)
    required: tuple[str, ...] = ()
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

    def unavailable(self, device: str) -> str | None:
        return None


class AotiTarget(ExportTarget):
    """AOTInductor: the program exported as for ``export``, compiled once into a package
    (``torch._inductor.aoti_compile_and_package``, the C++ toolchain Inductor uses on the
    CPU) and loaded (``aoti_load_package``); every binding runs the loaded package, after
    the exported module's guard check.  It refuses what export refuses, and a call whose
    inputs are not laid out as the package was compiled for (``AOTI_DECLINES``); what
    AOTInductor raises compiling the package is a ``compile-error``."""

    name = AOTI
    api = "torch.export.export, then torch._inductor.aoti_compile_and_package"
    declines = AOTI_DECLINES


class CompiledAutogradTarget(CompileTarget):
    """``torch.compile`` as ``compile``, every run (forward, loss and ``backward()``)
    under compiled autograd with the same backend (``fuzzer.judge.compiled_autograd``): the
    backward the autograd engine would run is traced and compiled as one graph.  Its
    programs take gradients (``required``); what compiled autograd documents it does
    not support is refused; dead calls are not judged (the backward graph it compiles
    calls what the program's autograd formulas call, not the program's own calls)."""

    name = COMPILED_AUTOGRAD
    api = "torch.compile, the backward under torch._dynamo.compiled_autograd"
    required: tuple[str, ...] = (features.AUTOGRAD,)
    declines = compiled_autograd.DECLINES
    judges_dce = False

    def build(self, case: Case, backend: str = "inductor", dynamic: bool = True):
        return compiled_autograd.under_compiled_autograd(super().build(case, backend, dynamic), backend)

    def unavailable(self, device: str) -> str | None:
        return compiled_autograd.unavailable()


class FuncGradTarget(CompileTarget):
    """``torch.compile(torch.func.grad(...))``, as ``torch.func``'s users compose the two:
    ``compile`` of programs that all have the feature ``func-grad`` (``required``), whose
    function is the program and its loss (``codegen.loss_of``, the loss ``backward()``
    takes elsewhere) under ``torch.func.grad`` of every input (``codegen.program_grad``);
    eager runs, check runs and the float64 reference call it too, so a divergence is the
    composition's, not functorch's.  Dynamo traces the transform into the graph; ``grad``
    of a compiled function compiles nothing (Dynamo leaves the frame to eager), so it is
    not what runs.  Not drawn for it: what ``func-grad`` excludes
    (``features.FUNC_GRAD_EXCLUDES``: graph breaks, higher-order ops, the families'
    ``autograd.Function``s, modules).  A custom op may read no value that requires grad
    (``func_grad.FuncGradRules``): torch raises eagerly for every such call (pytorch/pytorch#168393)."""

    name = FUNC_GRAD
    api = "torch.compile(torch.func.grad(program and its loss))"
    unsupported: tuple[str, ...] = features.FUNC_GRAD_EXCLUDES
    required: tuple[str, ...] = (features.AUTOGRAD, features.FUNC_GRAD)

    def unavailable(self, device: str) -> str | None:
        import torch.func

        return None if callable(getattr(torch.func, "grad", None)) else "this torch has no torch.func.grad"


class ReduceOverheadTarget(CompileTarget):
    """``torch.compile(mode="reduce-overhead")``: Inductor's code replayed through CUDA
    graphs (cudagraph trees), where a buffer the graph wrote is replayed, not
    recomputed.  CUDA only: a campaign on another device is refused before it starts."""

    name = REDUCE_OVERHEAD
    api = "torch.compile(mode='reduce-overhead')"
    mode = "reduce-overhead"

    def unavailable(self, device: str) -> str | None:
        if not device.startswith("cuda"):
            return f"mode='reduce-overhead' captures CUDA graphs, and the device is {device}, not CUDA"
        return None


class ExportPiece(ExportTarget):
    """A piece of export's pipeline that triage runs a target's own finding through
    (``fuzzer.triage.within``), never a campaign's target: ``export-graph``, the
    exported graph called without ``.module()`` (``exporting.GraphRun``), and the
    program after ``run_decompositions()``, its graph so (``export-decomposed-graph``)
    and as its ``.module()`` (``export-decomposed``).  Each refuses what export refuses."""

    def __init__(self, name: str, api: str) -> None:
        self.name, self.api = name, api


TARGETS: dict[str, Target] = {t.name: t for t in (CompileTarget(), ExportTarget(), AotiTarget(),
                                                  CompiledAutogradTarget(), ReduceOverheadTarget(),
                                                  FuncGradTarget())}
#: the pieces of a target's pipeline that only triage runs (:class:`ExportPiece`)
PIECES: dict[str, Target] = {t.name: t for t in (
    ExportPiece("export-graph", "torch.export.export, its graph called without .module()"),
    ExportPiece("export-decomposed-graph", "torch.export.export, then run_decompositions(), its graph called "
                "without .module()"),
    ExportPiece("export-decomposed", "torch.export.export, then run_decompositions(), run as its .module()"))}


class UnknownTarget(LookupError):
    """No target has that name."""


def get(name: str | None) -> Target:
    """The target called ``name`` (None: the default), or the piece of one that triage
    runs (:data:`PIECES`)."""
    try:
        return TARGETS[name or DEFAULT] if name not in PIECES else PIECES[name]
    except KeyError:
        raise UnknownTarget(f"no target {name!r}; known: {', '.join(sorted(TARGETS))}") from None


def names() -> list[str]:
    return sorted(TARGETS)


def spread(names) -> str:
    """Several targets as a campaign records them: their names joined by commas, each
    once, in the order given (one name: that target).  Raises :class:`UnknownTarget`."""
    chosen = list(dict.fromkeys(n.strip() for n in names if n.strip()))
    for name in chosen or [DEFAULT]:
        if name not in TARGETS:
            raise UnknownTarget(f"no target {name!r}; known: {', '.join(sorted(TARGETS))}")
    return ",".join(chosen or [DEFAULT])


def of_program(spread_names: str, program_seed: int) -> str:
    """The target program ``program_seed`` of a campaign runs through: its one target,
    or, for several (:func:`spread`), one picked by the program's seed (the same
    program always through the same target, the targets in even shares)."""
    names = (spread_names or DEFAULT).split(",")
    return names[program_seed % len(names)]


def drawn_for(name: str, table: dict[str, float]) -> dict[str, float]:
    """The feature table ``table`` without the features target ``name`` cannot run, and
    with those it requires always on (weight 1)."""
    target = get(name)
    return {**{f: w for f, w in table.items() if f not in target.unsupported}, **{f: 1.0 for f in target.required}}
