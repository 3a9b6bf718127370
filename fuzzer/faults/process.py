"""Test-only faults that take the compiling process down: segfault, hang, runaway memory,
a corrupted heap (glibc's words, then an abort or a segfault).

They exist to prove the worker pool's isolation (``fuzzer.campaign.pool``), not to mimic a
custom-op regression, so they are kept out of the catalogue the self-test runs.
Each wraps Inductor's entry point ``torch._inductor.compile_fx.compile_fx`` (the
``inductor`` backend looks it up at call time) and misbehaves only when the graph
calls ``e_log``, so a campaign meets both healthy and deadly programs.

``test-triage-segfault`` dies only in *triage*: it drops every ``e_log`` call (an
effect-log finding) and segfaults when the scheduler's peak-memory reordering is
switched off, which only a triage probe does (``fuzzer.triage.switches``).

``test-candidate-segfault`` is the one that dies on a *shrink candidate*: it drops
every ``e_log`` call (an effect-log finding) from a graph that also calls another
custom op, and segfaults on a graph whose only custom-op calls are ``e_log``.  A
whole program that mixes ops is found, not killed; shrinking its finding deletes
the other ops, one candidate at a time, until one kills the process that judges it.
"""

from __future__ import annotations

import os
import signal
import threading
import time

from fuzzer.faults._fault import Fault

COMPILE_FX = "torch._inductor.compile_fx:compile_fx"
#: bytes allocated (and touched) per step by the runaway-memory fault
ALLOC_STEP = 64 * 1024 * 1024
#: seconds the hang fault sleeps: longer than any time limit the pool would use
HANG_SECONDS = 10 ** 6


def _calls_e_log(gm) -> bool:
    return any(n.op == "call_function" and "dcefuzz.e_log" in str(n.target) for n in gm.graph.nodes)


def _custom_calls(gm) -> list:
    """The graph's calls of dcefuzz's custom ops."""
    return [n for n in gm.graph.nodes if n.op == "call_function" and str(n.target).startswith("dcefuzz.")]


def _segfault() -> None:
    # to this thread, not the process: a process-directed signal may land on another
    # thread (a Ray actor has several) while this one compiles on for a moment
    if hasattr(signal, "pthread_kill"):
        signal.pthread_kill(threading.get_ident(), signal.SIGSEGV)
    os.kill(os.getpid(), signal.SIGSEGV)


#: what glibc writes before it aborts on a corrupted heap (``fuzzer.judge.death``)
HEAP_WORDS = b"free(): invalid size\n"


def _heap_abort() -> None:
    os.write(2, HEAP_WORDS)
    os.abort()


def _heap_segfault() -> None:
    # a corrupted heap that faults after glibc spoke: the same death as the abort
    os.write(2, HEAP_WORDS)
    _segfault()


def _hang() -> None:
    time.sleep(HANG_SECONDS)


def _alloc() -> None:
    hoard = []
    while True:
        hoard.append(bytearray(b"\x01") * ALLOC_STEP)


def _build(action):
    def build(current):
        original = current(COMPILE_FX)

        def compile_fx(gm, *args, **kwargs):
            if _calls_e_log(gm):
                action()
            return original(gm, *args, **kwargs)

        return {COMPILE_FX: compile_fx}
    return build


def _build_candidate_segfault(current):
    original = current(COMPILE_FX)

    def compile_fx(gm, *args, **kwargs):
        calls = _custom_calls(gm)
        logs = [n for n in calls if "dcefuzz.e_log" in str(n.target)]
        if logs and len(logs) == len(calls):
            _segfault()
        if logs:
            for node in logs:  # e_log returns nothing: no node reads it
                gm.graph.erase_node(node)
            gm.recompile()
        return original(gm, *args, **kwargs)

    return {COMPILE_FX: compile_fx}


def _build_triage_segfault(current):
    original = current(COMPILE_FX)

    def compile_fx(gm, *args, **kwargs):
        from torch._inductor import config

        if not config.reorder_for_peak_memory:
            _segfault()
        logs = [n for n in _custom_calls(gm) if "dcefuzz.e_log" in str(n.target)]
        for node in logs:  # e_log returns nothing: no node reads it
            gm.graph.erase_node(node)
        if logs:
            gm.recompile()
        return original(gm, *args, **kwargs)

    return {COMPILE_FX: compile_fx}


def _fault(name: str, what: str, action, kind: str) -> Fault:
    return Fault(name=name, bug_class="process", expected_kind=kind, dynamic_only=False,
                 description=f"test only: {what} when compiling a graph that calls e_log",
                 targets=(COMPILE_FX,), build=_build(action))


FAULTS = (
    _fault("test-segfault", "the process segfaults", _segfault, "crash"),
    _fault("test-hang", "the compile never returns", _hang, "timeout"),
    _fault("test-alloc", "memory grows without bound", _alloc, "crash"),
    _fault("test-heap-abort", "glibc's words on a corrupted heap, then an abort", _heap_abort, "crash"),
    _fault("test-heap-segfault", "glibc's words on a corrupted heap, then a segfault", _heap_segfault, "crash"),
    Fault(name="test-candidate-segfault", bug_class="process", expected_kind="crash", dynamic_only=False,
          description="test only: e_log calls are dropped from a graph that calls other custom ops "
                      "too; the process segfaults on a graph whose only custom-op calls are e_log",
          targets=(COMPILE_FX,), build=_build_candidate_segfault),
    Fault(name="test-triage-segfault", bug_class="process", expected_kind="crash", dynamic_only=False,
          description="test only: e_log calls are dropped (an effect-log finding); the process segfaults "
                      "when compiling with "
                      "reorder_for_peak_memory off (as only a triage probe does)",
          targets=(COMPILE_FX,), build=_build_triage_segfault),
)
