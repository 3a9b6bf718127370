"""A checked heap for the fresh processes that confirm a death.

A write out of bounds kills a process only where the allocator, or a later access,
trips on what it overwrote, and glibc checks a block for little on its fast paths.
So the fresh processes that ask whether a case dies again (a casualty's confirmation,
a replay, the stage walk of its triage) start with glibc's checks turned up, where
glibc offers them, and the knobs are here, in one place:

* glibc's tunables (2.26 on, read by the dynamic loader at start-up from
  ``GLIBC_TUNABLES``): the tcache off (``glibc.malloc.tcache_count=0``: a block freed
  into the tcache is checked for little, while every free past it goes through
  ``_int_free``'s checks of the block and its neighbours), and freed and new blocks
  filled with a byte (``glibc.malloc.perturb``: a read of freed memory reads that byte,
  and a pointer read from it faults at once);
* glibc's malloc checking proper (``glibc.malloc.check=3``, the old ``MALLOC_CHECK_=3``:
  a byte past each block, checked when it is freed), which from 2.34 on lives in
  ``libc_malloc_debug.so.0`` and works only preloaded.  It is used only where it takes
  effect, asked once per process of a child of this interpreter (a block of 100 bytes
  whose usable size is then 100, not the 104 plain glibc gives): on this project's
  machine (Debian's glibc 2.36, pyenv's CPython 3.11) the library is there and loads,
  but a Python process starts with its checking off, while a C program's is on.

Only the checked child starts with them: it puts back what its environment held
before (``restore``, first thing in ``child.serve``), so the compiler and the compile
workers it starts run as usual.  Where glibc is absent or too old, a child runs
without them.  None of this changes what dies: a heap that is not corrupted passes
every check; a corrupted one dies sooner, with glibc's words (``fuzzer.judge.death``).
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys

from fuzzer.limits import ISOLATION

#: glibc's allocator tunables a checked child starts with (``GLIBC_TUNABLES``, 2.26 on)
TUNABLES: tuple[tuple[str, str], ...] = (("glibc.malloc.tcache_count", "0"), ("glibc.malloc.perturb", "165"))
#: the tunable of glibc's malloc checking (abort with words on the first check that fails)
CHECK_TUNABLE: tuple[str, str] = ("glibc.malloc.check", "3")
#: the library glibc's malloc checking lives in from 2.34 on; it works only preloaded
DEBUG_LIBRARY = "libc_malloc_debug.so.0"
#: the oldest glibc with tunables
OLDEST_GLIBC: tuple[int, int] = (2, 26)
#: what a checked child's environment held before the knobs (JSON: name -> value or
#: null), which ``restore`` puts back
RESTORE_ENV = "DCEFUZZ_HEAP_RESTORE"

#: run by a child with the checking preloaded: plain glibc makes a block of 100 bytes
#: 104 usable, its checking 100 exactly (``malloc_check_get_size``)
_ASK = """import ctypes
libc = ctypes.CDLL(None)
libc.malloc.restype = ctypes.c_void_p
libc.malloc_usable_size.argtypes = [ctypes.c_void_p]
print(libc.malloc_usable_size(libc.malloc(100)))
"""


def glibc_version() -> tuple[int, int] | None:
    """This process's glibc as (major, minor); None where it is not glibc."""
    try:
        name, _, version = os.confstr("CS_GNU_LIBC_VERSION").partition(" ")
        major, minor = version.split(".")[:2]
        return (int(major), int(minor)) if name == "glibc" else None
    except (AttributeError, ValueError, OSError):
        return None


def _joined(name: str, words: list[str], sep: str) -> str:
    """``words`` appended to what the variable ``name`` holds already (``sep``-separated)."""
    return sep.join([w for w in (os.environ.get(name) or "").split(sep) if w] + words)


def _knobs(check: bool) -> dict[str, str]:
    tunables = list(TUNABLES) + ([CHECK_TUNABLE] if check else [])
    knobs = {"GLIBC_TUNABLES": _joined("GLIBC_TUNABLES", [f"{k}={v}" for k, v in tunables], ":")}
    if check:
        knobs["LD_PRELOAD"] = _joined("LD_PRELOAD", [DEBUG_LIBRARY], " ")
    return knobs


@functools.cache
def check_takes_effect() -> bool:
    """Whether glibc's malloc checking, preloaded, is on in a child of this interpreter
    (asked once per process: a child that starts, allocates and answers)."""
    try:
        answer = subprocess.run([sys.executable, "-I", "-c", _ASK], env={**os.environ, **_knobs(check=True)},
                                capture_output=True, text=True, timeout=ISOLATION.heapcheck_ask_seconds)
    except (OSError, subprocess.SubprocessError):
        return False
    return answer.returncode == 0 and answer.stdout.strip() == "100"


def environment() -> dict[str, str]:
    """The variables a checked child starts with ({} where glibc offers no checks): the
    tunables, the checking where it takes effect, and what to put back (``restore``)."""
    version = glibc_version()
    if version is None or version < OLDEST_GLIBC:
        return {}
    knobs = _knobs(check=check_takes_effect())
    return {**knobs, RESTORE_ENV: json.dumps({name: os.environ.get(name) for name in knobs})}


def restore() -> bool:
    """In a child: put back what its environment held before the knobs, so that what
    it starts (the compiler, compile workers) runs unchecked.  Whether it was checked."""
    held = os.environ.pop(RESTORE_ENV, None)
    if held is None:
        return False
    for name, value in json.loads(held).items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
    return True
