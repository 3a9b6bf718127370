"""Isolation: running a case in a child process that may die.

A compiler bug can segfault, hang or exhaust memory.  In the process that meets it,
such a bug ends everything; seen from a parent, it is an observation like any other:
the child died (with a signal), outlived its time limit, or passed a memory cap.
This module turns those deaths into verdicts, so crash and timeout findings can be
replayed and shrunk with the same machinery as the others:

* ``probe`` runs one case in a fresh process and says how it died (replay, the
  confirmation of a casualty, the stage walk of its triage), with a checked heap
  where asked (``fuzzer.isolation.heapcheck``);
* ``IsolatedJudge`` is the shrinker's oracle for crash and timeout findings: a child
  that stays warm across the candidates it survives (most of them), replaced after
  each one that kills it;

A death counts only after eager execution finished in the child: a case whose eager
run kills the process is invalid, not a compiler bug.  ``fuzzer.reduce.casualty``
shrinks crash and timeout entries with the judge.
"""

from __future__ import annotations

import multiprocessing
import threading
import time
from dataclasses import dataclass

from fuzzer.isolation import child, heapcheck
from fuzzer.isolation.said import Said
from fuzzer.isolation.process import (
    STOP_GRACE_S,
    Aborted,
    died_detail,
    memory_detail,
    rss_kb,
    stop_child,
    timeout_detail,
)
from fuzzer.judge import contract
from fuzzer.judge.contract import CRASH, TIMEOUT, Divergence, Verdict
from fuzzer.judge.death import dies_so
from fuzzer.judge.reading import Reading, read_verdict
from fuzzer.limits import PoolLimits
from fuzzer.program.ir import Case

#: the verdict of a candidate whose judging dcefuzz's own code broke: not the bug
INTERNAL_VERDICT = "internal-error"
#: what a child says of a case it ran to completion that was not wholly compiled
UNTESTED = "untested"
#: what a child says of a case whose compiled run raised (compiling or running): an
#: error that may come before the death looked for, and hide it
RAISED = "raised"


def survivor_status(verdict: Verdict) -> str:
    """What a run the child survived says of a death looked for: ``contract.OK`` only
    where it was judged whole and clean of errors; else why it says nothing (eager
    failed or disagreed with itself, the compiled run raised, not wholly compiled).
    The ladder every replay reads by (``fuzzer.judge.reading``): no verdict holds a
    death, so a crash's reads only how far the run got."""
    said = read_verdict(CRASH, "", verdict)
    return {Reading.NOT_JUDGED: verdict.status, Reading.RAISED: RAISED,
            Reading.UNTESTED: UNTESTED}.get(said.reading, contract.OK)


class _JudgeHandler:
    """The child's work: for each ("judge", case) the eager runs, then ("eager",),
    then the compiled runs and the judgement, then ("done", status)."""

    def __init__(self, device: str, backend: str):
        self.device, self.backend = device, backend

    def load(self) -> None:
        from fuzzer.judge import trial  # noqa: F401 - loaded before "ready"

    def __call__(self, message: tuple, send) -> None:
        from fuzzer.internal import INTERNAL_ERROR, SHRINK, InternalError
        from fuzzer.judge.execute import fresh_compile_state, run_compiled, run_eager
        from fuzzer.judge.trial import judge_case

        try:
            case = Case.from_json(message[1])
            fresh_compile_state()
            runs = run_eager(case, self.device)
            send(("eager",))
            if any(br.eager.failure for br in runs):
                send(("done", contract.INVALID))
                return
            run_compiled(case, self.device, runs, backend=self.backend)
            status = survivor_status(judge_case(case, runs, self.device))
        except Exception as exc:  # noqa: BLE001 - dcefuzz's own error: said, never a death
            send(("done", INTERNAL_ERROR, InternalError.of(SHRINK, exc).line()))
            return
        send(("done", status))


