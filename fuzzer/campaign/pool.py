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
* a worker is recycled (stopped and replaced) after a number of programs, or when
  its memory has grown past a factor (1.1) of what it used once warm (after its
  first 20 programs), so memory stays flat over long campaigns: torch keeps a little
  per compiled program that no reset releases.

Each casualty is replaced at once, and its program saved at once as it was found,
so nothing is lost if the campaign dies next.  Then a thread of the parent shrinks
it (``fuzzer.isolation.judge.shrink_casualty``: candidates run in a child that may die, the
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
import os
import shutil
import tempfile
import time
from multiprocessing.connection import wait

from fuzzer.campaign.handle import Processes, WorkerHandle, stop_all
from fuzzer.campaign.casualties import CasualtyShrinker
from fuzzer.campaign.config import Budget, Config
from fuzzer.campaign.session import Session
from fuzzer.campaign.state import CampaignFolder, Shard
from fuzzer.campaign.stats import Stats
from fuzzer.corpus import store
from fuzzer.corpus.entry import Entry
from fuzzer.internal import INTERNAL_ERROR, WORKER, InternalError
from fuzzer.isolation import child, stacks
from fuzzer.isolation.process import (
    died_detail,
    memory_detail,
    rss_kb,
    timeout_detail,
)
from fuzzer.judge import contract
from fuzzer.judge.contract import CRASH, TIMEOUT, Divergence
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
    return Entry.build(kind, case, [Divergence(kind, 0, "process", detail)], seed=pseed,
                       device=config.device, backend=config.backend, fault=config.fault,
                       notes=notes + [f"  at {f}" for f in frames], threads=threads)


def _title(kind: str, detail: str, frames: list[str]) -> tuple[str, str, str] | None:
    """Casualties with one title, (kind, death, torch's innermost frame), are taken for
    one bug (None: too little to tell, as for a death with no frame of torch:
    ``stacks.torch_frame``)."""
    where = stacks.torch_frame(frames)
    return (kind, contract.normalise_message(detail), where) if where else None


def run_pool(config: Config, budget: Budget, jobs: int = 1, devices: list[str] | None = None,
             limits: PoolLimits = PoolLimits(), shard: Shard = Shard(),
             folder: CampaignFolder | None = None, resume: bool = False,
             log=None, progress=None, launcher=None) -> Stats:
    """Run a campaign on ``jobs`` workers (one per device when ``devices`` is given),
    or on the workers ``launcher`` starts (default: :class:`Processes` here).

    What torch prints in the workers, and in the children the parent's own helpers
    start (the casualty shrinker's judges), goes to the folder's ``torch.log``."""
    saved = os.environ.get(child.LOG_ENV)
    if folder is not None:
        os.environ[child.LOG_ENV] = str(folder.torch_log)
    try:
        return _run_pool(config, budget, jobs, devices, limits, shard, folder, resume, log, progress, launcher)
    finally:
        if saved is None:
            os.environ.pop(child.LOG_ENV, None)
        else:
            os.environ[child.LOG_ENV] = saved


def _run_pool(config, budget, jobs, devices, limits, shard, folder, resume, log, progress, launcher) -> Stats:
    session = Session(config, budget, shard, folder, resume, log, progress)
    ends_at = session.ends_at()
    shrinker = CasualtyShrinker(config, limits, session.log, session.seconds_left) if config.shrink else None
    log_path = str(folder.torch_log) if folder is not None else None
    launcher = launcher or Processes(config, limits, jobs, devices, log_path=log_path)
    stack_dir = tempfile.mkdtemp(prefix="dcefuzz-stacks-")
    started = itertools.count()

    def start(slot: int) -> WorkerHandle:
        return launcher.start(slot, os.path.join(stack_dir, f"worker-{next(started)}.stack"))

    workers = [start(i) for i in range(len(launcher.slots))]
    replaced = 0
    #: casualty title -> the entry that stands for it (see ``_title``)
    titles: dict[tuple[str, str, str], str] = {}

    def replace(w: WorkerHandle) -> WorkerHandle:
        nonlocal replaced
        replaced += 1
        w.forget_stack()
        fresh = start(w.slot)
        workers[workers.index(w)] = fresh
        return fresh

    failed_starts = 0
    interrupted = False

    def adopt() -> None:
        for old, new in shrinker.adopt(session):
            for title, path in titles.items():
                if path == old:
                    titles[title] = new

    def details() -> dict:
        """The pool's part of each stats line."""
        return {"workers_alive": sum(1 for w in workers if w.process.is_alive()),
                "workers_replaced": replaced,
                "worker_rss_mb": [round(w.rss_kb / 1024) for w in workers]}

    def casualty(w: WorkerHandle, kind: str, detail: str, alive: bool = False) -> None:
        """The worker is gone (or, ``alive``, about to be killed); what it was running (its
        program, or the shrink candidate it announced) becomes a finding, or a hit of the
        entry with the same title, beside the findings it had reported; start another."""
        nonlocal failed_starts
        frames = w.stack(ask=alive) if w.index is not None else []
        w.kill()
        if kind == CRASH and w.index is not None and (w.process.exitcode or 0) > 0:
            # an exit status, not a signal or the memory cap: an exception of dcefuzz's own
            # code reached the top of the worker; ours, never a finding
            t = w.tried
            error = InternalError(WORKER, "WorkerExit", f"the worker ended: {detail}", "\n".join(frames))
            session.finished(w.index, t.status if t else INTERNAL_ERROR,
                             [Entry.from_json(e) for e in t.entries] if t else [],
                             t.recompiles if t else 0, t.untested if t else None, [error])
            w.release()
            replace(w)
            return
        if w.index is not None and w.triaging:
            # a probe under a switch or the bisector, not the program as compiled, died
            t = w.tried
            session.finished(w.index, t.status, [Entry.from_json(e) for e in t.entries],
                             t.recompiles, t.untested)
            session.log(f"[{session.elapsed():6.0f}s] program {w.index}: {kind} while triaging "
                        f"({detail}); its findings saved untriaged")
            w.release()
        elif w.index is not None:
            # a worker that was shrinking had finished its trial: the program counts as
            # tried, with its findings unshrunk, and the death as one more finding
            tried = w.tried
            entries = [Entry.from_json(e) for e in tried.entries] if tried else []
            status, recompiles, untested = ((tried.status, tried.recompiles, tried.untested) if tried
                                            else (kind, 0, None))
            on = "a shrink candidate" if w.candidate is not None else "its program"
            title = _title(kind, detail, frames)
            known = titles.get(title) if title else None
            if known and os.path.exists(known):
                hit = store.load(known)
                hit.hits = 1
                session.finished(w.index, status, entries + [hit], recompiles, untested)
                session.log(f"[{session.elapsed():6.0f}s] program {w.index}: {kind} on {on} at "
                            f"{stacks.innermost(frames)}, a hit of {known}")
            else:
                entry = _process_entry(kind, detail, w.running(), w.pseed, config, frames, threads=limits.threads,
                                       candidate=w.candidate is not None)
                path = session.finished(w.index, status, entries + [entry], recompiles, untested)[-1]
                if title and path is not None:
                    titles[title] = path
                if shrinker is not None and path is not None and not shrinker.submit(entry, path):
                    session.log(f"{kind} {entry.id} saved unshrunk: {limits.casualty_queue} already wait")
            w.release()
        elif not w.ready:
            failed_starts += 1
            session.log(f"worker {w.slot} failed to start ({detail})")
            if failed_starts > limits.max_failed_starts:
                raise WorkerStartError(f"{failed_starts} workers failed to start; last: {detail}")
        replace(w)

    def stop_at_deadline() -> None:
        """Kill the workers still holding a program: a program still in its trial is
        not counted (a resumed campaign runs it again); one whose findings were being
        shrunk counts, with its findings as the trial confirmed them."""
        for w in workers:
            if w.index is None:
                continue
            w.kill()
            if w.tried is None:
                session.stats.stopped += 1
            else:
                t = w.tried
                session.finished(w.index, t.status, [Entry.from_json(e) for e in t.entries],
                                 t.recompiles, t.untested)
                session.log(f"[{session.elapsed():6.0f}s] program {w.index}: shrinking cut short by "
                            "the deadline, its findings saved unshrunk")
            w.release()
        if session.stats.stopped:
            session.log(f"[{session.elapsed():6.0f}s] time is up: {session.stats.stopped} programs "
                        "stopped unfinished (--resume runs them again)")

    try:
        while True:
            if session.out_of_time():
                stop_at_deadline()
                break
            busy = [w for w in workers if w.index is not None]
            stopping = session.spent(in_flight=len(busy))
            if stopping and not busy:
                break
            for w in workers:
                if w.ready and w.index is None and not session.spent(
                        in_flight=sum(1 for x in workers if x.index is not None)):
                    w.assign(session.next_program(), limits, ends_at, session.full())
            conns = {w.conn: w for w in workers}
            left = session.seconds_left()
            poll = limits.poll_seconds if left is None else max(0.0, min(limits.poll_seconds, left))
            for conn in wait(list(conns), timeout=poll):
                w = conns[conn]
                try:
                    message = conn.recv()
                except (EOFError, OSError):
                    w.process.join(5)
                    casualty(w, CRASH, died_detail(w.process.exitcode, w.words()))
                    continue
                if message[0] == "ready":
                    w.ready = True
                elif message[0] == "tried":
                    w.tried = message[2]
                    w.limit(limits, ends_at)
                elif message[0] == "triaging":
                    w.tried, w.candidate, w.triaging = message[2], None, True
                    w.limit(limits, ends_at, extra=config.triage_budget.seconds)
                elif message[0] == "candidate":
                    # each candidate is a program run of its own, with its own time limit
                    w.candidate = message[2]
                    w.limit(limits, ends_at)
                elif message[0] == "done":
                    _, index, report = message
                    entries = [Entry.from_json(e) for e in report.entries]
                    session.finished(index, report.status, entries, report.recompiles, report.untested,
                                     report.internal_errors(), report.reached, tuple(report.signal))
                    w.release()
                    w.programs += 1
                    w.rss_kb = report.rss_kb
                    if w.programs == limits.recycle_baseline_programs:
                        w.base_rss_kb = report.rss_kb
                    grown = w.base_rss_kb and report.rss_kb > limits.recycle_growth * w.base_rss_kb
                    if w.programs >= limits.recycle_after or grown:
                        w.stop()
                        replace(w)
            for w in workers:
                w.pump()  # their stderr, to the log as it comes
            now = time.monotonic()
            if session.out_of_time():
                continue  # a deadline cut to the campaign's end is no program's timeout
            # a dead worker's pipe reads as closed, so deaths are handled above
            for w in list(workers):
                if now > w.deadline and (w.index is not None or not w.ready):
                    detail = (timeout_detail(limits.program_seconds) if w.ready
                              else f"start exceeded {limits.start_seconds:.0f}s")
                    casualty(w, TIMEOUT, detail, alive=True)
                elif rss_kb(w.process.pid) > limits.memory_mb * 1024:
                    casualty(w, CRASH, memory_detail(limits.memory_mb), alive=True)
            if shrinker is not None:
                adopt()
            session.tick(f", {launcher.status(workers)}, {replaced} replaced", details)
    except KeyboardInterrupt:
        interrupted = True
        session.log("interrupted: stopping workers; unfinished programs stay unrun in the state")
    finally:
        stop_all(workers)
        if shrinker is not None:
            # the shrink in progress may finish, but not past the deadline
            try:
                shrinker.finish(time.monotonic() if interrupted else ends_at)
            except KeyboardInterrupt:
                shrinker.finish(time.monotonic())
            adopt()
        shutil.rmtree(stack_dir, ignore_errors=True)
        session.checkpoint(details())
        launcher.close()
    return session.stats
