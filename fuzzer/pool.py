"""The worker pool: parallel, isolated, self-healing campaigns.

The parent only schedules, collects, deduplicates and saves (through the campaign's
``Session``); persistent ``spawn``-ed workers (``fuzzer.worker``) do the compiling.
A compiler bug may segfault, hang or eat memory; none of that may stop the campaign
or lose a finding, so the parent watches every worker:

* a worker that dies (a signal, or any exit) while holding a program makes that
  program a ``crash`` finding (with the signal);
* a worker past the per-program time limit is killed, and its program becomes a
  ``timeout`` finding;
* a worker over the memory cap is killed, and its program becomes a ``crash``
  finding ("memory cap");
* a worker is recycled (stopped and replaced) after a number of programs, or when
  its memory has grown past a factor of what it used after its first program, so
  memory stays flat over long campaigns.

Each casualty is replaced at once.  Crash and timeout findings are saved unshrunk:
shrinking them needs a fresh process per oracle call, which the pool does not do yet.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import time
from multiprocessing.connection import wait

from fuzzer import corpus, signature, worker
from fuzzer.campaign import Budget, Config, Session, Stats
from fuzzer.generate import generate
from fuzzer.limits import PoolLimits
from fuzzer.state import CampaignFolder, Shard

CRASH = "crash"
TIMEOUT = "timeout"
PROCESS_KINDS = (CRASH, TIMEOUT)


class WorkerStartError(RuntimeError):
    """Workers keep dying before they are ready: nothing would ever run."""


class _Worker:
    """The parent's handle on one worker process."""

    def __init__(self, ctx, config: Config, limits: PoolLimits, slot: int, device_index: str | None,
                 compile_threads: int = 1):
        self.slot = slot
        self.conn, child = ctx.Pipe()
        env_key = "CUDA_VISIBLE_DEVICES"
        saved = os.environ.get(env_key)
        if device_index is not None:
            os.environ[env_key] = device_index  # inherited by the spawned child at start
        try:
            self.process = ctx.Process(target=worker.serve,
                                       args=(child, config, limits.threads, compile_threads),
                                       name=f"dcefuzz-worker-{slot}", daemon=True)
            self.process.start()
        finally:
            if device_index is not None:
                if saved is None:
                    os.environ.pop(env_key, None)
                else:
                    os.environ[env_key] = saved
        child.close()
        self.ready = False
        self.deadline = time.monotonic() + limits.start_seconds
        self.index: int | None = None
        self.pseed: int | None = None
        self.programs = 0
        self.base_rss_kb = 0
        self.rss_kb = 0

    def assign(self, index: int, pseed: int, limits: PoolLimits) -> None:
        self.index, self.pseed = index, pseed
        self.deadline = time.monotonic() + limits.program_seconds
        self.conn.send(("run", index, pseed))

    def kill(self) -> None:
        if self.process.is_alive():
            self.process.kill()
        self.process.join(5)
        self.conn.close()

    def stop(self) -> None:
        try:
            self.conn.send(("stop",))
        except (OSError, BrokenPipeError):
            pass
        self.process.join(10)
        if self.process.is_alive():
            self.process.kill()
            self.process.join(5)
        self.conn.close()


def _process_entry(kind: str, detail: str, index: int, pseed: int, config: Config) -> corpus.Entry:
    case = generate(pseed)
    sig = f"{kind}|{signature.normalise_message(detail)} :: {signature.normal_form(case.program)}"
    return corpus.Entry(
        id=corpus.entry_id(kind, sig), kind=kind, signature=sig, seed=pseed, device=config.device,
        backend=config.backend, torch_version=corpus.torch_version(), case=case,
        detail=[f"[{kind}] program {index}: {detail}"], fault=config.fault)


def _signal_name(exitcode: int | None) -> str:
    if exitcode is not None and exitcode < 0:
        try:
            return signal.Signals(-exitcode).name
        except ValueError:
            return f"signal {-exitcode}"
    return f"exit code {exitcode}"


