"""One piece of work in a child process that may die, for a command that must not.

A campaign meets compiler crashes in its workers, and a crash entry's shrink judges
each candidate in a child (``fuzzer.isolation.deaths``).  Every other command judges in
its own process, and a program whose bug corrupts memory (a write out of bounds that
no verdict names, since the program's own output is still compared) can take that
process down in the middle of a shrink: the user would see only the C library's last
words.  ``run_once`` runs the work in a ``spawn``-ed child under the one protocol of
``fuzzer.isolation.child`` and turns its death into a ``Died`` the command can report.
Whatever the child wrote (its progress, torch's warnings) goes where the parent's
output goes.
"""

from __future__ import annotations

import multiprocessing
from dataclasses import dataclass
from typing import Any

from fuzzer.isolation import child
from fuzzer.isolation.process import died_detail


@dataclass(frozen=True)
class Died:
    """The child ended before it answered."""

    #: "process died: SIGABRT", or "process died: exit code 1"
    detail: str


def run_once(handler: child.Handler, message: tuple, threads: int | None = None) -> Any:
    """Send ``message`` to ``handler`` in a fresh child and return the one thing the
    handler sends back, or ``Died`` if the child ends first."""
    if threads is None:
        import torch

        threads = torch.get_num_threads()
    ctx = multiprocessing.get_context("spawn")
    here, there = ctx.Pipe()
    process = ctx.Process(target=child.serve, args=(there, handler, None, threads), daemon=True)
    process.start()
    there.close()
    try:
        here.recv()  # ("ready", pid)
        here.send(message)
        answer = here.recv()
        here.send(child.STOP)
    except (EOFError, ConnectionResetError, BrokenPipeError):
        process.join()
        return Died(died_detail(process.exitcode))
    finally:
        here.close()
    process.join()
    return answer
