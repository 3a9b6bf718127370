"""Workers as Ray actors: one campaign across the GPUs and machines of a Ray cluster.

The pool (``fuzzer.campaign.pool``) stays the scheduler: the same program stream,
the same deadlines, casualties, recycling, saving and state.  Only where a worker
runs changes.  Each worker is an actor (one GPU each, ``num_gpus=1``, on a cluster
with GPUs; one CPU each otherwise) that hosts the very handler a local worker
process runs (``fuzzer.campaign.worker.Worker``), loaded and with the campaign's
fault planted as a local worker has it.  The pool talks to a worker through a pipe;
for an actor, a relay thread of the driver stands at the other end of that pipe,
turning what the pool sends into actor calls and what the actor reports (polled)
into messages, so the pool reads an actor exactly as it reads a process.

Isolation holds as it does here.  An actor that dies (a segfault, Ray's memory
monitor) fails its calls with ``RayActorError``: the relay closes the pipe and the
pool makes the program it held a ``crash`` finding; one past the program's time limit
is killed by the pool, a ``timeout`` finding; either way the pool starts another.
Ray's retries are off (``max_restarts=0``, ``max_task_retries=0``): a program that
killed its actor must become a finding, not run again on a restarted actor that it
would kill too.  How the actor died is read where Ray cannot say it: on the driver's
node, from the fault handler's report (``fuzzer.isolation.stacks``), which also gives
the casualty its stack; on other nodes the death is "process died: exit code None"
and the memory cap is Ray's memory monitor's.

Ray is optional (the ``ray`` extra); nothing else imports this module.
"""

from __future__ import annotations

import multiprocessing
import os
import queue
import resource
import threading
import time
import traceback
from collections import Counter

from fuzzer.campaign import handle, worker
from fuzzer.campaign.config import Config
from fuzzer.isolation import child, stacks
from fuzzer.limits import PoolLimits

#: how to install what ``--ray`` needs
EXTRA = "pip install -e '.[ray]'"
#: what a host reports when the handler raised (a worker process exits with code 1)
RAISED = "raised"
#: what the fault handler's report says, by the signal that killed the process
FATAL_SIGNALS = {"Segmentation fault": -11, "Aborted": -6, "Bus error": -7, "Floating point exception": -8,
                 "Illegal instruction": -4}


class RayUnavailable(RuntimeError):
    """Ray is not installed, or the cluster cannot be reached."""


def connect(address: str, num_cpus: int | None = None) -> float:
    """Join the cluster at ``address`` (``auto``: the one this machine belongs to; a
    ``host:port``) or, with ``local``, start one here; returns the seconds it took."""
    try:
        import ray
    except ImportError:
        raise RayUnavailable(f"--ray needs Ray, which dcefuzz does not install by default: {EXTRA}") from None
    start = time.monotonic()
    if ray.is_initialized():
        return 0.0
    options = {"include_dashboard": False, "log_to_driver": False, "configure_logging": False}
    try:
        if address == "local":
            ray.init(num_cpus=num_cpus, **options)
        else:
            ray.init(address=address, **options)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        raise RayUnavailable(f"cannot reach a Ray cluster at {address}: {exc}") from None
    return time.monotonic() - start


def cluster_gpus() -> int:
    """The GPUs of the cluster joined."""
    import ray

    return int(ray.cluster_resources().get("GPU", 0))


class Host:
    """The body of a worker actor: the local worker's handler, loaded as ``child.serve``
    loads it, with the campaign's fault planted for the actor's life.

    The work runs on a thread of the host's own, with the stack a process's main
    thread has (the soft ``RLIMIT_STACK``): Ray runs actor methods on threads whose
    small stacks a deep Dynamo trace overflows, a segfault that is no compiler's.
    ``run`` only queues a message and ``drain`` hands over what the work reported (on
    a second method thread, ``max_concurrency=2``, so a long poll never holds up a
    ``run``), whatever the work is doing.
    """

    def __init__(self, config: Config, limits: PoolLimits, compile_threads: int, stack_path: str | None):
        if stack_path:
            stacks.arm(stack_path)
        import ray
        import torch

        from fuzzer import faults

        torch.set_num_threads(limits.threads)
        torch._inductor.config.compile_threads = compile_threads
        self.handler = worker.Worker(config, limits)
        self.handler.load()
        self._fault = faults.planted(config.fault)
        self._fault.__enter__()  # for the actor's whole life, as a worker process has it
        self.outbox: queue.Queue = queue.Queue()
        self.inbox: queue.Queue = queue.Queue()
        threading.stack_size(_main_stack_bytes())
        try:
            threading.Thread(target=self._work, name="dcefuzz-work", daemon=True).start()
        finally:
            threading.stack_size(0)
        self.outbox.put(("ready", os.getpid(), ray.get_runtime_context().get_node_id()))

    def _work(self) -> None:
        while True:
            message = self.inbox.get()
            try:
                self.handler(message, self.outbox.put)
            except BaseException:  # noqa: BLE001 - a worker process would die of it: say so
                traceback.print_exc()
                self.outbox.put((RAISED, 1))
                return

    def run(self, message) -> None:
        self.inbox.put(message)

    def drain(self, wait: float) -> list:
        """What the work reported, waiting up to ``wait`` seconds for the first
        message (a long poll: the relay is answered as soon as there is news, and
        neither side spins)."""
        try:
            out = [self.outbox.get(timeout=wait)]
        except queue.Empty:
            return []
        while True:
            try:
                out.append(self.outbox.get_nowait())
            except queue.Empty:
                return out


def _main_stack_bytes() -> int:
    soft, _ = resource.getrlimit(resource.RLIMIT_STACK)
    return soft if 0 < soft < PoolLimits.max_stack_bytes else PoolLimits.default_stack_bytes