def run_pool(config: Config, budget: Budget, jobs: int = 1, devices: list[str] | None = None,
             limits: PoolLimits = PoolLimits(), shard: Shard = Shard(),
             folder: CampaignFolder | None = None, resume: bool = False,
             log=None, progress=None) -> Stats:
    """Run a campaign on ``jobs`` workers (one per device when ``devices`` is given)."""
    session = Session(config, budget, shard, folder, resume, log, progress)
    ctx = multiprocessing.get_context("spawn")
    slots = [str(d) for d in devices] if devices else [None] * jobs
    # the cores are shared out: each worker's Inductor compiles kernels on its share
    compile_threads = max(1, (os.cpu_count() or 1) // len(slots))
    workers = [_Worker(ctx, config, limits, i, d, compile_threads) for i, d in enumerate(slots)]
    replaced = 0

    def replace(w: _Worker) -> _Worker:
        nonlocal replaced
        replaced += 1
        fresh = _Worker(ctx, config, limits, w.slot, slots[w.slot], compile_threads)
        workers[workers.index(w)] = fresh
        return fresh

    failed_starts = 0

    def casualty(w: _Worker, kind: str, detail: str) -> None:
        """The worker is gone; its program (if any) becomes a finding; start another."""
        nonlocal failed_starts
        w.kill()
        if w.index is not None:
            entry = _process_entry(kind, detail, w.index, w.pseed, config)
            session.finished(w.index, kind, [entry])
        elif not w.ready:
            failed_starts += 1
            session.log(f"worker {w.slot} failed to start ({detail})")
            if failed_starts > limits.max_failed_starts:
                raise WorkerStartError(f"{failed_starts} workers failed to start; last: {detail}")
        replace(w)

    try:
        while True:
            busy = [w for w in workers if w.index is not None]
            stopping = session.spent(in_flight=len(busy))
            if stopping and not busy:
                break
            for w in workers:
                if w.ready and w.index is None and not session.spent(
                        in_flight=sum(1 for x in workers if x.index is not None)):
                    w.assign(*session.next_program(), limits)
            conns = {w.conn: w for w in workers}
            for conn in wait(list(conns), timeout=limits.poll_seconds):
                w = conns[conn]
                try:
                    message = conn.recv()
                except (EOFError, OSError):
                    w.process.join(5)
                    casualty(w, CRASH, f"worker died: {_signal_name(w.process.exitcode)}")
                    continue
                if message[0] == "ready":
                    w.ready = True
                elif message[0] == "shrinking":
                    w.deadline = time.monotonic() + limits.program_seconds + message[2]
                elif message[0] == "done":
                    _, index, report = message
                    entries = [corpus.Entry.from_json(e) for e in report.entries]
                    session.finished(index, report.status, entries)
                    w.index = w.pseed = None
                    w.programs += 1
                    w.rss_kb = report.rss_kb
                    if w.programs == 1:
                        w.base_rss_kb = report.rss_kb
                    grown = w.base_rss_kb and report.rss_kb > limits.recycle_growth * w.base_rss_kb
                    if w.programs >= limits.recycle_after or grown:
                        w.stop()
                        replace(w)
            now = time.monotonic()
            # a dead worker's pipe reads as closed, so deaths are handled above
            for w in list(workers):
                if now > w.deadline:
                    what = "program" if w.ready else "start"
                    limit = limits.program_seconds if w.ready else limits.start_seconds
                    casualty(w, TIMEOUT, f"{what} exceeded {limit:.0f}s")
                elif worker.rss_kb(w.process.pid) > limits.memory_mb * 1024:
                    casualty(w, CRASH, f"memory cap {limits.memory_mb} MiB exceeded")
            alive = sum(1 for w in workers if w.process.is_alive())
            session.tick(f", {alive}/{len(workers)} workers, {replaced} replaced",
                         lambda alive=alive: {"workers_alive": alive, "workers_replaced": replaced,
                                              "worker_rss_mb": [round(w.rss_kb / 1024) for w in workers]})
    except KeyboardInterrupt:
        session.log("interrupted: stopping workers; unfinished programs stay unrun in the state")
    finally:
        for w in workers:
            if w.index is not None or not w.ready:
                w.kill()
            else:
                w.stop()
        session.checkpoint()
    return session.stats


def _probe_target(case_json: dict, device: str, backend: str, fault: str | None) -> None:
    from fuzzer import faults
    from fuzzer.program import Case
    from fuzzer.trial import judge_fresh

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    with faults.planted(fault):
        judge_fresh(Case.from_json(case_json), device, backend)


def probe(case, device: str, backend: str = "inductor", fault: str | None = None,
          limits: PoolLimits = PoolLimits()) -> str | None:
    """Run one case in a fresh process: None if it finished, else how it died.

    This is how crash and timeout entries are replayed: in this process they would
    take the replayer down with them.
    """
    ctx = multiprocessing.get_context("spawn")
    p = ctx.Process(target=_probe_target, args=(case.to_json(), device, backend, fault), daemon=True)
    p.start()
    deadline = time.monotonic() + limits.start_seconds + limits.program_seconds
    while p.is_alive() and time.monotonic() < deadline:
        if worker.rss_kb(p.pid) > limits.memory_mb * 1024:
            p.kill()
            p.join(5)
            return f"{CRASH}: memory cap {limits.memory_mb} MiB exceeded"
        p.join(limits.poll_seconds)
    if p.is_alive():
        p.kill()
        p.join(5)
        return f"{TIMEOUT}: exceeded {limits.program_seconds:.0f}s"
    if p.exitcode != 0:
        return f"{CRASH}: {_signal_name(p.exitcode)}"
    return None
