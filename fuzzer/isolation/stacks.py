"""Where a dying process was: Python stacks of crashed and hung workers.

A ``crash`` that only says ``SIGSEGV`` tells a PyTorch developer little; the Python
stack at the moment of death says which stage of the compiler it was in (tracing,
AOT, lowering, kernel compilation, the compiled code itself).  A child arms
``faulthandler`` (``arm``): on a fatal signal it writes its stack to a file the
parent named, and on ``SIGUSR1`` it writes it without dying, which is how the parent
asks a hung or bloated child where it is before killing it (``dump_then``).  The
parent reads the file back (``read``) into the entry's detail, and uses the
innermost frame *of torch* (``torch_frame``) as part of a casualty's *title* and of its
bug's key: two casualties with the same kind, death and innermost frame of torch are
taken for the same bug, so a crash that fires on every tenth program is shrunk once and
counted, not shrunk a hundred times.

Not the innermost frame of any code: a corrupted heap aborts wherever the next
allocation happens, often in dcefuzz's own code making the next binding's inputs
(``sizes.py``), and a key made of that frame is one bug for every such crash.  A frame
of torch's files names where in the compiler the process was; a stack without one
(it died in dcefuzz's code, or the stack was read before frames said whose file they
are) names no cause, and its casualty is a bug of its own.  Frames of torch and of
dcefuzz are written with their path inside the package (``torch/_inductor/graph.py``),
other files by their name alone.
"""

from __future__ import annotations

import faulthandler
import importlib.util
import os
import re
import signal
import time
from pathlib import Path

from fuzzer.limits import ISOLATION

#: how a frame of torch's files starts its path (``torch_frame``)
TORCH_PATH = "torch/"

#: the folder of dcefuzz's own modules: a frame there is dcefuzz's code at work
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_FRAME = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+) in (?P<func>\S+)')
#: a file of an installed torch, wherever its environment is
_INSTALLED_TORCH = re.compile(r"[/\\](?:site|dist)-packages[/\\](torch[/\\].+)$")
_handle = None


def _torch_root() -> str | None:
    """The folder that holds this interpreter's ``torch`` package (found without
    importing it), with a trailing separator; None without torch."""
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.origin:
        return None
    return os.path.dirname(os.path.dirname(os.path.abspath(spec.origin))) + os.sep


_TORCH_ROOT = _torch_root()


def shown(file: str) -> str:
    """How a frame's file is written: its path inside torch or dcefuzz, else its name."""
    ours = os.path.dirname(_PACKAGE.rstrip(os.sep)) + os.sep
    if file.startswith(_PACKAGE):
        return file[len(ours):].replace(os.sep, "/")
    found = _INSTALLED_TORCH.search(file)
    if found:
        return found[1].replace("\\", "/")
    if _TORCH_ROOT is not None and file.startswith(_TORCH_ROOT + "torch" + os.sep):
        return file[len(_TORCH_ROOT):].replace(os.sep, "/")
    return os.path.basename(file)


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
    deadline = time.monotonic() + ISOLATION.dump_wait_seconds
    while time.monotonic() < deadline:
        if p.exists() and p.stat().st_size > before:
            time.sleep(ISOLATION.dump_poll_seconds)  # let the rest of the dump land
            return
        time.sleep(ISOLATION.dump_poll_seconds)


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
    frames = [f"{m['func']} ({shown(m['file'])}:{m['line']})" for m in deepest[:ISOLATION.frames_to_torch]]
    first_torch = next((i for i, frame in enumerate(frames) if _is_torch(frame)), 0)
    return frames[:max(ISOLATION.frames_kept, first_torch + 1)]


def _file(frame: str) -> str:
    """The file of a frame as ``read`` writes it (``func (file:line)``)."""
    return frame.rpartition(" (")[2].rpartition(":")[0]


def _is_torch(frame: str) -> bool:
    return _file(frame).startswith(TORCH_PATH)


def _unnumbered(frame: str) -> str:
    return re.sub(r":\d+\)$", ")", frame)


def innermost(frames: list[str]) -> str:
    """The innermost frame without its line number: stable across small edits."""
    return _unnumbered(frames[0]) if frames else ""


def torch_frame(frames: list[str]) -> str | None:
    """The innermost frame in torch's files, without its line number (None: none of
    ``frames`` is torch's, or they were read before frames said whose file they are:
    where the process died names no cause)."""
    return next((_unnumbered(frame) for frame in frames if _is_torch(frame)), None)
