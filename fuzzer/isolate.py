"""Isolation: running a case in a child process that may die.

A compiler bug can segfault, hang or exhaust memory.  In the process that meets it,
such a bug ends everything; seen from a parent, it is an observation like any other:
the child died (with a signal), outlived its time limit, or passed a memory cap.
This module turns those deaths into verdicts, so crash and timeout findings can be
replayed and shrunk with the same machinery as the others:

* ``probe`` runs one case in a fresh process and says how it died (replay, and the
  confirmation of a shrunk crash);
* ``IsolatedJudge`` is the shrinker's oracle for crash and timeout findings: a child
  that stays warm across the candidates it survives (most of them), replaced after
  each one that kills it;
* ``shrink_casualty`` shrinks a crash or timeout entry with it and confirms the
  result in a fresh process.

A death counts only after eager execution finished in the child: a case whose eager
run kills the process is invalid, not a compiler bug.  The detail strings
(``died_detail`` and friends) are shared with the worker pool, so a casualty found
by a campaign and the same death seen while shrinking have one bug class.
"""

from __future__ import annotations

import multiprocessing
import re
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from fuzzer import corpus, faults, oracle, signature
from fuzzer.limits import PoolLimits
from fuzzer.oracle import CRASH, TIMEOUT, Divergence, Verdict
from fuzzer.program import Case
from fuzzer.shrink import ShrinkBudget, canonical_case, shrink
from fuzzer.worker import rss_kb


def signal_name(exitcode: int | None) -> str:
    if exitcode is not None and exitcode < 0:
        try:
            return signal.Signals(-exitcode).name
        except ValueError:
            return f"signal {-exitcode}"
    return f"exit code {exitcode}"


def died_detail(exitcode: int | None) -> str:
    return f"process died: {signal_name(exitcode)}"


def timeout_detail(seconds: float) -> str:
    # "120 s", not "120s": the number must stand alone to be normalised out of the
    # bug class, since a timeout is shrunk under a shorter limit than it was found
    return f"program exceeded its time limit ({seconds:.0f} s)"


def memory_detail(memory_mb: int) -> str:
    return f"memory cap {memory_mb} MiB exceeded"


#: how ``probe`` reports a child that died before its eager runs were done
INVALID_DEATH = "invalid"

#: seconds a child asked to stop may take before it is killed
STOP_GRACE_S = 2.0


def stop_child(process, conn, grace: float) -> None:
    """Ask a child to stop over its pipe; kill it if it has not within ``grace`` s."""
    if process.is_alive():
        try:
            conn.send(("stop",))
        except (OSError, BrokenPipeError):
            pass
        process.join(grace)
    if process.is_alive():
        process.kill()
        process.join(5)
    conn.close()


class Aborted(Exception):
    """The caller asked an isolated run to stop (Ctrl-C, end of a campaign)."""


# ------------------------------------------------------------------ the child

def _serve(conn, device: str, backend: str, fault: str | None, threads: int) -> None:
    """The child's loop: for each case, eager runs, then ("eager",), then the compiled
    runs and the judgement, then ("done", status)."""
    import torch

    from fuzzer.execute import fresh_compile_state, run_compiled, run_eager

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    torch.set_num_threads(threads)
    with faults.planted(fault):
        conn.send(("ready",))
        while True:
            message = conn.recv()
            if message[0] == "stop":
                return
            case = Case.from_json(message[1])
            fresh_compile_state()
            runs = run_eager(case, device)
            conn.send(("eager",))
            if any(br.eager.failure for br in runs):
                conn.send(("done", oracle.INVALID))
                continue
            run_compiled(case, device, runs, backend=backend)
            conn.send(("done", oracle.judge(case, runs).status))


@dataclass(frozen=True)
class Death:
    """How an isolated run ended: ``kind`` is None when the child survived."""

    kind: str | None
    detail: str
    #: the child finished eager execution before it died (else the case is invalid)
    after_eager: bool = True

    def line(self) -> str:
        return f"{self.kind}: {self.detail}" if self.kind else self.detail


