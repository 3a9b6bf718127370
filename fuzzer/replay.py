"""Replay saved entries: does each recorded divergence still happen on this torch?

Each entry is re-run in this process from a fresh compile, with the same
confirmation as a campaign (the divergence must recur after ``torch._dynamo.reset``).
REPRODUCES: the entry's kind diverges again (crash and timeout entries run in a
fresh process, and reproduce when that process dies, or runs out of time, again).  FIXED: it runs and judges clean of
that kind.  ERROR: the entry cannot be read, or its program no longer runs eagerly
(an invalid or nondeterministic case cannot say anything about the compiler).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from fuzzer import oracle
from fuzzer.corpus import BadEntry, load
from fuzzer.isolate import INVALID_DEATH, probe
from fuzzer.oracle import PROCESS_KINDS
from fuzzer.trial import judge_fresh

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

    def to_json(self) -> dict:
        return dict(self.__dict__)


def replay_entry(path: Path, device: str | None = None) -> ReplayResult:
    try:
        entry = load(path)
    except BadEntry as exc:
        return ReplayResult(str(path), Path(path).stem, "?", ERROR, str(exc))
    from fuzzer.execute import default_device
    dev = device or default_device()
    if entry.kind in PROCESS_KINDS:
        died = probe(entry.case, dev, entry.backend)
        if died is not None and died.startswith(INVALID_DEATH):
            return ReplayResult(str(path), entry.id, entry.kind, ERROR, died)
        if died is not None and died.startswith(entry.kind):
            return ReplayResult(str(path), entry.id, entry.kind, REPRODUCES, died)
        return ReplayResult(str(path), entry.id, entry.kind, FIXED, died or "ran to completion")
    try:
        first = judge_fresh(entry.case, dev, entry.backend)
        if first.status != oracle.OK:
            return ReplayResult(str(path), entry.id, entry.kind, ERROR, f"{first.status}: {first.reason}")
        if not first.of_kind(entry.kind):
            return ReplayResult(str(path), entry.id, entry.kind, FIXED, "no divergence of this kind")
        second = judge_fresh(entry.case, dev, entry.backend)
        if second.status == oracle.OK and second.of_kind(entry.kind):
            return ReplayResult(str(path), entry.id, entry.kind, REPRODUCES, first.of_kind(entry.kind)[0].line())
        return ReplayResult(str(path), entry.id, entry.kind, FIXED, "did not recur after a fresh compile (flaky)")
    except Exception as exc:  # noqa: BLE001 - one broken entry must not stop the rest
        return ReplayResult(str(path), entry.id, entry.kind, ERROR, f"{type(exc).__name__}: {exc}")
