"""What a target is: the :class:`Target` interface every target's module implements,
and what every stage reads off it instead of its name."""

from __future__ import annotations

from typing import Any, Protocol

from fuzzer.judge.exporting import Lowering
from fuzzer.judge.observe import Run
from fuzzer.judge.targets.brief import Through
from fuzzer.program.ir import Case

#: the name of the target a campaign, an entry or a replay that names none runs through
DEFAULT = "compile"

#: torch's debugging backends, from the least of the compiler to all of it: the stages
#: triage walks a finding over (``fuzzer.triage.stage.STAGES``), and the backends compiled
#: autograd's pieces compile the backward with
DEBUG_BACKENDS: tuple[str, ...] = ("eager", "aot_eager", "aot_eager_decomp_partition", "inductor")


class Target(Protocol):
    """One pipeline a program is compiled and run through, or a piece of one that only
    triage runs (``fuzzer.triage.within``)."""

    #: the name ``--target`` takes and an entry records
    name: str
    #: what it runs, in words (a repro script's header)
    api: str
    #: what it runs, in a few words: its part of ``--target``'s help
    help: str
    #: the features (``fuzzer.program.features``) it cannot run: never drawn for it, nor
    #: any feature that implies one of them (``drawn_for``)
    unsupported: tuple[str, ...]
    #: the features every program drawn for it has (weight 1): what it exists to run
    required: tuple[str, ...]
    #: what it documents as unsupported, as ``(exception type, stage, message prefix)``
    #: triples: a compiled run that failed so is untested, never a finding
    declines: frozenset
    #: whether dead calls its compiled code kept are judged (``missed-dce``)
    judges_dce: bool
    #: ``torch.compile``'s ``mode`` (None: its default, or no ``torch.compile``)
    mode: str | None
    #: how its exported program is lowered (``exporting.Lowering``; None: it exports nothing)
    lowering: Lowering | None
    #: whether every run, its backward included, goes under compiled autograd
    under_compiled_autograd: bool
    #: the pieces (``PIECES``, or the target itself last) a finding of it that ``compile``
    #: does not show is walked over, in pipeline order (``fuzzer.triage.within``; (): none)
    walk: tuple[str, ...]
    #: that pipeline, in words (a report's evidence; "": no walk)
    pipeline: str
    #: what a culprit's stage says where the walk finds the bug first shows in it, as a
    #: piece of a walk (None: it is no piece of one)
    blame: str | None
    #: the area tag of an issue's title for a bug of it no stage places, or placed on one
    #: of its pieces
    area: str
    #: how an issue says it and a brief repro writes it
    through: Through

    def build(self, case: Case, backend: str, dynamic: bool = True) -> Any:
        """The function every binding's run calls: made once, run over the bindings in order."""

    def run(self, fn, inputs: list) -> Run:
        """One binding's run of ``fn`` (from :meth:`build`), recorded."""

    def unavailable(self, device: str) -> str | None:
        """Why it cannot run on ``device`` with this torch (None: it can)."""
