"""A campaign worker: one warm process that runs trials for the parent.

Workers are started with ``spawn`` (never ``fork``: a forked CUDA context is unusable)
and stay alive across many programs, so torch's import and the first, cold compile are
paid once per worker, not once per program.  The parent sends program indices; the
worker generates, runs, judges, confirms and shrinks, and sends back finished corpus
entries.  It never writes the corpus itself: the parent deduplicates and saves, so a
worker that dies mid-program loses nothing that was already reported.

Messages (tuples over a duplex pipe):

    parent -> worker   ("run", index, program_seed) | ("stop",)
    worker -> parent   ("ready", pid) | ("shrinking", index, seconds) | ("done", index, Report)

"shrinking" tells the parent that the program's time limit is extended by the
shrink budget: shrinking a finding legitimately takes longer than running a program.
"""

from __future__ import annotations

import gc
import os
import resource
import signal
import time
from dataclasses import dataclass, field


@dataclass
class Report:
    """What a worker reports for one program."""

    status: str
    seconds: float
    entries: list[dict] = field(default_factory=list)
    flaky: list[str] = field(default_factory=list)
    rss_kb: int = 0
    recompiles: int = 0


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


def freeze_heap() -> None:
    """Take what the process holds now out of the garbage collector's full passes.

    A warm worker holds about half a million long-lived objects (torch, Inductor,
    the registered ops) and, since its memory stays flat, the collector's rule for a
    full collection (a quarter of the long-lived objects are new) fires every ten
    programs or so; each full pass walks all of them, about 0.35 s on a 2-core
    machine, some 3% of a campaign.  ``gc.freeze`` moves them to a generation that
    is never walked.  Frozen objects are never collected either, so this runs right
    after a reset (``fresh_compile_state``) and a full collection, when nothing of a
    program is left alive.
    """
    from fuzzer.execute import fresh_compile_state

    fresh_compile_state()
    gc.collect()
    gc.freeze()


def serve(conn, config, limits, compile_threads: int, stack_path: str | None = None) -> None:
    """The worker's main loop (the target of a spawned process).

    ``limits.threads`` bounds torch's intra-op threads and ``compile_threads``
    Inductor's kernel-compile pool, so that N workers share the machine's cores
    instead of each assuming it has all of them.  ``stack_path`` is where the worker
    writes its Python stack if it dies or the parent asks (``fuzzer.stacks``).
    """
    if stack_path:
        from fuzzer import stacks
        stacks.arm(stack_path)
    import torch

    from fuzzer import campaign, faults, generate, trial  # noqa: F401 - loaded before "ready"

    # Ctrl-C reaches the whole process group; the parent decides what stops
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    torch.set_num_threads(limits.threads)
    torch._inductor.config.compile_threads = compile_threads
    ran = 0
    with faults.planted(config.fault):
        conn.send(("ready", os.getpid()))
        while True:
            message = conn.recv()
            if message[0] == "stop":
                return
            _, index, pseed = message
            conn.send(("done", index, _program(conn, index, pseed, config)))
            ran += 1
            if ran == limits.freeze_after_programs:
                freeze_heap()


def _program(conn, index: int, pseed: int, config) -> Report:
    """Run, judge, confirm (and shrink) one program; nothing of it outlives the call."""
    from fuzzer.campaign import entry_for
    from fuzzer.generate import generate
    from fuzzer.trial import run_trial

    start = time.perf_counter()
    result = run_trial(generate(pseed), config.device, config.backend)
    entries = []
    for finding in result.findings:
        if config.shrink:
            conn.send(("shrinking", index, config.shrink_budget.seconds))
        entries.append(entry_for(finding, pseed, config).to_json())
    return Report(result.status, time.perf_counter() - start, entries, list(result.flaky_kinds),
                  rss_kb(), result.recompiles)
