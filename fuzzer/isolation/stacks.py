"""Where a dying process was: Python stacks of crashed and hung workers.

A ``crash`` that only says ``SIGSEGV`` tells a PyTorch developer little; the Python
stack at the moment of death says which stage of the compiler it was in (tracing,
AOT, lowering, kernel compilation, the compiled code itself).  A child arms
``faulthandler`` (``arm``): on a fatal signal it writes its stack to a file the
parent named, and on ``SIGUSR1`` it writes it without dying, which is how the parent
asks a hung or bloated child where it is before killing it (``dump_then``).  The
parent reads the file back (``read``) into the entry's detail, and uses the
innermost frame as part of a casualty's *title*: two casualties with the same kind,
death and innermost frame are taken for the same bug, so a crash that fires on every
tenth program is shrunk once and counted, not shrunk a hundred times.
"""

from __future__ import annotations

import faulthandler
import os
import re
import signal
import time
from pathlib import Path

#: frames kept from a dumped stack, innermost first
FRAMES_KEPT = 8
#: seconds the parent waits for a child to write its stack after SIGUSR1
DUMP_WAIT_S = 2.0
#: polling interval while waiting for the dump
DUMP_POLL_S = 0.05

#: the folder of dcefuzz's own modules: a frame there is dcefuzz's code at work
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_FRAME = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+) in (?P<func>\S+)')
_handle = None


def arm(path: str | os.PathLike) -> None:
    """In the child: write the Python stack to ``path`` on a fatal signal or SIGUSR1."""
    global _handle
    _handle = open(path, "w")  # noqa: SIM115 - must stay open for the process's life
    # all threads: a signal sent to the process may land on any of its threads
    # (Inductor's compile pool, OpenMP), so "the current thread" may not be the one
    # that was compiling
    faulthandler.enable(file=_handle, all_threads=True)
    if hasattr(signal, "SIGUSR1"):
        faulthandler.register(signal.SIGUSR1, file=_handle, all_threads=True, chain=False)


def dump_then(pid: int, path: str | os.PathLike) -> None:
    """In the parent: ask child ``pid`` for its stack (SIGUSR1) and wait for it."""
    if not hasattr(signal, "SIGUSR1"):
        return
    p = Path(path)
    before = p.stat().st_size if p.exists() else 0
    try:
        os.kill(pid, signal.SIGUSR1)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + DUMP_WAIT_S
    while time.monotonic() < deadline:
        if p.exists() and p.stat().st_size > before:
            time.sleep(DUMP_POLL_S)  # let the rest of the dump land
            return
        time.sleep(DUMP_POLL_S)


def read(path: str | os.PathLike) -> list[str]:
    """The main thread's stack in ``path``, innermost frame first, as
    ``func (file.py:line)``.

    The file holds one dump of every thread (the worker dies, or is killed, right
    after it).  The thread that was compiling or running the program is the
    deepest one running dcefuzz's code (a Ray actor runs it on a thread of its own,
    beside Ray's main loop and its method threads).
    """
    try:
        text = Path(path).read_text(errors="replace")
    except OSError:
        return []
    threads: list[list[re.Match]] = []
    in_frames = False
    for line in text.splitlines():
        m = _FRAME.match(line)
        if m:
            if not in_frames:
                threads.append([])
            threads[-1].append(m)
        in_frames = bool(m)
    if not threads:
        return []
    # the thread doing the work runs dcefuzz's code, and is the deepest of those (a
    # Ray actor's method threads wait in a few frames); without dcefuzz's code
    # anywhere, threads started by ``threading`` (pools, watchers) are asides
    ours = [t for t in threads if any(m["file"].startswith(_PACKAGE) for m in t)]
    main = ours or [t for t in threads if not any(m["func"] == "_bootstrap_inner" for m in t)]
    deepest = max(main or threads, key=len)
    return [f"{m['func']} ({os.path.basename(m['file'])}:{m['line']})" for m in deepest[:FRAMES_KEPT]]


def innermost(frames: list[str]) -> str:
    """The innermost frame without its line number: stable across small edits."""
    return re.sub(r":\d+\)$", ")", frames[0]) if frames else ""