class IsolatedJudge:
    """Run cases one after another in a child process that may die.

    The child is reused across candidates it survives, so only the candidates that
    kill it pay a process start.  ``seconds`` is the time limit of one case (a case
    still running past it is a timeout); ``stop`` aborts a wait from another thread.
    """

    def __init__(self, device: str, backend: str = "inductor", fault: str | None = None,
                 limits: PoolLimits = PoolLimits(), seconds: float | None = None,
                 stop: threading.Event | None = None):
        self.device, self.backend, self.fault, self.limits = device, backend, fault, limits
        self.seconds = seconds if seconds is not None else limits.program_seconds
        self.stop = stop or threading.Event()
        self.ctx = multiprocessing.get_context("spawn")
        self.process = None
        self.conn = None
        self.starts = 0

    # -- the child's lifetime ----------------------------------------------
    def _start(self) -> None:
        self.conn, child = self.ctx.Pipe()
        self.process = self.ctx.Process(
            target=_serve, args=(child, self.device, self.backend, self.fault, self.limits.threads),
            name="dcefuzz-isolated", daemon=True)
        self.process.start()
        child.close()
        self.starts += 1
        message = self._receive(time.monotonic() + self.limits.start_seconds)
        if message is None or message[0] != "ready":
            detail = "did not start" if message is None else f"unexpected {message[0]!r}"
            self.close()
            raise RuntimeError(f"isolated judge {detail}")

    def _receive(self, deadline: float):
        """The child's next message; None if it died, a Death if a limit was hit."""
        while True:
            if self.stop.is_set():
                self.close()
                raise Aborted
            if self.conn.poll(self.limits.poll_seconds):
                try:
                    return self.conn.recv()
                except (EOFError, OSError):
                    self.process.join(5)
                    return None
            if not self.process.is_alive():
                self.process.join(5)
                return None
            if time.monotonic() > deadline:
                return Death(TIMEOUT, timeout_detail(self.seconds))
            if rss_kb(self.process.pid) > self.limits.memory_mb * 1024:
                return Death(CRASH, memory_detail(self.limits.memory_mb))

    def close(self) -> None:
        if self.process is None:
            return
        stop_child(self.process, self.conn, STOP_GRACE_S)
        self.process = self.conn = None

    def _kill(self) -> None:
        if self.process is not None and self.process.is_alive():
            self.process.kill()
        self.close()

    # -- one case -----------------------------------------------------------
    def run(self, case: Case) -> Death:
        if self.process is None:
            self._start()
        self.conn.send(("judge", case.to_json()))
        deadline = time.monotonic() + self.seconds
        after_eager = False
        while True:
            message = self._receive(deadline)
            if isinstance(message, Death):
                self._kill()
                return Death(message.kind, message.detail, after_eager)
            if message is None:
                exitcode = self.process.exitcode
                self.close()
                return Death(CRASH, died_detail(exitcode), after_eager)
            if message[0] == "eager":
                after_eager = True
            elif message[0] == "done":
                return Death(None, f"ran to completion ({message[1]})")

    def __call__(self, case: Case) -> Verdict:
        """The shrinker's judge: a death after eager is a divergence of its kind."""
        death = self.run(case)
        if death.kind is None:
            return Verdict(oracle.OK)
        if not death.after_eager:
            return Verdict(oracle.INVALID, reason=f"eager execution {death.line()}")
        return Verdict(oracle.OK, [Divergence(death.kind, 0, "process", death.detail)])

    def __enter__(self) -> IsolatedJudge:
        return self

    def __exit__(self, *exc) -> None:
        self._kill()


