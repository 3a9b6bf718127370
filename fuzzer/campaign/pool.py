"""The worker pool: parallel, isolated, self-healing campaigns.

The parent only schedules, collects, deduplicates and saves (through the campaign's
``Session``); persistent ``spawn``-ed workers (``fuzzer.campaign.worker``) do the compiling.
A compiler bug may segfault, hang or eat memory; none of that may stop the campaign
or lose a finding, so the parent watches every worker:

* a worker that dies (a signal, or any exit) while holding a program makes that
  program a ``crash`` finding (with the signal);
* a worker past the per-program time limit is killed, and its program becomes a
  ``timeout`` finding;
* a worker over the memory cap is killed, and its program becomes a ``crash``
  finding ("memory cap");
* when the worker was shrinking a finding, what it was running is not the program
  (whose trial it survived) but a shrink candidate, which it announced first: the
  candidate becomes the ``crash`` or ``timeout`` finding, and the findings the trial
  confirmed (also reported first) are saved unshrunk, so neither the death nor the
  findings are lost;
* a worker whose program met a sticky error of its device (``fuzzer.internal.device_lost``:
  a CUDA kernel faulted, and every later CUDA call in the process raises it again) is
  replaced at once; the program is dcefuzz's own error, counted as such;
* a worker is recycled (stopped and replaced) after a number of programs, or when
  its memory has grown past a factor (1.1) of what it used once warm (after its
  first 20 programs), so memory stays flat over long campaigns: torch keeps a little
  per compiled program that no reset releases.

Each casualty is replaced at once, and its program saved at once as it was found,
so nothing is lost if the campaign dies next.  Then a thread of the parent shrinks
it (``fuzzer.isolation.deaths.shrink_casualty``: candidates run in a child that may die, the
result is confirmed in a fresh process) and replaces the saved entry with the
reduced one, merging with an entry of the same reduced signature if there is one.
One casualty is shrunk at a time; a few more may wait (``PoolLimits.casualty_queue``),
the rest stay saved unshrunk for ``dcefuzz shrink``.  At the end of a campaign that
ran its programs the shrink in progress is finished and the waiting ones are left
unshrunk; Ctrl-C abandons it.

A campaign with a time budget ends on time, whatever hangs: every time limit is cut
to the time left (a program's, a worker's shrink budget, sent with each program, and
the casualty shrink's), no program starts after the deadline, and at the deadline
nothing is waited for.  The workers still holding a program are killed: a program
still in its trial is not counted (``Stats.stopped``; the campaign state does not
mark it done, so ``--resume`` runs it again), one whose worker was shrinking its
findings counts, with the findings saved unshrunk as the trial confirmed them.  The
casualty shrink in progress is aborted (the entry stays saved unshrunk).  What is left
to do then takes at most ``PoolLimits.end_grace_seconds``.
"""

from __future__ import annotations

import itertools
import json
import os
import shutil
import tempfile
import time
from multiprocessing.connection import wait

from fuzzer.campaign.handle import Processes, WorkerHandle, stop_all
from fuzzer.campaign.casualties import CasualtyShrinker
from fuzzer.campaign.config import Config
from fuzzer.campaign.messages import Candidate, Done, Ready, Report, Tried, Triaging
from fuzzer.campaign.session import Finished, Session, Timing
from fuzzer.campaign.stats import Stats
from fuzzer.corpus import store
from fuzzer.corpus.entry import BadEntry, Entry, Origin
from fuzzer.internal import INTERNAL_ERROR, TRACEBACK_CHARS, WORKER, InternalError
from fuzzer.isolation import child, stacks
from fuzzer.isolation.process import (
    died_detail,
    memory_detail,
    rss_kb,
    timeout_detail,
)
from fuzzer.judge import contract
from fuzzer.judge.contract import CRASH, TIMEOUT, Divergence
from fuzzer.judge.observe import Gap
from fuzzer.limits import PoolLimits
from fuzzer.program.ir import Case

class WorkerStartError(RuntimeError):
    """Workers keep dying before they are ready: nothing would ever run."""


def _process_entry(kind: str, detail: str, case: Case, pseed: int, config: Config,
                   frames: list[str] = (), candidate: bool = False, threads: int | None = None) -> Entry:
    """The entry of a case whose worker died running it: the death is its one divergence.

    ``case`` is the program of seed ``pseed`` or, with ``candidate``, a shrink
    candidate of one of its findings (which a note says: that program itself does
    not die).
    """
    notes = ([f"  on a shrink candidate of a finding of seed {pseed}'s program, which ran without dying"]
             if candidate else [])
    origin = Origin(seed=pseed, device=config.device, backend=config.backend, fault=config.fault, threads=threads)
    return Entry.build(kind, case, [Divergence(kind, 0, "process", detail)], origin,
                       notes=notes + [f"  at {f}" for f in frames])


