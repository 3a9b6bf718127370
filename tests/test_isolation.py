"""How a child's death is named, which deaths are one, and how a casualty is confirmed.

The child processes here stand in for a dying worker: a plain Python process that
corrupts its own heap through ``ctypes`` (glibc then speaks and aborts), or a stand-in
``probe`` that returns the deaths a test lists.  None compiles.
"""

import signal
import subprocess
import sys

import pytest

from fuzzer.isolation.process import died_detail, signal_name
from fuzzer.judge.death import GLIBC_HEAP_WORDS, HEAP_CORRUPTION, death_name, dies_so

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


@pytest.mark.parametrize("recorded, seen, same", [
    (HEAP_CORRUPTION, HEAP_CORRUPTION, True),
    (HEAP_CORRUPTION, "SIGSEGV", True),    # the corruption met by a fault in what it left
    (HEAP_CORRUPTION, "SIGABRT", True),    # ... or by an abort whose words were lost
    ("SIGSEGV", HEAP_CORRUPTION, True),    # the converse: a plain fault, then glibc's words
    ("SIGABRT", HEAP_CORRUPTION, True),
    ("crash|process died: heap corruption", "crash|process died: SIGSEGV", True),  # bug classes
    ("SIGSEGV", "SIGSEGV", True),
    ("SIGSEGV", "SIGABRT", False),         # two plain signals: nothing says either was the heap
    ("SIGABRT", "SIGSEGV", False),
    (HEAP_CORRUPTION, "SIGBUS", False),
    (HEAP_CORRUPTION, "SIGILL", False),
    (HEAP_CORRUPTION, "exit code 1", False),
    (HEAP_CORRUPTION, "memory", False),
    ("SIGKILL", HEAP_CORRUPTION, False),
    ("crash|process died: heap corruption", "timeout|process died: SIGSEGV", False),  # another kind
])
def test_a_death_dies_so_as_the_same_or_as_a_corrupted_heap_is_met(recorded, seen, same):
    assert dies_so(recorded, seen) is same


def _casualty(death: str = HEAP_CORRUPTION):
    """A crash entry as a campaign saves a casualty that died ``death``."""
    from fuzzer.corpus.entry import Entry, Origin
    from fuzzer.judge.contract import CRASH, Divergence
    from fuzzer.program.generate import generate, program_seed

    return Entry.build(CRASH, generate(program_seed(0, 0)), [Divergence(CRASH, 0, "process", f"process died: {death}")],
                       Origin(seed=0, device="cpu", backend="inductor"))


def _deaths(monkeypatch, *lines: str | None) -> list:
    """Stand in for the fresh processes ``fuzzer.reduce.casualty`` probes: each ends as
    the next of ``lines`` says (a death's detail; None: it ran to completion, judged
    clean; a line starting "early:" dies so before its eager runs were done).  Returns
    the list of the probes' keyword arguments, one per process started."""
    from fuzzer.isolation.deaths import Death
    from fuzzer.judge import contract
    from fuzzer.reduce import casualty

    ends = iter(Death(None, "ran to completion (ok)", status=contract.OK) if line is None
                else Death(contract.CRASH, line.removeprefix("early:"), after_eager=not line.startswith("early:"))
                for line in lines)
    started = []
    monkeypatch.setattr(casualty, "probe", lambda *args, **kwargs: started.append(kwargs) or next(ends))
    return started


@pytest.mark.parametrize("recorded, ends, confirmed", [
    (HEAP_CORRUPTION, ["process died: SIGSEGV"], True),     # the corruption met by a plain fault
    (HEAP_CORRUPTION, ["process died: SIGABRT"], True),
    ("SIGSEGV", ["process died: heap corruption"], True),  # the converse
    ("SIGSEGV", ["process died: SIGABRT"] * 2, False),     # two plain signals are two deaths
    (HEAP_CORRUPTION, ["process died: SIGBUS"] * 2, False),
    (HEAP_CORRUPTION, ["early:process died: heap corruption"] * 2, False),  # eager died: says nothing
    (HEAP_CORRUPTION, [None] * 2, False),
])
def test_a_casualty_is_confirmed_by_any_death_a_corrupted_heap_is_met_by(monkeypatch, recorded, ends, confirmed):
    from fuzzer.limits import PoolLimits
    from fuzzer.reduce.casualty import dies_again

    started = _deaths(monkeypatch, *ends)
    assert dies_again(_casualty(recorded), PoolLimits(casualty_confirmations=2)).confirmed is confirmed
    assert started and all(kwargs.get("checked") for kwargs in started)  # a checked heap each time


def test_a_shrunk_casualty_confirmed_by_another_heap_death_keeps_its_class(monkeypatch):
    """The reduced case is confirmed in a fresh process; one that dies by a plain SIGSEGV
    confirms a heap corruption, and the reduced entry is still a heap corruption."""
    import dataclasses
    from types import SimpleNamespace

    from fuzzer.reduce import casualty

    entry = _casualty(HEAP_CORRUPTION)
    program = dataclasses.replace(entry.case.program, body=entry.case.program.body[:1])
    smaller = SimpleNamespace(case=dataclasses.replace(entry.case, program=program), oracle_calls=3, seconds=1.0,
                              record=lambda: {"statements": 1})  # what the shrink found (``ShrinkResult``)

    class Judge:
        def __init__(self, *args):
            pass

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            pass

    monkeypatch.setattr(casualty, "IsolatedJudge", Judge)
    monkeypatch.setattr(casualty, "shrink", lambda *args, **kwargs: smaller)
    _deaths(monkeypatch, "process died: SIGSEGV")
    reduced = casualty.shrink_casualty(entry)
    assert reduced is not None and [d.detail for d in reduced.divergences] == ["process died: heap corruption"]
    _deaths(monkeypatch, "process died: SIGBUS", "process died: SIGBUS")
    assert casualty.shrink_casualty(entry) is None