def probe(case: Case, device: str, backend: str = "inductor", fault: str | None = None,
          limits: PoolLimits = PoolLimits(), stop: threading.Event | None = None) -> str | None:
    """Run one case in a fresh process: None if it finished, else how it died
    (``"crash: process died: SIGSEGV"``, ``"timeout: program exceeded its time limit
    (120 s)"``, ...).

    This is how crash and timeout entries are replayed and confirmed: in this
    process they would take the caller down with them.  A death before the eager
    runs finished says nothing about the compiler: it reads ``"invalid: ..."``.
    """
    with IsolatedJudge(device, backend, fault, limits, stop=stop) as judge:
        death = judge.run(case)
    if death.kind and not death.after_eager:
        return f"{INVALID_DEATH}: eager execution {death.line()}"
    return death.line() if death.kind else None


# ------------------------------------------------------------------ shrinking

#: "[crash] program 7: process died: SIGSEGV" (a campaign's casualty) or
#: "[crash] binding 0, process: process died: SIGSEGV" (a shrunk one)
_DETAIL_LINE = re.compile(r"^\[[\w-]+\] [^:]*: (?P<detail>.*)$")


def divergence_of(entry: corpus.Entry) -> Divergence:
    """The divergence a crash or timeout entry records (its detail line, parsed)."""
    line = entry.detail[0] if entry.detail else ""
    m = _DETAIL_LINE.match(line)
    return Divergence(entry.kind, 0, "process", m.group("detail") if m else line)


def shrink_casualty(entry: corpus.Entry, limits: PoolLimits = PoolLimits(),
                    budget: ShrinkBudget | None = None, candidate_seconds: float | None = None,
                    stop: threading.Event | None = None,
                    log: Callable[[str], None] | None = None) -> corpus.Entry | None:
    """Shrink a crash or timeout entry; the reduced entry, or None if nothing smaller
    was confirmed.

    Candidates run in an ``IsolatedJudge`` (a timeout candidate gets
    ``candidate_seconds``, shorter than the campaign's limit, or shrinking a hang
    would take hours); the reduced case must then die the same way in a fresh
    process under the campaign's own limits.  Raises ``Aborted`` when ``stop`` is set.
    """
    budget = budget or ShrinkBudget(limits.casualty_shrink_calls, limits.casualty_shrink_seconds)
    if candidate_seconds is None:
        candidate_seconds = limits.casualty_candidate_seconds if entry.kind == TIMEOUT else limits.program_seconds
    target = divergence_of(entry)
    with IsolatedJudge(entry.device, entry.backend, entry.fault, limits, candidate_seconds, stop) as judge:
        result = shrink(entry.case, entry.kind, [target], entry.device, entry.backend, budget,
                        judge=judge, confirm=False)
    if result.case == entry.case:
        if log:
            log(f"{entry.kind} {entry.id}: nothing smaller died the same way "
                f"({result.oracle_calls} oracle calls, {result.seconds:.0f}s)")
        return None
    want = signature.bug_class(entry.kind, [target])
    for candidate in (canonical_case(result.case), result.case):
        died = probe(candidate, entry.device, entry.backend, entry.fault, limits, stop)
        if died is None:
            continue
        kind, detail = died.split(": ", 1)
        divs = [Divergence(kind, 0, "process", detail)]
        if kind == entry.kind and signature.bug_class(kind, divs) == want:
            sig = signature.of(kind, candidate, divs)
            record = {**result.record(), "confirmed": "fresh process",
                      "original_statements": (entry.shrink or {}).get("original_statements",
                                                                     entry.statements)}
            if log:
                log(f"shrunk {entry.kind} {entry.id}: {entry.statements} -> "
                    f"{len(candidate.program.body)} statements")
            return corpus.Entry(
                id=corpus.entry_id(kind, sig), kind=kind, signature=sig, seed=entry.seed,
                device=entry.device, backend=entry.backend, torch_version=entry.torch_version,
                case=candidate, hits=entry.hits, fault=entry.fault,
                # the stack is where the original program died; the reduced one dies
                # the same way, so it is kept
                detail=[d.line() for d in divs] + [ln for ln in entry.detail[1:] if ln.startswith("  at ")],
                found=entry.found, shrink=record)
    return None
