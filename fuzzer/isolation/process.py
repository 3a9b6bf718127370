"""What a parent needs to watch and stop a child process, and to name how it died.

The detail strings (``died_detail`` and friends) are shared by the worker pool and
the isolated judge, so a casualty found by a campaign and the same death seen while
shrinking or replaying have one bug class.
"""

from __future__ import annotations

import os
import re
import resource
import signal

from fuzzer.isolation import child
from fuzzer.judge.death import DIED, HEAP_CORRUPTION, death_name
from fuzzer.limits import ISOLATION

#: seconds a child asked to stop may take before it is killed
STOP_GRACE_S = ISOLATION.stop_grace_seconds


class Aborted(Exception):
    """The caller asked an isolated run to stop (Ctrl-C, end of a campaign)."""


def signal_name(exitcode: int | None) -> str:
    if exitcode is not None and exitcode < 0:
        try:
            return signal.Signals(-exitcode).name
        except ValueError:
            return f"signal {-exitcode}"
    return f"exit code {exitcode}"


def died_detail(exitcode: int | None, said: str = "") -> str:
    """How a process that ended with ``exitcode``, after writing ``said`` on stderr,
    died: its signal, or a heap corruption (``fuzzer.judge.death``)."""
    return f"{DIED}{death_name(signal_name(exitcode), said)}"


def timeout_detail(seconds: float) -> str:
    # "120 s", not "120s": the number must stand alone to be normalised out of the
    # bug class, since a timeout is shrunk under a shorter limit than it was found
    return f"program exceeded its time limit ({seconds:.0f} s)"


def memory_detail(memory_mb: int) -> str:
    return f"memory cap {memory_mb} MiB exceeded"


def rss_kb(pid: int | None = None) -> int:
    """Resident memory of a process in KiB (Linux /proc; else this process's peak)."""
    try:
        with open(f"/proc/{pid or os.getpid()}/status") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss if pid is None else 0


def stop_child(process, conn, grace: float) -> None:
    """Ask a child to stop over its pipe; kill it if it has not within ``grace`` s."""
    if process.is_alive():
        try:
            conn.send(child.STOP)
        except (OSError, BrokenPipeError):
            pass
        process.join(grace)
    if process.is_alive():
        process.kill()
        process.join(5)
    conn.close()


_DIED = re.compile(rf"{DIED}(?P<how>signal \d+|exit code -?\d+|{HEAP_CORRUPTION}|\w+)")
_MEMORY = re.compile(r"memory cap (?P<mb>\d+) MiB exceeded")
_TIMEOUT = re.compile(r"exceeded its time limit")


def death_of(detail: str) -> tuple[str | None, int | None]:
    """How a death detail (made by the functions above) says the process ended:
    a signal's name, ``heap corruption`` or ``exit code N``, ``"memory"`` (with the cap in MiB) or
    ``"timeout"``; (None, None) for any other text."""
    m = _MEMORY.search(detail)
    if m:
        return "memory", int(m["mb"])
    if _TIMEOUT.search(detail):
        return "timeout", None
    m = _DIED.search(detail)
    return (m["how"], None) if m else (None, None)
