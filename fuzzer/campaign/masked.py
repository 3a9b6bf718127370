"""Bugs a finding's bug masks: another bug of the same program, seen on an earlier stage.

A program can hold two bugs.  An Inductor compile error ends the compiled run, so a
wrong value that ``aot_eager`` shows in the same program is never judged on Inductor:
the trial finds the error alone, and where the error is a known bug (its examples
full, or known upstream) the finding is only counted and the program's other bug is
lost with it.  Triage's stage walk does see it: a stage before the one that shows the
finding's bug that failed otherwise, showing another kind of finding
(``Culprit.otherwise``).

So a triaged entry whose walk saw such a stage has its case tried once more on the
first of them, as a campaign's trial tries a program (judged, then confirmed on a fresh
compile), and each confirmed finding there of another family than the entry's is a
finding of its own, on that stage's backend: shrunk, triaged and saved like any other
(``fuzzer.campaign.entries.masked_entries``).  Only entries of the campaign's own
backend are asked, so a finding yielded here yields nothing further.
"""

from __future__ import annotations

from fuzzer.judge import contract
from fuzzer.judge.trial import Finding, run_trial
from fuzzer.triage.family import family


def masked_stage(entry) -> str | None:
    """The first stage before the entry's own on which its triage saw another kind of
    finding (None: none, or the entry is not triaged)."""
    culprit = entry.culprit
    if culprit is None or culprit.stage is None:
        return None
    return next((stage for stage, seen in culprit.otherwise.items()
                 if any(kind in contract.CORRECTNESS_KINDS for kind in seen)), None)


def masked(entry, backend: str) -> list[Finding]:
    """The confirmed findings of other families that ``entry``'s case shows on the stage
    its bug masks (none where its triage saw no such stage, or the entry is not of the
    campaign's ``backend``, or not of a single compile's kinds)."""
    if entry.backend != backend or entry.kind not in contract.CORRECTNESS_KINDS:
        return []
    stage = masked_stage(entry)
    if stage is None:
        return []
    result = run_trial(entry.case, entry.device, stage)
    return [f for f in result.findings
            if f.kind in contract.CORRECTNESS_KINDS
            and family(contract.bug_class(f.kind, f.divergences)) != family(entry.bug_class)]