def _title(kind: str, detail: str, frames: list[str]) -> tuple[str, str, str] | None:
    """Casualties with one title, (kind, death, torch's innermost frame), are taken for
    one bug (None: too little to tell, as for a death with no frame of torch:
    ``stacks.torch_frame``)."""
    where = stacks.torch_frame(frames)
    return (kind, contract.normalise_message(detail), where) if where else None


def run_pool(session: Session, limits: PoolLimits = PoolLimits(), jobs: int = 1, devices: list[str] | None = None,
             launcher=None) -> Stats:
    """Run the campaign of ``session`` on ``jobs`` workers (one per device when
    ``devices`` is given), or on the workers ``launcher`` starts (default:
    :class:`Processes` here).

    What torch prints in the workers, and in the children the parent's own helpers
    start (the casualty shrinker's judges), goes to the folder's ``torch.log``."""
    folder = session.folder
    saved = os.environ.get(child.LOG_ENV)
    if folder is not None:
        os.environ[child.LOG_ENV] = str(folder.torch_log)
    try:
        log_path = str(folder.torch_log) if folder is not None else None
        launcher = launcher or Processes(session.config, limits, jobs, devices, log_path=log_path)
        return Pool(session, session.config, limits, launcher).run()
    finally:
        if saved is None:
            os.environ.pop(child.LOG_ENV, None)
        else:
            os.environ[child.LOG_ENV] = saved


def _entries(report: Report) -> tuple[tuple[Entry, ...], tuple[InternalError, ...]]:
    """The entries a worker reported, and dcefuzz's own error for each this process cannot
    read (a worker that runs another dcefuzz, say a Ray actor of an older install): its
    JSON kept in the error's text, so the campaign goes on and the finding is not lost."""
    entries, errors = [], []
    for raw in report.entries:
        try:
            entries.append(Entry.from_json(raw))
        except BadEntry as exc:
            errors.append(InternalError(WORKER, type(exc).__name__, f"a reported entry this campaign cannot read: {exc}",
                                        json.dumps(raw)[-TRACEBACK_CHARS:]))
    return tuple(entries), tuple(errors)


def _gap(report: Report) -> Gap | None:
    """Why the reported program is untested (None: it is not)."""
    return None if report.untested is None else Gap.from_json(report.untested)


def _as_tried(index: int, tried: Report | None, more: tuple[Entry, ...] = (),
              errors: tuple[InternalError, ...] = (), untried: str = INTERNAL_ERROR) -> Finished:
    """Program ``index`` cut short, as its trial reported it (``tried``; None: it had
    not, and its status is ``untried``), with ``more`` entries: its findings unshrunk
    (or untriaged), and none of what it reached."""
    if tried is None:
        return Finished(index, untried, more, errors=errors)
    entries, unread = _entries(tried)
    return Finished(index, tried.status, entries + more, tried.recompiles, _gap(tried), errors + unread)


