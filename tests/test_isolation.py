"""How a child's death is named.

The child processes here stand in for a dying worker: a plain Python process that
corrupts its own heap through ``ctypes`` (glibc then speaks and aborts), or a stand-in
``probe`` that returns the deaths a test lists.  None compiles.
"""

import signal
import subprocess
import sys

import pytest

from fuzzer.isolation.process import died_detail, signal_name
from fuzzer.judge.death import GLIBC_HEAP_WORDS, HEAP_CORRUPTION, death_name

#: a process that frees one block twice: glibc finds its heap corrupted and aborts
DOUBLE_FREE = """import ctypes
libc = ctypes.CDLL(None)
libc.malloc.restype = ctypes.c_void_p
libc.free.argtypes = [ctypes.c_void_p]
p = libc.malloc(24)
libc.free(p)
libc.free(p)
"""


@pytest.mark.parametrize("words", GLIBC_HEAP_WORDS)
@pytest.mark.parametrize("how", ["SIGABRT", "SIGSEGV"])
def test_every_message_of_glibcs_allocator_is_a_heap_corruption(words, how):
    said = f"[W] torch logged something\n{words}\n"
    assert death_name(how, said) == HEAP_CORRUPTION


@pytest.mark.parametrize("how, said", [
    ("SIGABRT", "terminate called after throwing an instance of 'c10::Error'\n"),  # a C++ abort
    ("SIGABRT", "Fatal Python error: Aborted\n"),
    ("SIGSEGV", "Fatal Python error: Segmentation fault\n"),
    ("SIGBUS", "free(): invalid size\n"),   # glibc aborts after its words: not a heap's signal
    ("SIGKILL", "invalid fastbin entry (free)\n"),
    ("exit code 1", "double free or corruption (out)\n"),
])
def test_a_death_without_glibcs_heap_words_or_signal_stays_its_signal(how, said):
    assert death_name(how, said) == how


@pytest.mark.parametrize("tunables", ["", "glibc.malloc.tcache_count=0"])
def test_a_real_corrupted_heap_is_named_by_glibcs_own_words(tunables):
    """A double free, caught by the tcache (``free(): double free detected in tcache
    2``) or, with it off, by the fastbins (``double free or corruption (fasttop)``)."""
    env = {"GLIBC_TUNABLES": tunables} if tunables else {}
    run = subprocess.run([sys.executable, "-c", DOUBLE_FREE], capture_output=True, text=True, timeout=60,
                         env={**__import__("os").environ, **env})
    assert run.returncode == -signal.SIGABRT, run.stderr
    assert died_detail(run.returncode, run.stderr) == f"process died: {HEAP_CORRUPTION}", run.stderr
    assert death_name(signal_name(run.returncode), "") == "SIGABRT"  # the signal alone says less
