"""Replay saved entries: does each recorded divergence still happen on this torch?

Each entry is re-run in this process from a fresh compile, with the same
confirmation as a campaign (the divergence must recur after ``torch._dynamo.reset``);
a stale-cache entry's cache pair is run twice, each time in two fresh processes.
REPRODUCES: the entry's kind diverges again (crash and timeout entries run in a
fresh process, and reproduce when that process dies, or runs out of time, again).  FIXED: it runs and judges clean of
that kind.  ERROR: the entry cannot be read, its program no longer runs eagerly
(an invalid or nondeterministic case cannot say anything about the compiler), it
was not wholly compiled or a binding could not be judged (untested: a bug not shown
by code that did not run compiled is not fixed), the compiled program raised another
way (a compile or runtime error of another kind may come first and hide the bug), or
the kind still diverges with
another bug class (another torch may word the same failure anew: calling that
FIXED would be quietly wrong).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from fuzzer.corpus.entry import BadEntry
from fuzzer.corpus.store import load
from fuzzer.isolation.judge import probe
from fuzzer.judge import contract, kinds
from fuzzer.judge.contract import PROCESS_KINDS, bug_class, failed_otherwise
from fuzzer.judge.execute import device_unavailable, intra_op_threads

REPRODUCES = "REPRODUCES"
FIXED = "FIXED"
ERROR = "ERROR"


@dataclass
class ReplayResult:
    path: str
    id: str
    kind: str
    outcome: str
    detail: str
    #: False where the replay could not judge the entry here (no such device, eager
    #: fails, not wholly compiled, a binding the contract cannot judge): an ERROR that
    #: says nothing of the bug, which the pytest plugin skips
    judged: bool = True

    def to_json(self) -> dict:
        return dict(self.__dict__)


def replay_entry(path: Path, device: str | None = None) -> ReplayResult:
    """Replay one entry on ``device``, or on the device it was found on."""
    try:
        entry = load(path)
    except BadEntry as exc:
        return ReplayResult(str(path), Path(path).stem, "?", ERROR, str(exc))
    dev = device or entry.device

    def result(outcome: str, detail: str, judged: bool = True) -> ReplayResult:
        return ReplayResult(str(path), entry.id, entry.kind, outcome, detail, judged)

    reason = device_unavailable(dev)
    if reason is not None:
        recorded = "" if device else " (the device it was found on; --device cpu replays it on the CPU)"
        return result(ERROR, f"cannot run on {dev}{recorded}: {reason}", judged=False)
    if entry.kind in PROCESS_KINDS:
        death = probe(entry.case, dev, entry.backend)
        if death.kind is not None and not death.after_eager:
            return result(ERROR, f"eager execution {death.line()}", judged=False)
        if death.kind == entry.kind and bug_class(death.kind, [death.divergence()]) == entry.bug_class:
            return result(REPRODUCES, death.line())
        if death.kind is None and not death.judged:
            return result(ERROR, f"cannot judge: {death.line()}", judged=False)
        return result(FIXED, death.line())
    fresh = kinds.oracle(entry, dev, entry.backend)  # as its kind judges it (a cache pair's: a new pair)

    def judge():
        with intra_op_threads(entry.threads):  # as many as the process that found it had
            return fresh(entry.case)
    try:
        first = judge()
        if first.status != contract.OK:
            return result(ERROR, f"{first.status}: {first.reason}", judged=False)
        divs = first.of_kind(entry.kind)
        if not divs and first.untested:
            # not wholly compiled, or a binding the contract could not judge: a bug that
            # did not show there was not tested, so it is not fixed
            reason, message = first.untested[0]
            return result(ERROR, f"cannot judge ({reason}): {message.splitlines()[0] if message else ''}",
                          judged=False)
        other = failed_otherwise(entry.kind, first.divergences)
        if not divs and other is not None:
            # it raised another way, which may come first and hide the bug: not fixed
            return result(ERROR, f"fails another way: {bug_class(other.kind, [other])}")
        if not divs:
            return result(FIXED, "no divergence of this kind")
        if bug_class(entry.kind, divs) != entry.bug_class:
            # neither this bug nor fixed: the kind still diverges, another way
            return result(ERROR, f"another bug of this kind: {bug_class(entry.kind, divs)}")
        second = judge()
        if second.status == contract.OK and bug_class(entry.kind, second.of_kind(entry.kind)) == entry.bug_class:
            return result(REPRODUCES, divs[0].line())
        return result(FIXED, "did not recur after a fresh compile (flaky)")
    except Exception as exc:  # noqa: BLE001 - one broken entry must not stop the rest
        return result(ERROR, f"{type(exc).__name__}: {exc}")
