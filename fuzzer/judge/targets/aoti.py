"""``aoti``: AOTInductor, the program exported as for ``export`` and compiled into a
package."""

from __future__ import annotations

from fuzzer.judge import exporting
from fuzzer.judge.exporting import AOTI_DECLINES, Lowering
from fuzzer.judge.targets.brief import EXPORT_OPENING, Through, exported
from fuzzer.judge.targets.export import ExportTarget

NAME = "aoti"


class AotiTarget(ExportTarget):
    """AOTInductor: the program exported as for ``export``, compiled into a package
    (``torch._inductor.aoti_compile_and_package``, the C++ toolchain Inductor uses on the
    CPU) and loaded (``aoti_load_package``); every binding runs a loaded package, after
    the exported module's guard check.  A package is compiled for its example's sizes of
    0 and 1 (a dynamic dim of 0 or 1 specialised, every other over the range above 1),
    so a binding whose dims of 0 or 1 no package was made for gets one of its own,
    exported on its inputs (``exporting.PACKAGE``, made once a specialisation); one of a
    specialisation made already and outside that package's guards is refused.  It
    refuses what export refuses, and a call whose inputs are not laid out as the package
    was compiled for (``AOTI_DECLINES``); what AOTInductor raises compiling a package is
    a ``compile-error``."""

    name = NAME
    api = "torch.export.export, then torch._inductor.aoti_compile_and_package"
    help = ("exported, then compiled by AOTInductor into a package, one for each set of sizes 0 and 1 a binding "
            "needs, and loaded")
    declines = AOTI_DECLINES
    lowering: Lowering | None = exporting.PACKAGE
    #: export's pieces, then the package
    walk: tuple[str, ...] = ("export-graph", "export", "export-decomposed-graph", "export-decomposed", NAME)
    blame: str | None = "aoti"
    through = Through(EXPORT_OPENING + ", compiled by AOTInductor (`torch._inductor.aoti_compile_and_package`) "
                      "and run as the loaded package ({device})", "exported", "torch.export.export",
                      lambda own, args, backend: "exported",
                      exported("module = torch._inductor.aoti_load_package("
                               "torch._inductor.aoti_compile_and_package(ep))"))


#: the target, as the registry holds it, and the pieces of its pipeline only triage runs (none)
TARGET = AotiTarget()
PIECES: tuple = ()
