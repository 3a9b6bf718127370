"""``compiled-autograd``: ``torch.compile`` as ``compile``, every run under compiled
autograd (``fuzzer.judge.compiled_autograd``), and the pieces of its pipeline that
triage runs a finding through (``fuzzer.triage.within``)."""

from __future__ import annotations

from fuzzer.judge import compiled_autograd
from fuzzer.judge.targets.brief import Through, compile_call, compiled_autograd_helper
from fuzzer.judge.targets.compile import CompileTarget
from fuzzer.judge.targets.target import DEBUG_BACKENDS
from fuzzer.program import features
from fuzzer.program.ir import Case

NAME = "compiled-autograd"


class CompiledAutogradTarget(CompileTarget):
    """``torch.compile`` as ``compile``, every run (forward, loss and ``backward()``)
    under compiled autograd with the same backend (``fuzzer.judge.compiled_autograd``): the
    backward the autograd engine would run is traced and compiled as one graph.  Its
    programs take gradients (``required``); what compiled autograd documents it does
    not support is refused; dead calls are not judged (the backward graph it compiles
    calls what the program's autograd formulas call, not the program's own calls)."""

    name = NAME
    api = "torch.compile, the backward under torch._dynamo.compiled_autograd"
    help = "torch.compile with the backward under compiled autograd; programs that take gradients"
    required: tuple[str, ...] = (features.AUTOGRAD,)
    declines = compiled_autograd.DECLINES
    judges_dce = False
    under_compiled_autograd = True
    #: its pieces, one a backend of the backward, cut at the finding's (``within.pieces_for``)
    walk: tuple[str, ...] = tuple(f"{NAME}-{backward}" for backward in DEBUG_BACKENDS)
    pipeline = "compiled autograd's pipeline"
    area = "compiled autograd"
    through = Through("with `torch.compile({args})` (backend `{backend}`, {device}), each run, its backward "
                      "included, under compiled autograd (`torch._dynamo.compiled_autograd`, the backward compiled "
                      "with the same backend)", "compiled", "torch.compile", compile_call, compiled_autograd_helper,
                      wraps_step=True)

    def build(self, case: Case, backend: str = "inductor", dynamic: bool = True):
        return compiled_autograd.under_compiled_autograd(super().build(case, backend, dynamic), backend)

    def unavailable(self, device: str) -> str | None:
        return compiled_autograd.unavailable()


class CompiledAutogradPiece(CompiledAutogradTarget):
    """A piece of compiled autograd's pipeline that triage runs a target's own finding
    through (``fuzzer.triage.within``), never a campaign's target: the forward compiled
    as ``compiled-autograd`` compiles it (the finding's backend), the backward graph
    compiled autograd captures compiled by ``torch.compile`` with the debugging backend
    ``backward`` instead (``eager``: Dynamo's trace of it, run as captured;
    ``aot_eager``: AOTAutograd on it too; ...).  What it refuses is what compiled
    autograd refuses."""

    walk: tuple[str, ...] = ()

    def __init__(self, backward: str, blame: str) -> None:
        self.backward, self.blame = backward, blame
        self.name = f"{NAME}-{backward}"
        self.api = f"torch.compile, the backward under torch._dynamo.compiled_autograd compiled by {backward!r}"

    def build(self, case: Case, backend: str = "inductor", dynamic: bool = True):
        forward = CompileTarget.build(self, case, backend, dynamic)
        return compiled_autograd.under_compiled_autograd(forward, self.backward)


#: the target, as the registry holds it
TARGET = CompiledAutogradTarget()
#: the pieces of its pipeline only triage runs, one a backend of the backward, in ``DEBUG_BACKENDS``' order,
#: with what each blames: its capture, AOTAutograd on its graph, the decompositions, Inductor
PIECES: tuple[CompiledAutogradPiece, ...] = tuple(
    CompiledAutogradPiece(backward, f"{NAME}-{blame}") for backward, blame in zip(
        DEBUG_BACKENDS, ("capture", "aot", "decompositions", "inductor"), strict=True))
