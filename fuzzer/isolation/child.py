"""The one protocol of every child process dcefuzz starts: campaign workers and
isolated judges.

A child is ``spawn``-ed (never forked: a forked CUDA context is unusable) with
:func:`serve` as its target and a *handler*, a picklable object that does the
child's real work.  The protocol around it is the same for every child:

    child  -> parent   ("ready", pid)            once torch and the handler are loaded
    parent -> child    ("stop",)                 the child returns
    parent -> child    any other tuple           passed to ``handler(message, send)``
    child  -> parent   whatever the handler sends

Before it reports ready the child arms ``faulthandler`` (where it dies or hangs:
``fuzzer.isolation.stacks``), ignores Ctrl-C (it reaches the whole process group;
the parent decides what stops), bounds torch's threads so that children share the
cores, and plants the campaign's fault for its whole life.
"""

from __future__ import annotations

import os
import signal
from typing import Any, Protocol


class Handler(Protocol):
    def load(self) -> None:
        """Import what the work needs, so a child that cannot fails before ready."""

    def __call__(self, message: tuple, send) -> None:
        """Do the work one message asks for, sending what the parent expects."""


def serve(conn, handler: Handler, fault: str | None, threads: int,
          compile_threads: int | None = None, stack_path: str | None = None) -> Any:
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
            message = conn.recv()
            if message[0] == "stop":
                return
            handler(message, conn.send)