def _tunables_of(pid: int) -> str:
    """The ``GLIBC_TUNABLES`` a process started with (``/proc``: its first environment)."""
    with open(f"/proc/{pid}/environ", "rb") as fh:
        start = dict(v.split(b"=", 1) for v in fh.read().split(b"\0") if b"=" in v)
    return start.get(b"GLIBC_TUNABLES", b"").decode()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("checked", [True, False])
def test_a_checked_judge_starts_its_child_with_glibcs_heap_checks_and_leaves_this_process_as_it_was(checked):
    import os

    from fuzzer.isolation import heapcheck
    from fuzzer.isolation.deaths import IsolatedJudge

    if checked and not heapcheck.environment():
        pytest.skip("this glibc offers no heap checks")
    before = dict(os.environ)
    with IsolatedJudge("cpu", "eager", checked=checked) as judge:
        judge._start()
        tunables = _tunables_of(judge.process.pid)
    assert ("glibc.malloc.tcache_count=0" in tunables) is checked, tunables
    assert dict(os.environ) == before


def test_a_checked_heap_catches_a_double_free_past_the_tcache():
    """With the tcache on, glibc catches a double free there (``free(): double free
    detected in tcache 2``); a checked heap has it off, and ``_int_free`` catches it."""
    import os

    from fuzzer.isolation import heapcheck

    env = heapcheck.environment()
    if not env:
        pytest.skip("this glibc offers no heap checks")
    plain = subprocess.run([sys.executable, "-c", DOUBLE_FREE], capture_output=True, text=True, timeout=60)
    checked = subprocess.run([sys.executable, "-c", DOUBLE_FREE], capture_output=True, text=True, timeout=60,
                             env={**os.environ, **env})
    assert "tcache" in plain.stderr and "tcache" not in checked.stderr, (plain.stderr, checked.stderr)
    assert "double free or corruption (fasttop)" in checked.stderr
    assert died_detail(checked.returncode, checked.stderr) == f"process died: {HEAP_CORRUPTION}"


def test_a_checked_child_puts_back_the_environment_it_was_started_with(monkeypatch):
    """What the child starts (the compiler, compile workers) runs unchecked."""
    import os

    from fuzzer.isolation import heapcheck

    monkeypatch.setenv("GLIBC_TUNABLES", "glibc.malloc.arena_max=2")
    monkeypatch.delenv("LD_PRELOAD", raising=False)
    monkeypatch.setattr(heapcheck, "check_takes_effect", lambda: True)
    env = heapcheck.environment()
    tunables = env["GLIBC_TUNABLES"]
    assert tunables.startswith("glibc.malloc.arena_max=2:") and "glibc.malloc.check=3" in tunables
    assert env["LD_PRELOAD"] == heapcheck.DEBUG_LIBRARY
    os.environ.update(env)  # as the child starts
    assert heapcheck.restore() is True
    assert os.environ["GLIBC_TUNABLES"] == "glibc.malloc.arena_max=2" and "LD_PRELOAD" not in os.environ
    assert heapcheck.RESTORE_ENV not in os.environ and heapcheck.restore() is False  # an unchecked child


def test_glibcs_malloc_checking_is_preloaded_only_where_it_takes_effect(monkeypatch):
    from fuzzer.isolation import heapcheck

    if heapcheck.glibc_version() is None:
        pytest.skip("not glibc")
    monkeypatch.setattr(heapcheck, "DEBUG_LIBRARY", "libdcefuzz_no_such_library.so.0")
    heapcheck.check_takes_effect.cache_clear()
    try:
        assert heapcheck.check_takes_effect() is False  # the library is absent: run without it
        env = heapcheck.environment()
        assert "LD_PRELOAD" not in env and "glibc.malloc.check" not in env["GLIBC_TUNABLES"]
        assert "glibc.malloc.tcache_count=0" in env["GLIBC_TUNABLES"]
    finally:
        heapcheck.check_takes_effect.cache_clear()


@pytest.mark.parametrize("ends, confirmed, started", [
    (["process died: heap corruption"], True, 1),                     # stops at the first death so
    ([None, None, "process died: SIGSEGV"], True, 3),                 # a third try: two withdrew it
    ([None, "early:process died: SIGSEGV", None, "process died: SIGABRT"], True, 4),
    ([None, "process died: SIGBUS", None, None], False, 4),           # withdrawn after the limit
])
def test_a_casualty_gets_more_than_two_fresh_processes_to_die_again(monkeypatch, ends, confirmed, started):
    from fuzzer.limits import PoolLimits
    from fuzzer.reduce.casualty import dies_again

    assert PoolLimits().casualty_confirmations > 2  # the campaign's: two withdrew one corruption in four
    limits = PoolLimits(casualty_confirmations=4)
    probes = _deaths(monkeypatch, *ends)
    confirmation = dies_again(_casualty(HEAP_CORRUPTION), limits)
    assert (confirmation.confirmed, len(probes), len(confirmation.ends)) == (confirmed, started, started)
    if not confirmed:
        assert confirmation.why() == ("it did not die so again in 4 fresh processes (ran to completion (ok) x3, "
                                      "crash: process died: SIGBUS)")