class ActorProcess:
    """An actor, seen as the pool sees a worker process."""

    def __init__(self, actor):
        self.actor = actor
        self.pid: int = -1  # known once ready, and only on this node (else no /proc to read)
        self.node: str | None = None
        self.exitcode: int | None = None
        self.stack_path: str | None = None
        self._gone = threading.Event()

    def is_alive(self) -> bool:
        return not self._gone.is_set()

    def kill(self) -> None:
        import ray

        if not self._gone.is_set():
            ray.kill(self.actor, no_restart=True)
            self._gone.set()

    def join(self, timeout: float | None = None) -> None:
        self._gone.wait(timeout)

    def died(self) -> None:
        """The actor is gone; how it died, where its fault handler could say."""
        if self.stack_path and self.pid > 0:
            try:
                with open(self.stack_path, errors="replace") as fh:
                    report = fh.read()
            except OSError:
                report = ""
            self.exitcode = next((code for name, code in FATAL_SIGNALS.items() if name in report), None)
        self._gone.set()


class ActorWorker(handle.WorkerHandle):
    """The pool's handle on one actor: a pipe whose far end is a relay thread."""

    def __init__(self, remote_class, options: dict, config: Config, limits: PoolLimits, slot: int,
                 compile_threads: int, stack_path: str | None, here: str):
        self.slot, self.config, self.limits = slot, config, limits
        self.conn, self._relay_end = multiprocessing.Pipe()
        actor = remote_class.options(**options).remote(config, limits, compile_threads, stack_path)
        self.process = ActorProcess(actor)
        self.process.stack_path = stack_path
        self.stack_path = stack_path
        self._here = here
        self.track(limits)
        self._running = None
        threading.Thread(target=self._relay, name=f"dcefuzz-relay-{slot}", daemon=True).start()

    def send(self, message) -> None:
        """A program goes to the actor at once (not through the relay's next look at
        the pipe); the relay watches the call for the actor's death."""
        self._running = self.process.actor.run.remote(message)

    def stack(self, ask: bool) -> list[str]:
        if self.process.pid <= 0:  # another node: its fault handler's file is there
            return []
        return super().stack(ask)

    def _relay(self) -> None:
        import ray
        from ray.exceptions import GetTimeoutError, RayActorError, RayTaskError

        actor = self.process.actor
        drain = actor.drain.remote(self.limits.ray_drain_seconds)
        try:
            while self.process.is_alive():
                while self._relay_end.poll():
                    message = self._relay_end.recv()
                    if message == child.STOP:
                        self.process.kill()
                        return
                    self.send(message)
                done, _ = ray.wait([drain], timeout=self.limits.ray_poll_seconds)
                if done:
                    for message in ray.get(drain):
                        # the host's own words are tuples; the worker's, records passed on as they are
                        said = message[0] if isinstance(message, tuple) else None
                        if said == RAISED:
                            self.process.exitcode = message[1]
                            self.process.kill()
                            return
                        if said == "ready":
                            _, pid, node = message
                            self.process.node = node
                            self.process.pid = pid if node == self._here else -1
                            message = ("ready", pid)
                        self._relay_end.send(message)
                    drain = actor.drain.remote(self.limits.ray_drain_seconds)
                running = self._running
                if running is not None and ray.wait([running], timeout=0)[0]:
                    ray.get(running)  # raises if the call failed or the actor died
                    if self._running is running:
                        self._running = None
        except RayTaskError:  # a call failed in the host itself: the actor is of no more use
            self.process.exitcode = 1
            self.process.kill()
        except (RayActorError, GetTimeoutError):
            self.process.died()
        except (EOFError, OSError):  # the pool closed its end: it is done with this worker
            self.process.kill()
            return
        finally:
            self._relay_end.close()


class Actors:
    """The pool's launcher on a Ray cluster: one actor per GPU when the cluster has
    GPUs (and the device is CUDA), else ``jobs`` one-CPU actors."""

    def __init__(self, config: Config, limits: PoolLimits, jobs: int = 1):
        import ray

        self.config, self.limits = config, limits
        resources = ray.cluster_resources()
        gpus = int(resources.get("GPU", 0))
        self.gpu = gpus > 0 and config.device.startswith("cuda")
        self.slots = [None] * (gpus if self.gpu else max(1, jobs))
        cpus = int(resources.get("CPU", 1))
        self.compile_threads = max(1, cpus // len(self.slots))
        self.options = {"num_gpus": 1, "num_cpus": 1} if self.gpu else {"num_cpus": 1}
        self.options.update(max_restarts=0, max_task_retries=0, max_concurrency=2)
        self.remote_class = ray.remote(Host)
        self.here = ray.get_runtime_context().get_node_id()
        self.nodes = {n["NodeID"]: n.get("NodeManagerHostname") or n["NodeID"][:8]
                      for n in ray.nodes() if n.get("Alive")}

    def start(self, slot: int, stack_path: str) -> ActorWorker:
        config = self.config
        if self.gpu:  # the actor sees its own GPU as cuda:0
            config = _on_first_gpu(config)
        return ActorWorker(self.remote_class, self.options, config, self.limits, slot, self.compile_threads,
                           stack_path, self.here)

    def status(self, workers: list) -> str:
        """Actors alive, per node."""
        alive = Counter(self.nodes.get(w.process.node, "starting") for w in workers if w.process.is_alive())
        per_node = ", ".join(f"{node} {n}" for node, n in sorted(alive.items()))
        return f"{sum(alive.values())}/{len(workers)} actors ({per_node or 'none'})"

    def close(self) -> None:
        pass


def _on_first_gpu(config: Config) -> Config:
    import dataclasses

    return dataclasses.replace(config, device="cuda") if config.device.startswith("cuda:") else config
