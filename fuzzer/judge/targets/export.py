"""``export``: ``torch.export.export`` of the program (not strict), every input dim
that holds a symbol given as ``Dim.AUTO``, on the first binding's inputs; each binding
runs the exported program's ``.module()``, and the pieces of export's pipeline that
triage runs a finding through (``fuzzer.triage.within``).

Export may narrow the shapes the exported program accepts (its guards): a binding
outside them is exported anew on its own inputs (``exporting.Exported``), and refused
only past the exports its lowering allows; what export declines to trace (a constraint
it cannot meet, a guard on data) is refused.  Export promises no dead-code elimination
of a custom op's calls, so ``missed-dce`` is not judged.  Programs with graph breaks
(export traces one whole graph), modules with state and programs that take gradients
(export traces the forward: a backward through ``.module()`` differentiates the traced
ops, not an ``autograd.Function``'s own backward) are not drawn for it, nor
``func-grad``, which implies gradients (``drawn_for``).
"""

from __future__ import annotations

from fuzzer.judge import exporting
from fuzzer.judge.exporting import EXPORT_DECLINES, Exported, Lowering, export_dynamic_shapes, run_exported
from fuzzer.judge.observe import Run
from fuzzer.judge.targets.brief import EXPORT_OPENING, Through, exported
from fuzzer.program import codegen, custom_ops, features
from fuzzer.program.ir import Case

NAME = "export"


class ExportTarget:
    """``torch.export.export``, run as its ``.module()`` (see the module's docstring)."""

    name = NAME
    api = "torch.export.export, run as its .module()"
    help = "torch.export.export, run as its .module()"
    unsupported: tuple[str, ...] = (features.GRAPH_BREAK, features.MODULE_STATE, features.MODULE_CARRY,
                                    features.AUTOGRAD, features.AUTOGRAD_FUNCTION, features.FUNCTION_SHAPES)
    required: tuple[str, ...] = ()
    declines = EXPORT_DECLINES
    judges_dce = False
    mode: str | None = None
    lowering: Lowering | None = exporting.MODULE
    under_compiled_autograd = False
    #: the exported graph first (what export's tracing made), then ``.module()``
    walk: tuple[str, ...] = ("export-graph", NAME)
    pipeline = "export's pipeline"
    blame: str | None = "export-unlift"
    area = "export"
    through = Through(EXPORT_OPENING + " and run as its `.module()` ({device})", "exported", "torch.export.export",
                      lambda own, args, backend: "exported", exported("module = ep.module()"))

    def build(self, case: Case, backend: str = "inductor", dynamic: bool = True):
        fn, step = codegen.build_with_step(case.program)
        made = Exported(fn, export_dynamic_shapes([inp.dims for inp in case.program.inputs]), self.lowering)
        if step is None:
            return made
        driven = codegen.driven(step, made)
        driven.exported = made
        return driven

    def run(self, fn, inputs: list) -> Run:
        return run_exported(fn, getattr(fn, "exported", fn), inputs, custom_ops.install().TRACE)

    def unavailable(self, device: str) -> str | None:
        return None


class ExportPiece(ExportTarget):
    """A piece of export's pipeline that triage runs a target's own finding through
    (``fuzzer.triage.within``), never a campaign's target: ``export-graph``, the
    exported graph called without ``.module()`` (``exporting.GraphRun``), and the
    program after ``run_decompositions()``, its graph so (``export-decomposed-graph``)
    and as its ``.module()`` (``export-decomposed``).  Each refuses what export refuses."""

    walk: tuple[str, ...] = ()

    def __init__(self, name: str, api: str, lowering: Lowering, blame: str) -> None:
        self.name, self.api, self.lowering, self.blame = name, api, lowering, blame


#: the target, as the registry holds it
TARGET = ExportTarget()
#: the pieces of its pipeline only triage runs, in pipeline order (``aoti`` walks them too)
PIECES: tuple[ExportPiece, ...] = (
    ExportPiece("export-graph", "torch.export.export, its graph called without .module()", exporting.GRAPH,
                "export-trace"),
    ExportPiece("export-decomposed-graph", "torch.export.export, then run_decompositions(), its graph called "
                "without .module()", exporting.DECOMPOSED_GRAPH, "export-decompositions"),
    ExportPiece("export-decomposed", "torch.export.export, then run_decompositions(), run as its .module()",
                exporting.DECOMPOSED, "export-decomposed-unlift"),
)
