"""The one protocol of every child process dcefuzz starts: campaign workers and
isolated judges.

A child is ``spawn``-ed (never forked: a forked CUDA context is unusable) with
:func:`serve` as its target and a *handler*, a picklable object that does the
child's real work.  The protocol around it is the same for every child:

    child  -> parent   ("ready", pid)            once torch and the handler are loaded
    parent -> child    ("stop",)                 the child returns
    parent -> child    any other message         passed to ``handler(message, send)``
    child  -> parent   whatever the handler sends

Before it reports ready the child arms ``faulthandler`` (where it dies or hangs:
``fuzzer.isolation.stacks``), ignores Ctrl-C (it reaches the whole process group;
the parent decides what stops), bounds torch's threads so that children share the
cores, and plants the campaign's fault for its whole life.

A child that must start with variables of its own (a worker's GPU, a checked heap:
``fuzzer.isolation.heapcheck``) is started inside :func:`environment`: a spawned child
takes its parent's environment as it is at the start, and one lock keeps two threads
starting children (the pool's and the casualty shrinker's) from mixing theirs.

A child never outlives its parent.  A parent that exits, however it exits, closes
the pipe: a child waiting for a message returns, and one that sends next fails.  But
a child hung in a compile does neither, and a parent killed by SIGKILL runs no
cleanup, so on Linux the kernel is asked to kill the child when its parent dies
(``PR_SET_PDEATHSIG``).
"""

from __future__ import annotations

import contextlib
import ctypes
import multiprocessing
import os
import signal
import sys
import threading
from collections.abc import Iterator, Mapping
from typing import Any, Protocol

from fuzzer.isolation import heapcheck

#: what the parent sends a child to make it return
STOP = ("stop",)

#: prctl(2) option: the signal the calling process gets when its parent dies
PR_SET_PDEATHSIG = 1


class Handler(Protocol):
    def load(self) -> None:
        """Import what the work needs, so a child that cannot fails before ready."""

    def __call__(self, message: Any, send) -> None:
        """Do the work one message asks for, sending what the parent expects."""


def die_with_parent() -> None:
    """Have the kernel SIGKILL this process when its parent dies (Linux; elsewhere a
    no-op, and a child hung in a compile outlives a parent killed outright).

    The signal is sent when the *thread* that started the child ends: the pool starts
    its workers from the campaign's main thread, and an isolated judge's child lives
    within the call, on the thread, that started it.
    """
    if not sys.platform.startswith("linux"):
        return
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"prctl(PR_SET_PDEATHSIG): {os.strerror(err)}")
    parent = multiprocessing.parent_process()
    if parent is not None and not parent.is_alive():  # it died before the request
        raise SystemExit(0)


#: held while a child starts with variables of its own (``environment``)
_STARTING = threading.Lock()


@contextlib.contextmanager
def environment(variables: Mapping[str, str]) -> Iterator[None]:
    """Set ``variables`` in this process's environment for the ``with`` block, in which
    a child is started (it takes them), then put back what was there."""
    with _STARTING:
        saved = {name: os.environ.get(name) for name in variables}
        os.environ.update(variables)
        try:
            yield
        finally:
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value


#: where a child sends its standard error when its parent names no file (set by a
#: campaign for the children its own helpers start, e.g. the casualty shrinker's judges)
LOG_ENV = "DCEFUZZ_CHILD_LOG"


def to_log(path: str) -> None:
    """Send this process's standard error (torch's log lines, Python's warnings,
    faulthandler's default stream) to the file ``path``, appended.  The child speaks
    to its parent through the pipe only, so nothing of dcefuzz's is lost there."""
    try:
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    except OSError:
        return  # the log cannot be written: the lines go where they went
    sys.stderr.flush()
    os.dup2(fd, 2)
    os.close(fd)


def serve(conn, handler: Handler, fault: str | None, threads: int,
          compile_threads: int | None = None, stack_path: str | None = None,
          log_path: str | None = None) -> Any:
    heapcheck.restore()  # a checked heap is this process's alone, not the compiler's it starts
    die_with_parent()
    log_path = log_path or os.environ.get(LOG_ENV)
    if log_path:
        to_log(log_path)
    if stack_path:
        from fuzzer.isolation import stacks
        stacks.arm(stack_path)
    import torch

    from fuzzer import faults

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    torch.set_num_threads(threads)
    if compile_threads is not None:
        torch._inductor.config.compile_threads = compile_threads
    handler.load()
    with faults.planted(fault):
        conn.send(("ready", os.getpid()))
        while True:
            try:
                message = conn.recv()
            except EOFError:  # the parent is gone
                return
            if message == STOP:
                return
            handler(message, conn.send)
