"""``compile``: ``torch.compile`` with the program's dynamic mode and the backend, run
through the program's ``step`` (its marks, gradients, settings): what a trial always
was.  The other ``torch.compile`` targets are this one with something more
(``compiled_autograd``, ``func_grad``, ``reduce_overhead``)."""

from __future__ import annotations

import torch

from fuzzer.judge import observe
from fuzzer.judge.exporting import Lowering
from fuzzer.judge.observe import Run
from fuzzer.judge.targets.brief import Through, compile_call
from fuzzer.program import codegen, custom_ops
from fuzzer.program.ir import Case

NAME = "compile"


class CompileTarget:
    """``torch.compile`` with the program's dynamic mode (``dynamic=False``: static
    shapes, one compile per binding, as triage asks)."""

    name = NAME
    api = "torch.compile"
    help = "torch.compile"
    unsupported: tuple[str, ...] = ()
    required: tuple[str, ...] = ()
    declines: frozenset = frozenset()
    judges_dce = True
    #: ``torch.compile``'s ``mode`` (None: its default)
    mode: str | None = None
    lowering: Lowering | None = None
    under_compiled_autograd = False
    walk: tuple[str, ...] = ()
    pipeline = ""
    blame: str | None = None
    area = "torch.compile"
    through = Through("with `torch.compile({args})` (backend `{backend}`, {device})", "compiled", "torch.compile",
                      compile_call)

    def build(self, case: Case, backend: str = "inductor", dynamic: bool = True):
        fn, step = codegen.build_with_step(case.program)
        dyn = codegen.dynamic_arg(case.program) if dynamic else False
        how = {} if self.mode is None else {"mode": self.mode}
        return codegen.driven(step, torch.compile(fn, dynamic=dyn, backend=backend, **how))

    def run(self, fn, inputs: list) -> Run:
        return observe.run_once(fn, inputs, custom_ops.install().TRACE, compiled=True)

    def unavailable(self, device: str) -> str | None:
        return None


#: the target, as the registry holds it, and the pieces of its pipeline only triage runs (none)
TARGET = CompileTarget()
PIECES: tuple = ()
