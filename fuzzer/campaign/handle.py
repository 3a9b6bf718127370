"""The pool's handle on one worker process, and the launcher that starts them here.

The pool (``fuzzer.campaign.pool``) schedules programs and watches deaths through a
handle with a pipe and a process; ``Processes`` starts ``spawn``-ed workers on this
machine, ``fuzzer.campaign.ray_pool`` Ray actors behind the same handle.
"""

from __future__ import annotations

import multiprocessing
import os
import time

from fuzzer.campaign import worker
from fuzzer.campaign.config import Config
from fuzzer.campaign.entries import case_of
from fuzzer.campaign.messages import Message, Report, Run, received
from fuzzer.isolation import child, stacks
from fuzzer.isolation.process import STOP_GRACE_S, stop_child
from fuzzer.isolation.said import Said
from fuzzer.limits import PoolLimits
from fuzzer.program.ir import Case

#: seconds the idle workers have, together, to exit when the campaign ends
END_STOP_S = 2 * STOP_GRACE_S


class WorkerHandle:
    """The parent's handle on one worker process."""

    #: the worker's stderr, passed on to the log as it comes and read back to class its
    #: death (``fuzzer.isolation.said``); None where the worker's stderr is elsewhere (Ray)
    said: Said | None = None

    def __init__(self, ctx, config: Config, limits: PoolLimits, slot: int, device_index: str | None,
                 compile_threads: int = 1, stack_path: str | None = None, log_path: str | None = None):
        self.slot, self.config = slot, config
        self.stack_path = stack_path
        self.conn, child_conn = ctx.Pipe()
        self.said = Said(log_path)
        self.process = ctx.Process(target=child.serve,
                                   args=(child_conn, worker.Worker(config, limits), config.fault,
                                         limits.threads, compile_threads, stack_path, self.said.path),
                                   name=f"dcefuzz-worker-{slot}", daemon=True)
        # the worker sees only its GPU: taken by the spawned child at its start
        with child.environment({} if device_index is None else {"CUDA_VISIBLE_DEVICES": device_index}):
            self.process.start()
        child_conn.close()
        self.track(limits)

    def track(self, limits: PoolLimits) -> None:
        """What the pool knows of a worker just started: not ready, no program yet."""
        self.ready = False
        self.deadline = time.monotonic() + limits.start_seconds
        self.index: int | None = None
        self.pseed: int | None = None
        #: the program's trial, reported before its findings are shrunk (unshrunk entries)
        self.tried: Report | None = None
        #: the shrink candidate the worker announced last (a case, as JSON)
        self.candidate: dict | None = None
        #: the worker is triaging its shrunk findings (``tried`` holds them)
        self.triaging = False
        self.programs = 0
        self.base_rss_kb = 0
        self.rss_kb = 0

    def assign(self, drawn, limits: PoolLimits, ends_at: float | None, held: dict | None = None) -> None:
        """Hand the worker a program (a ``fuzzer.campaign.avoidance.Drawn``: its index and
        seed); ``held``: the bugs held (``Examples.held``)."""
        self.index, self.pseed = drawn.index, drawn.seed
        self.limit(limits, ends_at)
        self.send(Run(drawn.index, drawn.seed, None if ends_at is None else ends_at - time.monotonic(), held or {}))

    def send(self, message: Run) -> None:
        self.conn.send(message)

    def receive(self) -> Message:
        """The worker's next message (raises ``EOFError`` or ``OSError`` if it is gone)."""
        return received(self.conn.recv())

    def limit(self, limits: PoolLimits, ends_at: float | None, extra: float = 0.0) -> None:
        """Start a program time limit (a program's, or a shrink candidate's, plus ``extra``:
        a triage's budget), cut to the campaign's end."""
        self.deadline = time.monotonic() + limits.program_seconds + extra
        if ends_at is not None:
            self.deadline = min(self.deadline, ends_at)

    def release(self) -> None:
        """The program is over (reported, or counted as a casualty)."""
        self.index = self.pseed = self.tried = self.candidate = None
        self.triaging = False

    def running(self) -> Case:
        """What the worker was running: the candidate it announced, else its program."""
        if self.candidate is not None:
            return Case.from_json(self.candidate)
        return case_of(self.pseed, self.config)

    def kill(self) -> None:
        if self.process.is_alive():
            self.process.kill()
        self.process.join(5)
        self.conn.close()
        self.done()

    def words(self) -> str:
        """The last of what the worker wrote on stderr (glibc's words on a corrupted heap)."""
        return self.said.tail() if self.said is not None else ""

    def pump(self) -> None:
        """Pass on what the worker wrote on stderr since the last call."""
        if self.said is not None:
            self.said.pump()

    def done(self) -> None:
        """The worker is gone: pass on the rest of its stderr and drop the file."""
        if self.said is not None:
            self.said.close()
            self.said = None

    def stack(self, ask: bool) -> list[str]:
        """Where the worker was when it died (``ask``: it is alive; make it say)."""
        if self.stack_path is None:
            return []
        if ask and self.process.is_alive():
            stacks.dump_then(self.process.pid, self.stack_path)
        return stacks.read(self.stack_path)

    def forget_stack(self) -> None:
        if self.stack_path is not None and os.path.exists(self.stack_path):
            os.unlink(self.stack_path)

    def stop(self) -> None:
        # a worker between programs stops at once; the grace covers a slow exit
        stop_child(self.process, self.conn, STOP_GRACE_S * 5)
        self.done()


def stop_all(workers: list[WorkerHandle]) -> None:
    """Stop every worker at once: kill those holding a program (or not ready), ask the
    idle ones to stop and give them ``END_STOP_S`` together before they are killed."""
    for w in workers:
        if not w.process.is_alive():
            continue
        if w.index is not None or not w.ready:
            w.process.kill()
            continue
        try:
            w.conn.send(child.STOP)
        except OSError:
            w.process.kill()
    until = time.monotonic() + END_STOP_S
    for w in workers:
        w.process.join(max(0.0, until - time.monotonic()))
        if w.process.is_alive():
            w.process.kill()
            w.process.join(5)
        w.conn.close()
        w.done()


class Processes:
    """How the pool starts its workers here: ``spawn``-ed processes on this machine,
    one per job, or one per GPU of ``devices`` (each sees only its own).  Another
    launcher (``fuzzer.campaign.ray_pool``) starts them elsewhere; the pool treats
    every worker alike through the handle ``start`` returns (a pipe and a process)."""

    def __init__(self, config: Config, limits: PoolLimits, jobs: int = 1, devices: list[str] | None = None,
                 log_path: str | None = None):
        self.config, self.limits = config, limits
        #: where the workers' standard error goes (None: the campaign's terminal)
        self.log_path = log_path
        self.ctx = multiprocessing.get_context("spawn")
        self.slots = [str(d) for d in devices] if devices else [None] * jobs
        # the cores are shared out: each worker's Inductor compiles kernels on its share
        self.compile_threads = max(1, (os.cpu_count() or 1) // len(self.slots))

    def start(self, slot: int, stack_path: str) -> WorkerHandle:
        return WorkerHandle(self.ctx, self.config, self.limits, slot, self.slots[slot], self.compile_threads,
                            stack_path, self.log_path)

    def status(self, workers: list) -> str:
        """The pool's part of the progress line."""
        alive = sum(1 for w in workers if w.process.is_alive())
        return f"{alive}/{len(workers)} workers"

    def close(self) -> None:
        pass
