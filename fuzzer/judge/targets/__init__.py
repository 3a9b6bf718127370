"""Targets: the pipelines a program is compiled and run through, each behind one interface.

A trial (``fuzzer.judge.trial``) runs a program eagerly and through one target, and
the contract judges the target's runs against eager whichever it is.  A target
(:class:`Target`) says how a program is made into the function every binding's run
calls (once a program: all bindings run through it, in order), how one of those runs is
recorded, which features its programs never have (they are not drawn for it), what it
documents as unsupported (``declines``: the contract's refusals,
``contract.Asks.declines``), whether its graphs can be read for dead calls
(``missed-dce``), and everything else a stage above asks of it: whether it exports and
how its program is lowered (``lowering``, which its repro script runs too), whether its
runs go under compiled autograd, the pieces of its pipeline triage walks a finding over
and what each blames (``fuzzer.triage.within``), the area of an issue's title, how a
report says it and a brief writes it (``through``), and its ``--target`` help.

Each target is one module here (``compile``, ``export``, ``aoti``, ``compiled_autograd``,
``reduce_overhead``, ``func_grad``; a target's triage pieces beside it).  **To add one**:
write its module (a class with the fields of :class:`Target`, usually a subclass of
``CompileTarget`` or ``ExportTarget``; the module's ``TARGET`` and ``PIECES``) and add it
to :data:`MODULES` below; no stage names a target (docs/extending.md).
"""

from __future__ import annotations

from fuzzer.judge.targets import aoti, compile, compiled_autograd, export, func_grad, reduce_overhead
from fuzzer.judge.targets.aoti import AotiTarget
from fuzzer.judge.targets.compile import CompileTarget
from fuzzer.judge.targets.compiled_autograd import CompiledAutogradPiece, CompiledAutogradTarget
from fuzzer.judge.targets.export import ExportPiece, ExportTarget
from fuzzer.judge.targets.func_grad import FuncGradTarget
from fuzzer.judge.targets.reduce_overhead import ReduceOverheadTarget
from fuzzer.judge.targets.target import DEBUG_BACKENDS, DEFAULT, Target
from fuzzer.program import features

__all__ = ["AOTI", "COMPILE", "COMPILED_AUTOGRAD", "COMPILED_AUTOGRAD_PIECES", "DEBUG_BACKENDS", "DEFAULT", "EXPORT",
           "FUNC_GRAD", "PIECES", "REDUCE_OVERHEAD", "TARGETS", "AotiTarget", "CompileTarget",
           "CompiledAutogradPiece", "CompiledAutogradTarget", "ExportPiece", "ExportTarget", "FuncGradTarget",
           "ReduceOverheadTarget", "Target", "UnknownTarget", "drawn_for", "every", "get", "help_text", "names",
           "of_program", "spread"]

#: the targets' modules, one line a target, each with its ``TARGET`` and the ``PIECES`` of
#: its pipeline only triage runs: the order of ``--target``'s help and docs/targets.md
MODULES = (
    compile,
    export,
    aoti,
    compiled_autograd,
    reduce_overhead,
    func_grad,
)

#: every target, by name
TARGETS: dict[str, Target] = {module.TARGET.name: module.TARGET for module in MODULES}
#: the pieces of a target's pipeline that only triage runs (``ExportPiece``,
#: ``CompiledAutogradPiece``), by name
PIECES: dict[str, Target] = {piece.name: piece for module in MODULES for piece in module.PIECES}

COMPILE, EXPORT, AOTI = compile.NAME, export.NAME, aoti.NAME
COMPILED_AUTOGRAD, REDUCE_OVERHEAD, FUNC_GRAD = compiled_autograd.NAME, reduce_overhead.NAME, func_grad.NAME
#: compiled autograd's pieces, one a backend of the backward, in :data:`DEBUG_BACKENDS`' order
COMPILED_AUTOGRAD_PIECES: tuple[CompiledAutogradPiece, ...] = compiled_autograd.PIECES


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


def every() -> list[Target]:
    """Every target, then every piece of one."""
    return [*TARGETS.values(), *PIECES.values()]


def help_text() -> str:
    """Each target with what it runs, in :data:`TARGETS`' order: ``--target``'s help."""
    said = [f"{t.name} ({t.help})" for t in TARGETS.values()]
    return ", ".join(said[:-1]) + " or " + said[-1] if len(said) > 1 else said[0]


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
    """The feature table ``table`` without the features target ``name`` cannot run, nor
    any that implies one of them (``features.without``: ``func-grad`` implies
    ``autograd``), and with those it requires always on (weight 1)."""
    target = get(name)
    return {**features.without(table, target.unsupported), **{f: 1.0 for f in target.required}}
