"""Bug classes as older dcefuzz versions made them.

An entry's class is fixed when it is saved; when the contract learns to class a bug
better (an error by where torch raised it, not by its words; a missed-dce by why the
call may be kept), entries saved before still say the old class.  Replaying or
localising such an entry looks for a class today's contract never makes: ``dcefuzz
reclass`` (``fuzzer.replay.reclass``) renames them, and triage refuses to probe one
(``fuzzer.triage.probe.OutdatedClass``) rather than call it "not localised".
"""

from __future__ import annotations

from fuzzer.judge import contract


def legacy_class(kind: str, divs: list[contract.Divergence]) -> str:
    """The class ``divs`` had before errors were classed by where they were raised, and
    before a missed-dce was parted by why the call may be kept."""
    if kind in contract.ERROR_KINDS and divs:
        return contract.BugClass(kind, (contract.normalise_message(divs[0].detail),)).text
    if kind == contract.MISSED_DCE:
        return kind
    return contract.bug_class(kind, divs)
