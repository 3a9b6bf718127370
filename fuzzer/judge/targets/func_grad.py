"""``func-grad``: ``compile`` of programs whose gradients ``torch.func.grad`` takes
(feature ``func-grad``, ``codegen.program_grad``), eagerly and compiled alike."""

from __future__ import annotations

from fuzzer.judge.targets.brief import Through, compile_call
from fuzzer.judge.targets.compile import CompileTarget
from fuzzer.program import features

NAME = "func-grad"


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

    name = NAME
    api = "torch.compile(torch.func.grad(program and its loss))"
    help = "torch.compile(torch.func.grad(program and its loss)); programs of feature func-grad"
    unsupported: tuple[str, ...] = features.FUNC_GRAD_EXCLUDES
    required: tuple[str, ...] = (features.AUTOGRAD, features.FUNC_GRAD)
    through = Through("with `torch.compile({args})` of the program and its loss under `torch.func.grad` "
                      "(backend `{backend}`, {device})", "compiled", "torch.compile", compile_call)

    def unavailable(self, device: str) -> str | None:
        import torch.func

        return None if callable(getattr(torch.func, "grad", None)) else "this torch has no torch.func.grad"


#: the target, as the registry holds it, and the pieces of its pipeline only triage runs (none)
TARGET = FuncGradTarget()
PIECES: tuple = ()
