"""Shrinking crash and timeout findings: candidates die in child processes.

The shrinker's usual judge runs candidates in this process, which a candidate that
segfaults would take down.  Here the judge is an ``IsolatedJudge`` (a child that
stays warm across the candidates it survives, its heap as a worker's) and the reduced
case is confirmed in a fresh process, its heap checked (``fuzzer.isolation.heapcheck``),
under the campaign's own limits before it replaces the entry.

The entry is read (its case, its death, where it was found) and never built here: a
reduced casualty is a :class:`Reduced` case, and the entry that stands for it is
made by the corpus (``Entry.reduced``).
"""

from __future__ import annotations

import re
import threading
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from fuzzer.isolation.deaths import IsolatedJudge, probe
from fuzzer.judge import contract
from fuzzer.judge.contract import TIMEOUT, Divergence
from fuzzer.judge.trial import Finding
from fuzzer.limits import OracleBudget, PoolLimits
from fuzzer.program.ir import Case
from fuzzer.reduce.edits import canonical_case
from fuzzer.reduce.shrinker import ShrinkRecord, shrink

#: "[crash] program 7: process died: SIGSEGV" (a campaign's casualty) or
#: "[crash] binding 0, process: process died: SIGSEGV" (a shrunk one)
_DETAIL_LINE = re.compile(r"^\[[\w-]+\] [^:]*: (?P<detail>.*)$")


@dataclass(frozen=True)
class Reduced:
    """A casualty's smaller case, confirmed to die so in a fresh process (``confirms``)."""

    case: Case
    divergences: list
    #: the shrink's record (``ShrinkResult.record``, confirmed in a fresh process)
    shrink: ShrinkRecord


def divergence_of(entry) -> Divergence:
    """The divergence a crash or timeout entry records (its detail line, parsed)."""
    line = entry.detail[0] if entry.detail else ""
    m = _DETAIL_LINE.match(line)
    return Divergence(entry.kind, 0, "process", m.group("detail") if m else line)


def shrink_casualty(entry, limits: PoolLimits = PoolLimits(),
                    budget: OracleBudget | None = None, candidate_seconds: float | None = None,
                    stop: threading.Event | None = None,
                    log: Callable[[str], None] | None = None) -> Reduced | None:
    """Shrink a crash or timeout entry (``fuzzer.corpus.entry.Entry``); its smaller
    case, or None if nothing smaller was confirmed.

    Candidates run in an ``IsolatedJudge`` (a timeout candidate gets
    ``candidate_seconds``, shorter than the campaign's limit, or shrinking a hang
    would take hours); the reduced case must then die so (``confirms``) in a fresh
    process under the campaign's own limits.  Raises ``Aborted`` when ``stop`` is set.
    """
    budget = budget or limits.casualty_shrink
    if candidate_seconds is None:
        candidate_seconds = limits.casualty_candidate_seconds if entry.kind == TIMEOUT else limits.program_seconds
    target = divergence_of(entry)
    with IsolatedJudge(entry.device, entry.backend, entry.fault, limits, candidate_seconds, stop) as judge:
        result = shrink(Finding(entry.kind, entry.case, [target], entry.device, entry.backend), budget,
                        judge=judge, confirm=False)
    if result.case == entry.case:
        if log:
            log(f"{entry.kind} {entry.id}: nothing smaller died the same way "
                f"({result.oracle_calls} oracle calls, {result.seconds:.0f}s)")
        return None
    for candidate in (canonical_case(result.case), result.case):
        death = probe(candidate, entry.device, entry.backend, entry.fault, limits, stop, checked=True)
        if confirms(entry, death):
            record = {**result.record(), "confirmed": "fresh process",
                      "original_statements": (entry.shrink or {}).get("original_statements",
                                                                     entry.statements)}
            if log:
                log(f"shrunk {entry.kind} {entry.id}: {entry.statements} -> "
                    f"{len(candidate.program.body)} statements")
            # the class it was found with, however the confirming process died
            return Reduced(candidate, [Divergence(entry.kind, 0, "process", target.detail)], record)
    return None


def confirms(entry, death) -> bool:
    """Whether a fresh process's ``death`` confirms the crash or timeout ``entry``: it
    died after its eager runs, of the entry's kind, so as the entry records
    (``death.dies_so``: the same death, or, where either is a heap corruption, any death
    a corrupted heap is met by).  The entry keeps its class: confirming asks whether the
    case kills a process of its own, not how the first one died."""
    return death.confirms(contract.bug_class(entry.kind, [divergence_of(entry)]))


@dataclass(frozen=True)
class Confirmation:
    """How a casualty's own case ended in the fresh processes that asked whether it dies
    so again (``dies_again``), in order; the last confirms it where any does."""

    #: how each process ended (``Death.line``: "crash: process died: SIGBUS", "ran to
    #: completion (ok)")
    ends: tuple[str, ...]
    confirmed: bool

    def why(self) -> str:
        """Why a casualty that did not die so again is withdrawn, in words."""
        seen = ", ".join(end if n == 1 else f"{end} x{n}" for end, n in Counter(self.ends).items())
        return f"it did not die so again in {len(self.ends)} fresh processes ({seen})"


def dies_again(entry, limits: PoolLimits = PoolLimits(), stop: threading.Event | None = None) -> Confirmation:
    """Whether ``entry``'s own case dies so (``confirms``) in a fresh process, its heap
    checked, in one of ``limits.casualty_confirmations`` tries; it stops at the first.

    A campaign's casualty is blamed on the program its worker was running when it
    died; a worker that ran programs and shrink candidates before may have had its heap
    corrupted by one of them, so the program it died on is a suspect until a process of
    its own dies on it.  The shrink's candidates ran in one warm child, which tells
    nothing smaller died, not whether the case itself does."""
    ends = []
    for _ in range(limits.casualty_confirmations):
        death = probe(entry.case, entry.device, entry.backend, entry.fault, limits, stop, checked=True)
        ends.append(death.line() if death.after_eager else f"eager execution {death.line()}")
        if confirms(entry, death):
            return Confirmation(tuple(ends), True)
    return Confirmation(tuple(ends), False)
