"""Replay saved entries: does each recorded divergence still happen on this torch?

Each entry is re-run in this process from a fresh compile, with the same
confirmation as a campaign (the divergence must recur after ``torch._dynamo.reset``);
a stale-cache entry's cache pair is run twice, each time in two fresh processes.
REPRODUCES: the entry's kind diverges again, with its bug class, on both compiles
(crash and timeout entries run in a fresh process, its heap checked
(``fuzzer.isolation.heapcheck``), and reproduce when that process dies the recorded
death again, or one it dies so by; a crash gets up to ``VERSIONS.flaky_tries`` processes,
since a corrupted heap dies when and how the allocator notices, and one that dies
its death is enough).  FIXED: it runs and judges clean of that kind (a
crash or timeout: the process ran to completion and judged so), or it reproduced
once and a second compile judged clean (flaky).  ERROR: the entry cannot be read,
its program no longer runs eagerly (an invalid or nondeterministic case cannot say
anything about the compiler), it was not wholly compiled or a binding could not be
judged (untested: a bug not shown by code that did not run compiled is not fixed),
the compiled program raised another way (a compile or runtime error of another kind
may come first and hide the bug), the kind still diverges with another bug class, or
the process died another death (another torch may word the same failure anew:
calling that FIXED would be quietly wrong); and the same of a second compile after
a first that reproduced.  One ladder reads each run (``fuzzer.judge.reading``), the
one a repro script reads its run by.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

from fuzzer.corpus.entry import BadEntry
from fuzzer.corpus.store import load
from fuzzer.isolation.deaths import probe
from fuzzer.judge import contract, kinds, targets
from fuzzer.judge.contract import CRASH, PROCESS_KINDS, bug_class
from fuzzer.judge.execute import device_unavailable, intra_op_threads
from fuzzer.judge.reading import Reading, read_death, read_verdict
from fuzzer.limits import VERSIONS

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


def replay_entry(path: Path, device: str | None = None, target: str | None = None) -> ReplayResult:
    """Replay one entry on ``device``, or on the device it was found on; through
    ``target``, or the target it was found through."""
    try:
        entry = load(path)
    except BadEntry as exc:
        return ReplayResult(str(path), Path(path).stem, "?", ERROR, str(exc))
    if target is not None:
        entry = dataclasses.replace(entry, target=target)
    dev = device or entry.device

    def result(outcome: str, detail: str, judged: bool = True) -> ReplayResult:
        return ReplayResult(str(path), entry.id, entry.kind, outcome, detail, judged)

    reason = device_unavailable(dev)
    if reason is not None:
        recorded = "" if device else " (the device it was found on; --device cpu replays it on the CPU)"
        return result(ERROR, f"cannot run on {dev}{recorded}: {reason}", judged=False)
    reason = targets.get(entry.target).unavailable(dev)
    if reason is not None:
        return result(ERROR, f"cannot run through {entry.target} here: {reason}", judged=False)
    if entry.kind in PROCESS_KINDS:
        # a corrupted heap dies when, and how, the allocator notices: a crash gets more
        # than one fresh process, and one that dies its death is enough
        runs: list[Conclusion] = []
        while len(runs) < tries(entry.kind) and not any(r.outcome == REPRODUCES for r in runs):
            runs.append(_death_read(entry, probe(entry.case, dev, entry.backend, checked=True)))
        said = combined(runs)
        return result(said.outcome, said.detail + (f" ({len(runs)} runs)" if len(runs) > 1 else ""), said.judged)
    fresh = kinds.oracle(entry, dev, entry.backend)  # as its kind judges it (a cache pair's: a new pair)

    def judge():
        with intra_op_threads(entry.threads):  # as many as the process that found it had
            return fresh(entry.case)
    try:
        first = _conclude(entry.kind, entry.bug_class, judge())
        if first.outcome != REPRODUCES:
            return result(first.outcome, first.detail, first.judged)
        # a fresh compile must show it again; a second run that cannot judge (eager
        # fails, raises another way, not wholly compiled, another bug of the kind)
        # says nothing, and only one judged clean calls the entry flaky
        second = _conclude(entry.kind, entry.bug_class, judge())
        if second.outcome == REPRODUCES:
            return result(REPRODUCES, first.detail)
        if second.outcome == FIXED:
            return result(FIXED, "did not recur after a fresh compile (flaky)")
        return result(ERROR, f"reproduced, then on a fresh compile: {second.detail}", second.judged)
    except Exception as exc:  # noqa: BLE001 - one broken entry must not stop the rest
        return result(ERROR, f"{type(exc).__name__}: {exc}")


#: a run's reading (``fuzzer.judge.reading``) as a replay's outcome, and its detail
_OUTCOME = {Reading.REPRODUCES: (REPRODUCES, "{}"), Reading.ABSENT: (FIXED, "no divergence of this kind"),
            Reading.NOT_JUDGED: (ERROR, "{}"), Reading.ANOTHER_BUG: (ERROR, "another bug of this kind: {}"),
            Reading.RAISED: (ERROR, "fails another way: {}"), Reading.UNTESTED: (ERROR, "cannot judge ({})")}


@dataclass(frozen=True)
class Conclusion:
    """What one judged run says of an entry's bug: an outcome, why, and whether it
    was judged at all (``ReplayResult.judged``)."""

    outcome: str
    detail: str
    judged: bool = True


def tries(kind: str) -> int:
    """Fresh processes a crash or timeout replay may take: a crash's corrupted heap may
    die another way, or not at all, in one of them (a hang costs its whole limit)."""
    return VERSIONS.flaky_tries if kind == CRASH else 1


def combined(runs: list[Conclusion]) -> Conclusion:
    """Several runs of one entry as one: one that reproduces is enough; an error only
    where no run judged the bug absent."""
    for outcome in (REPRODUCES, FIXED):
        found = [r for r in runs if r.outcome == outcome]
        if found:
            return found[0]
    return runs[-1]


#: how a process ended, read for its death (``fuzzer.judge.reading.read_death``), as a
#: replay's outcome, and its detail (of ``Death.line``)
_DEATH_OUTCOME = {Reading.NOT_JUDGED: (ERROR, "eager execution {}"), Reading.REPRODUCES: (REPRODUCES, "{}"),
                  # another death (another signal, the memory cap, a hang): neither this bug nor fixed
                  Reading.ANOTHER_BUG: (ERROR, "another death: {}"),
                  # eager failed, the compiled run raised another way, or was not wholly compiled
                  Reading.UNTESTED: (ERROR, "cannot judge: {}"), Reading.ABSENT: (FIXED, "{}")}


def _death_read(entry, death) -> Conclusion:
    """How a crash or timeout entry's fresh process ended, read for its death: the
    ladder a repro script reads its child's end by too (``fuzzer.judge.reading``)."""
    seen = bug_class(death.kind, [death.divergence()]).text if death.kind is not None else None
    said = read_death(entry.bug_class.text, seen, death.after_eager, death.judged)
    outcome, words = _DEATH_OUTCOME[said.reading]
    return Conclusion(outcome, words.format(death.line()), said.judged)


def _conclude(kind: str, wanted: contract.BugClass, verdict: contract.Verdict) -> Conclusion:
    """One run's verdict read for a bug of ``kind`` and class ``wanted``: the ladder a
    repro script reads its run by too (``fuzzer.judge.reading``)."""
    said = read_verdict(kind, wanted, verdict)
    outcome, words = _OUTCOME[said.reading]
    if said.reading is Reading.REPRODUCES:
        return Conclusion(outcome, verdict.of_kind(kind)[0].line())
    return Conclusion(outcome, words.format(said.reason), said.judged)
