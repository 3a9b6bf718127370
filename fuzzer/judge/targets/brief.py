"""How a target is said in an issue and written in its brief repro: a :class:`Through`
record, which every target carries (``Target.through``).

A finding of ``export`` is a bug of ``torch.export`` and its ``.module()``, one of
``compiled-autograd`` a bug of the backward compiled autograd traces: a report that
said "with ``torch.compile``" of them, or a brief that compiled the program with
``torch.compile`` alone, would describe a run that is not the one that failed, and
the brief would not fail.  So each target has the words of an issue's opening and the
code a brief runs it with: the compiled function (``call``) and the helper that call
needs (``helper``), both written as the full script's driver runs the target
(``fuzzer.render.driver``) but in a few lines a reader takes in at once.  The report and
the brief (``fuzzer.render``) read them off the target; this module holds the record and
the pieces of text targets share.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from fuzzer.judge import compiled_autograd
from fuzzer.program import codegen
from fuzzer.program.ir import Program

#: a size symbol in an input dim's text, as ``exporting.export_dynamic_shapes`` reads it
_SYMBOL = re.compile(r"\bs\d+\b")


@dataclass(frozen=True)
class Through:
    """How one target is said and written."""

    #: the opening's words for how the program was run, formatted with ``args`` (the
    #: ``torch.compile`` arguments of its mode), ``backend`` and ``device``
    opening: str
    #: what ran the program, in "eager and ...": ``compiled`` or ``exported``
    other: str
    #: what raises a compile error: ``torch.compile``, ``torch.export.export``
    raiser: str
    #: the brief's compiled function, from the program's function's name, its
    #: ``torch.compile`` arguments and the backend
    call: Callable[[str, str, str], str]
    #: the brief's lines the call needs, from the program and the backend ("": none)
    helper: Callable[[Program, str], str] = lambda program, backend: ""
    #: whether a step wraps the call from outside (compiled autograd runs the whole
    #: step, its backward included, under its context)
    wraps_step: bool = False


def compile_call(own: str, args: str, backend: str, mode: str = "") -> str:
    """A brief's ``torch.compile`` of the program's function ``own``."""
    extra = f", mode={mode!r}" if mode else ""
    return f"torch.compile({own}, {args}, backend={backend!r}{extra})"


def compiled_autograd_helper(program: Program, backend: str) -> str:
    """A brief's helper that runs a step, its backward included, under compiled autograd."""
    enable = getattr(compiled_autograd.entry_point(), "__name__", "_enable")
    return (f"BACKWARD_COMPILER = torch.compile(backend={backend!r})  # compiles what compiled autograd traces\n"
            "def under_compiled_autograd(fn):\n"
            "    def run(*inputs):  # the forward, the loss and backward() under compiled autograd\n"
            f"        with torch._dynamo.compiled_autograd.{enable}(BACKWARD_COMPILER):\n"
            "            return fn(*inputs)\n"
            "    return run\n")


def dynamic_shapes(program: Program) -> str:
    """``export_dynamic_shapes`` of the program's inputs, as text: ``Dim.AUTO`` on
    every dim that holds a size symbol."""
    per_input = []
    for inp in program.inputs:
        dims = ", ".join(f"{k}: torch.export.Dim.AUTO" for k, d in enumerate(inp.dims) if _SYMBOL.search(str(d)))
        per_input.append(f"{{{dims}}}" if dims else "None")
    return "(" + ", ".join(per_input) + ("," if len(per_input) == 1 else "") + ")"


def exported(lowering: str) -> Callable[[Program, str], str]:
    """The brief's ``exported``: the program exported on its first call's inputs, as
    ``exporting.Exported`` exports it, then lowered (``lowering``: a line that makes
    ``module`` of ``ep``) and run on every call."""
    def helper(program: Program, backend: str) -> str:
        name = codegen.entry_name(program)
        return ("EXPORTED = []  # made on the first call's inputs, run on every call\n"
                "def exported(*inputs):\n"
                "    if not EXPORTED:\n"
                "        class Program(torch.nn.Module):\n"
                "            def forward(self, *args):\n"
                f"                return {name}(*args)\n"
                f"        shapes = {dynamic_shapes(program)}  # Dim.AUTO on every dim that holds a size symbol\n"
                "        ep = torch.export.export(Program(), inputs, dynamic_shapes=(shapes,))\n"
                f"        {lowering}\n"
                "        EXPORTED.append(module)\n"
                "    return EXPORTED[0](*inputs)\n")
    return helper


#: how an exported target's opening begins
EXPORT_OPENING = ("exported with `torch.export.export` (each dim that holds a size symbol `Dim.AUTO`, on the "
                  "first binding's inputs)")