class Pool:
    """One campaign's pool at work: its workers and what it knows of them, one
    handler per message a worker sends (``fuzzer.campaign.messages``), one per way a
    worker is lost, and :meth:`finish`, where every program's end goes to the session."""

    def __init__(self, session: Session, config: Config, limits: PoolLimits, launcher):
        self.session, self.config, self.limits, self.launcher = session, config, limits, launcher
        self.ends_at = session.ends_at()
        self.shrinker = (CasualtyShrinker(config, limits, session.log, session.seconds_left)
                         if config.shrink else None)
        self.stack_dir = tempfile.mkdtemp(prefix="dcefuzz-stacks-")
        self.started = itertools.count()
        self.workers = [self.start(i) for i in range(len(launcher.slots))]
        self.replaced = 0
        #: workers replaced since their device was lost (``InternalError.device_lost``)
        self.devices_lost = 0
        self.failed_starts = 0
        #: casualty title -> the entry that stands for it (see ``_title``)
        self.titles: dict[tuple[str, str, str], str] = {}
        self.handlers = {Ready: self.on_ready, Tried: self.on_tried, Triaging: self.on_triaging,
                         Candidate: self.on_candidate, Done: self.on_done}

    def run(self) -> Stats:
        interrupted = False
        try:
            while self.step():
                pass
        except KeyboardInterrupt:
            interrupted = True
            self.session.log("interrupted: stopping workers; unfinished programs stay unrun in the state")
        finally:
            self.close(interrupted)
        return self.session.stats

    def step(self) -> bool:
        """One round: hand out programs, take in messages, watch the workers (False: the campaign is over)."""
        session = self.session
        if session.out_of_time():
            self.stop_at_deadline()
            return False
        if not self.busy() and session.spent():
            return False
        self.assign()
        self.receive()
        for w in self.workers:
            w.pump()  # their stderr, to the log as it comes
        if session.out_of_time():
            return True  # a deadline cut to the campaign's end is no program's timeout
        self.watch()
        if self.shrinker is not None:
            self.adopt()
        session.tick(f", {self.launcher.status(self.workers)}, {self.replaced} replaced", self.details)
        return True

    def close(self, interrupted: bool) -> None:
        stop_all(self.workers)
        if self.shrinker is not None:
            # the shrink in progress may finish, but not past the deadline
            try:
                self.shrinker.finish(time.monotonic() if interrupted else self.ends_at)
            except KeyboardInterrupt:
                self.shrinker.finish(time.monotonic())
            self.adopt()
        shutil.rmtree(self.stack_dir, ignore_errors=True)
        self.session.checkpoint(self.details())
        self.launcher.close()

    # -- the workers

    def start(self, slot: int) -> WorkerHandle:
        return self.launcher.start(slot, os.path.join(self.stack_dir, f"worker-{next(self.started)}.stack"))

    def replace(self, w: WorkerHandle) -> WorkerHandle:
        self.replaced += 1
        w.forget_stack()
        fresh = self.start(w.slot)
        self.workers[self.workers.index(w)] = fresh
        return fresh

    def busy(self) -> int:
        return sum(1 for w in self.workers if w.index is not None)

    def assign(self) -> None:
        for w in self.workers:
            if w.ready and w.index is None and not self.session.spent(in_flight=self.busy()):
                w.assign(self.session.next_program(), self.limits, self.ends_at, self.session.held())

    def receive(self) -> None:
        """Handle what the workers said before the poll ran out; a closed pipe is a death."""
        conns = {w.conn: w for w in self.workers}
        left = self.session.seconds_left()
        poll = self.limits.poll_seconds if left is None else max(0.0, min(self.limits.poll_seconds, left))
        for conn in wait(list(conns), timeout=poll):
            w = conns[conn]
            try:
                message = w.receive()
            except (EOFError, OSError):
                w.process.join(5)
                self.casualty(w, CRASH, died_detail(w.process.exitcode, w.words()))
                continue
            self.handlers[type(message)](w, message)

    def watch(self) -> None:
        """Kill the workers past their time or over the memory cap (a dead worker's pipe
        reads as closed, so deaths are handled in ``receive``)."""
        now = time.monotonic()
        for w in list(self.workers):
            if now > w.deadline and (w.index is not None or not w.ready):
                detail = (timeout_detail(self.limits.program_seconds) if w.ready
                          else f"start exceeded {self.limits.start_seconds:.0f}s")
                self.casualty(w, TIMEOUT, detail, alive=True)
            elif rss_kb(w.process.pid) > self.limits.memory_mb * 1024:
                self.casualty(w, CRASH, memory_detail(self.limits.memory_mb), alive=True)

    def details(self) -> dict:
        """The pool's part of each stats line."""
        return {"workers_alive": sum(1 for w in self.workers if w.process.is_alive()),
                "workers_replaced": self.replaced, "devices_lost": self.devices_lost,
                "worker_rss_mb": [round(w.rss_kb / 1024) for w in self.workers]}

    # -- what a worker says

    def on_ready(self, w: WorkerHandle, message: Ready) -> None:
        w.ready = True

    def on_tried(self, w: WorkerHandle, message: Tried) -> None:
        w.tried = message.report
        w.limit(self.limits, self.ends_at)

    def on_triaging(self, w: WorkerHandle, message: Triaging) -> None:
        w.tried, w.candidate, w.triaging = message.report, None, True
        w.limit(self.limits, self.ends_at, extra=self.config.triage_budget.seconds)

    def on_candidate(self, w: WorkerHandle, message: Candidate) -> None:
        # each candidate is a program run of its own, with its own time limit
        w.candidate = message.case
        w.limit(self.limits, self.ends_at)

    def on_done(self, w: WorkerHandle, message: Done) -> None:
        """The program is over; the worker is recycled after a number of programs or
        when its memory has grown past a factor of what it used once warm."""
        report, limits = message.report, self.limits
        entries, unread = _entries(report)
        errors = tuple(report.internal_errors()) + unread
        self.finish(w, Finished(message.index, report.status, entries, report.recompiles, _gap(report),
                                errors, report.reached,
                                Timing.of(report.trial_seconds, report.seconds)))
        w.programs += 1
        lost = next((e for e in errors if e.device_lost), None)
        if lost is not None:
            # a sticky CUDA error: every later program of this worker would raise it
            # again, as dcefuzz's own error, and be counted without being tested
            self.devices_lost += 1
            self.session.log(f"[{self.session.elapsed():6.0f}s] program {message.index}: the worker's device is "
                             f"lost ({lost.type}: {lost.message}); the worker is replaced")
            w.stop()
            self.replace(w)
            return
        w.rss_kb = report.rss_kb
        if w.programs == limits.recycle_baseline_programs:
            w.base_rss_kb = report.rss_kb
        grown = w.base_rss_kb and report.rss_kb > limits.recycle_growth * w.base_rss_kb
        if w.programs >= limits.recycle_after or grown:
            w.stop()
            self.replace(w)

    def finish(self, w: WorkerHandle, program: Finished) -> list[str | None]:
        """The one way a program's end goes to the session; the worker holds it no more."""
        paths = self.session.finished(program)
        w.release()
        return paths

    # -- how a worker is lost

    def casualty(self, w: WorkerHandle, kind: str, detail: str, alive: bool = False) -> None:
        """The worker is gone (or, ``alive``, about to be killed); what it was running (its
        program, or the shrink candidate it announced) becomes a finding, or a hit of the
        entry with the same title, beside the findings it had reported; start another."""
        frames = w.stack(ask=alive) if w.index is not None else []
        w.kill()
        if w.index is None:
            if not w.ready:
                self.failed_start(w, detail)
        elif kind == CRASH and (w.process.exitcode or 0) > 0:
            self.worker_exit(w, detail, frames)
        elif w.triaging:
            self.triage_death(w, kind, detail)
        else:
            self.program_death(w, kind, detail, frames)
        self.replace(w)

    def failed_start(self, w: WorkerHandle, detail: str) -> None:
        self.failed_starts += 1
        self.session.log(f"worker {w.slot} failed to start ({detail})")
        if self.failed_starts > self.limits.max_failed_starts:
            raise WorkerStartError(f"{self.failed_starts} workers failed to start; last: {detail}")

    def worker_exit(self, w: WorkerHandle, detail: str, frames: list[str]) -> None:
        """An exit status, not a signal or the memory cap: an exception of dcefuzz's own
        code reached the top of the worker; ours, never a finding."""
        error = InternalError(WORKER, "WorkerExit", f"the worker ended: {detail}", "\n".join(frames))
        self.finish(w, _as_tried(w.index, w.tried, errors=(error,)))

    def triage_death(self, w: WorkerHandle, kind: str, detail: str) -> None:
        """A probe under a switch or the bisector, not the program as compiled, died."""
        index = w.index
        self.finish(w, _as_tried(index, w.tried))
        self.session.log(f"[{self.session.elapsed():6.0f}s] program {index}: {kind} while triaging "
                         f"({detail}); its findings saved untriaged")

    def program_death(self, w: WorkerHandle, kind: str, detail: str, frames: list[str]) -> None:
        """The worker died in its program's trial, or shrinking its findings (the program
        then counts as tried, with its findings unshrunk): the death is one more finding."""
        session, index = self.session, w.index
        on = "a shrink candidate" if w.candidate is not None else "its program"
        title = _title(kind, detail, frames)
        known = self.titles.get(title) if title else None
        if known and os.path.exists(known):
            hit = store.load(known)
            hit.hits = 1
            self.finish(w, _as_tried(index, w.tried, (hit,), untried=kind))
            session.log(f"[{session.elapsed():6.0f}s] program {index}: {kind} on {on} at "
                        f"{stacks.innermost(frames)}, a hit of {known}")
            return
        entry = _process_entry(kind, detail, w.running(), w.pseed, self.config, frames,
                               threads=self.limits.threads, candidate=w.candidate is not None)
        path = self.finish(w, _as_tried(index, w.tried, (entry,), untried=kind))[-1]
        if title and path is not None:
            self.titles[title] = path
        if self.shrinker is not None and path is not None and not self.shrinker.submit(entry, path):
            session.log(f"{kind} {entry.id} saved unshrunk: {self.limits.casualty_queue} already wait")

    def stop_at_deadline(self) -> None:
        """Kill the workers still holding a program: a program still in its trial is
        not counted (a resumed campaign runs it again); one whose findings were being
        shrunk counts, with its findings as the trial confirmed them."""
        session = self.session
        for w in self.workers:
            if w.index is None:
                continue
            index = w.index
            w.kill()
            if w.tried is None:
                session.stats.stopped += 1
                w.release()
            else:
                self.finish(w, _as_tried(index, w.tried))
                session.log(f"[{session.elapsed():6.0f}s] program {index}: shrinking cut short by "
                            "the deadline, its findings saved unshrunk")
        if session.stats.stopped:
            session.log(f"[{session.elapsed():6.0f}s] time is up: {session.stats.stopped} programs "
                        "stopped unfinished (--resume runs them again)")

    def adopt(self) -> None:
        """Take in the casualties the shrinker has reduced; a title follows its entry."""
        for old, new in self.shrinker.adopt(self.session):
            for title, path in self.titles.items():
                if path == old:
                    self.titles[title] = new
