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


def serve(conn, config, threads: int, compile_threads: int, stack_path: str | None = None) -> None:
    """The worker's main loop (the target of a spawned process).

    ``threads`` bounds torch's intra-op threads and ``compile_threads`` Inductor's
    kernel-compile pool, so that N workers share the machine's cores instead of each
    assuming it has all of them.  ``stack_path`` is where the worker writes its
    Python stack if it dies or the parent asks (``fuzzer.stacks``).
    """
    if stack_path:
        from fuzzer import stacks
        stacks.arm(stack_path)
    import torch

    from fuzzer import faults
    from fuzzer.campaign import entry_for
    from fuzzer.generate import generate
    from fuzzer.trial import run_trial

    # Ctrl-C reaches the whole process group; the parent decides what stops
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    torch.set_num_threads(threads)
    torch._inductor.config.compile_threads = compile_threads
    with faults.planted(config.fault):
        conn.send(("ready", os.getpid()))
        while True:
            message = conn.recv()
            if message[0] == "stop":
                return
            _, index, pseed = message
            start = time.perf_counter()
            result = run_trial(generate(pseed), config.device, config.backend)
            entries = []
            for finding in result.findings:
                if config.shrink:
                    conn.send(("shrinking", index, config.shrink_budget.seconds))
                entries.append(entry_for(finding, pseed, config).to_json())
            conn.send(("done", index, Report(result.status, time.perf_counter() - start, entries,
                                             list(result.flaky_kinds), rss_kb(), result.recompiles)))