@dataclass(frozen=True)
class Death:
    """How an isolated run ended: ``kind`` is None when the child survived."""

    kind: str | None
    detail: str
    #: the child finished eager execution before it died (else the case is invalid)
    after_eager: bool = True
    #: the child survived, but dcefuzz's own code raised in it (``fuzzer.internal``)
    internal: bool = False
    #: what a survivor's run said (``survivor_status``); None for a death
    status: str | None = None

    @property
    def judged(self) -> bool:
        """A survivor whose run said the death is absent: judged whole and clean of
        errors, not one that eager failed, that raised another way, that was not wholly
        compiled, nor one dcefuzz itself failed."""
        return not self.internal and self.status == contract.OK

    def line(self) -> str:
        return f"{self.kind}: {self.detail}" if self.kind else self.detail

    def confirms(self, bug_class: contract.BugClass) -> bool:
        """Whether this death, of a fresh process, confirms a finding of ``bug_class``:
        it died after its eager runs, so as the class says (``death.dies_so``, on the
        classes' texts: the same death of the same kind, or, where either is a heap
        corruption, any death a corrupted heap is met by)."""
        return (self.kind is not None and self.after_eager
                and dies_so(bug_class.text, contract.bug_class(self.kind, [self.divergence()]).text))

    def divergence(self) -> Divergence:
        return Divergence(self.kind, 0, "process", self.detail)


class IsolatedJudge:
    """Run cases one after another in a child process that may die.

    The child is reused across candidates it survives, so only the candidates that
    kill it pay a process start.  ``seconds`` is the time limit of one case (a case
    still running past it is a timeout); ``stop`` aborts a wait from another thread;
    ``checked``: each child starts with glibc's heap checks turned up
    (``fuzzer.isolation.heapcheck``), for a process that confirms a death.
    """

    def __init__(self, device: str, backend: str = "inductor", fault: str | None = None,
                 limits: PoolLimits = PoolLimits(), seconds: float | None = None,
                 stop: threading.Event | None = None, checked: bool = False):
        self.device, self.backend, self.fault, self.limits = device, backend, fault, limits
        self.checked = checked
        self.seconds = seconds if seconds is not None else limits.program_seconds
        self.stop = stop or threading.Event()
        self.ctx = multiprocessing.get_context("spawn")
        self.process = None
        self.conn = None
        #: the child's stderr, read back to class its death (a heap corruption's words)
        self.said: Said | None = None
        self.starts = 0

    # -- the child's lifetime ----------------------------------------------
    def _start(self) -> None:
        self.conn, child_conn = self.ctx.Pipe()
        self.said = Said()
        self.process = self.ctx.Process(
            target=child.serve, args=(child_conn, _JudgeHandler(self.device, self.backend), self.fault,
                                      self.limits.threads, None, None, self.said.path),
            name="dcefuzz-isolated", daemon=True)
        with child.environment(heapcheck.environment() if self.checked else {}):
            self.process.start()
        child_conn.close()
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
                self._kill()  # at once: the child may be deep in a compile that hangs
                raise Aborted
            self.said.pump()
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
        self.said.close()
        self.process = self.conn = self.said = None

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
                exitcode, said = self.process.exitcode, self.said.tail()
                self.close()
                return Death(CRASH, died_detail(exitcode, said), after_eager)
            if message[0] == "eager":
                after_eager = True
            elif message[0] == "done":
                said = f": {message[2]}" if len(message) > 2 else ""
                return Death(None, f"ran to completion ({message[1]}{said})", internal=len(message) > 2,
                             status=message[1])

    def __call__(self, case: Case) -> Verdict:
        """The shrinker's judge: a death after eager is a divergence of its kind."""
        death = self.run(case)
        if death.internal:
            return Verdict(INTERNAL_VERDICT, reason=death.detail)
        if death.kind is None:
            return Verdict(contract.OK)
        if not death.after_eager:
            return Verdict(contract.INVALID, reason=f"eager execution {death.line()}")
        return Verdict(contract.OK, [death.divergence()])

    def __enter__(self) -> IsolatedJudge:
        return self

    def __exit__(self, *exc) -> None:
        self._kill()


def probe(case: Case, device: str, backend: str = "inductor", fault: str | None = None,
          limits: PoolLimits = PoolLimits(), stop: threading.Event | None = None, checked: bool = False) -> Death:
    """Run one case in a fresh process and say how it ended (``checked``: with glibc's
    heap checks turned up, ``fuzzer.isolation.heapcheck``).

    This is how crash and timeout entries are replayed and confirmed: in this
    process they would take the caller down with them.  A death before the eager
    runs finished (``after_eager`` false) says nothing about the compiler.
    """
    with IsolatedJudge(device, backend, fault, limits, stop=stop, checked=checked) as judge:
        return judge.run(case)
