"""Campaign throughput, side by side on the same generated programs, and worker memory.

    python benchmarks/throughput.py [--programs 60] [--fresh-programs 6] [--seed 0]
    python benchmarks/throughput.py --memory 500

Variants, each a fresh process on programs of the same campaign seed, timed from
process start to exit (so each pays its own import and cold compile):

  a  a bare loop: generate, compile with torch.compile(dynamic=True), run eager and
     compiled once per binding; no judging, no confirmation, nothing saved;
  b  dcefuzz: ``dcefuzz run --jobs 1 --no-shrink`` (a warm worker does everything a
     campaign does: three eager runs per binding, judging, confirming findings after
     a fresh compile, saving entries);
  b2 the same with ``--jobs 2``;
  c  one fresh subprocess per program (the design of most fuzzers), on the first
     ``--fresh-programs`` of them.

a, b and b2 each run twice, on programs 0..N-1 and 0..2N-1.  Prints programs/min per
variant end to end (the 2N run: process starts and the first cold compile included)
and marginal (N programs over the difference of the two times: the fixed costs cancel,
leaving the steady state a long campaign runs at), and the ratios b/a, b/c, b2/b
(targets 0.9, 5, 1.8).  c has no fixed cost to cancel: every program is a fresh
process.  Shrinking is off in b and b2: it is work per finding that the bare loop does
not do.

Caches: every variant runs with Inductor's whole-graph caches off (FX graph cache,
AOTAutograd cache), since a real campaign never compiles the same program twice and
the variants run the same programs in turn; the kernel code cache stays on and is
warmed by one untimed pass of the bare loop first, so no variant pays cold kernel
builds that an earlier one already paid.

``--memory N`` measures worker memory over N programs: first the worker's own loop
(``run_trial`` and its per-program reset) in this process without recycling, which
shows what torch leaves behind per program; then a real ``dcefuzz run --jobs 1``,
whose worker memory (read from its stats lines) should stay within 10% of its first
reading after the warm-up, recycling included.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

BARE = """
import sys, time, torch
from fuzzer import codegen
from fuzzer.execute import make_inputs
from fuzzer.generate import generate, program_seed
seed, start, count = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
for i in range(start, start + count):
    case = generate(program_seed(seed, i))
    torch._dynamo.reset()
    compiled = torch.compile(codegen.build(case.program), dynamic=True)
    eager = codegen.build(case.program)
    for b in range(len(case.bindings)):
        eager(*make_inputs(case, b, "cpu"))
        try:
            compiled(*make_inputs(case, b, "cpu"))
        except Exception:
            pass
"""


#: whole-graph caches off for every variant (see the module docstring)
ENV = dict(os.environ, TORCHINDUCTOR_FX_GRAPH_CACHE="0", TORCHINDUCTOR_AUTOGRAD_CACHE="0")


def _timed(cmd: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENV)
    return time.perf_counter() - start


def throughput(programs: int, fresh_programs: int, seed: int) -> None:
    """Each of a, b, b2 runs twice: on programs 0..N-1 and 0..2N-1.

    End to end (the 2N run) includes process starts and the first, cold compile; the
    marginal rate, N programs over the difference of the two times, is the steady
    state a long campaign runs at: fixed costs cancel out.
    """
    py = sys.executable
    n, n2 = programs, 2 * programs
    with tempfile.TemporaryDirectory() as tmp:
        def dcefuzz(jobs: int, count: int) -> float:
            run = os.path.join(tmp, f"jobs{jobs}-{count}")
            return _timed([py, "-m", "fuzzer", "run", "--programs", str(count), "--seed", str(seed),
                           "--jobs", str(jobs), "--no-shrink", "--corpus", os.path.join(run, "corpus"),
                           "--state", os.path.join(run, "state")])

        def bare(count: int) -> float:
            return _timed([py, "-c", BARE, str(seed), "0", str(count)])

        warm = bare(n2)
        print(f"(warm-up pass of the bare loop over {n2} programs: {warm:.1f}s, not counted)", flush=True)
        times = {}
        for key, label, run in (("a", "bare loop", bare),
                                ("b", "dcefuzz --jobs 1", lambda c: dcefuzz(1, c)),
                                ("b2", "dcefuzz --jobs 2", lambda c: dcefuzz(2, c))):
            times[key] = (run(n), run(n2))
            print(f"{key:2s} {label:18s} {n} programs in {times[key][0]:6.1f}s, "
                  f"{n2} in {times[key][1]:6.1f}s", flush=True)
        fresh = sum(_timed([py, "-c", BARE, str(seed), str(i), "1"]) for i in range(fresh_programs))
        print(f"c  process per program {fresh_programs} programs in {fresh:.1f}s", flush=True)

    end_to_end = {k: n2 / t2 * 60 for k, (_, t2) in times.items()}
    marginal = {k: (n2 - n) / (t2 - t1) * 60 if t2 > t1 else float("nan") for k, (t1, t2) in times.items()}
    end_to_end["c"] = marginal["c"] = fresh_programs / fresh * 60
    print()
    print(f"{'variant':30s} {'end to end':>11s} {'marginal':>9s}  (programs/min)")
    for k, label in (("a", "a bare loop"), ("b", "b dcefuzz, 1 warm worker"),
                     ("b2", "b2 dcefuzz, 2 warm workers"), ("c", "c fresh process per program")):
        print(f"{label:30s} {end_to_end[k]:11.1f} {marginal[k]:9.1f}")
    print()
    print(f"{'ratio':6s} {'end to end':>11s} {'marginal':>9s}  target")
    for name, top, bottom, target in (("b/a", "b", "a", 0.9), ("b/c", "b", "c", 5), ("b2/b", "b2", "b", 1.8)):
        print(f"{name:6s} {end_to_end[top] / end_to_end[bottom]:11.2f} "
              f"{marginal[top] / marginal[bottom]:9.2f}  >= {target}")


def memory(programs: int, seed: int) -> None:
    """Worker memory over ``programs`` programs, two ways.

    1. The worker's loop in this process (``run_trial``, which resets dynamo per
       program), with no recycling: the growth torch leaves behind per program.
    2. A real campaign (``dcefuzz run --jobs 1``), its worker's resident memory read
       from the campaign's stats lines: what recycling makes of that growth.
    """
    from fuzzer.generate import generate, program_seed
    from fuzzer.limits import PoolLimits
    from fuzzer.trial import run_trial
    from fuzzer.worker import rss_kb

    warm = PoolLimits().recycle_baseline_programs
    print(f"1. the worker loop in one process, no recycling ({programs} programs)")
    marks = {}
    start = time.perf_counter()
    for i in range(programs):
        run_trial(generate(program_seed(seed, i)), "cpu")
        if i + 1 == warm or (i + 1) % 50 == 0 or i + 1 == programs:
            marks[i + 1] = rss_kb()
            print(f"   after {i + 1:4d} programs: {marks[i + 1] / 1024:7.1f} MiB "
                  f"({time.perf_counter() - start:.0f}s)", flush=True)
    base, last = marks[warm], marks[programs]
    print(f"   growth from program {warm} to {programs}: {100 * (last - base) / base:.1f}% "
          f"({(last - base) / 1024 / (programs - warm):.2f} MiB a program)")

    print(f"2. dcefuzz run --jobs 1 --programs {programs} --no-shrink (recycling on)")
    with tempfile.TemporaryDirectory() as tmp:
        state = os.path.join(tmp, "state")
        subprocess.run([sys.executable, "-m", "fuzzer", "run", "--programs", str(programs),
                        "--seed", str(seed), "--jobs", "1", "--no-shrink",
                        "--corpus", os.path.join(tmp, "corpus"), "--state", state],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENV)
        with open(os.path.join(state, "stats.jsonl")) as fh:
            lines = [json.loads(line) for line in fh if line.strip()]
    readings = [(ln["programs"], ln["worker_rss_mb"][0], ln.get("workers_replaced", 0))
                for ln in lines if ln.get("worker_rss_mb") and ln["worker_rss_mb"][0]]
    for done, mb, replaced in readings:
        print(f"   after {done:4d} programs: {mb:5d} MiB, {replaced} recycled")
    warm_readings = [mb for done, mb, _ in readings if done >= warm]
    if warm_readings:
        base = warm_readings[0]
        print(f"   growth past the first reading after program {warm}: "
              f"{100 * (max(warm_readings) - base) / base:.1f}% (target < 10%)")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--programs", type=int, default=60)
    ap.add_argument("--fresh-programs", type=int, default=6)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--memory", type=int, default=None, metavar="N")
    args = ap.parse_args()
    if args.memory:
        memory(args.memory, args.seed)
    else:
        throughput(args.programs, args.fresh_programs, args.seed)
    return 0


if __name__ == "__main__":
    sys.exit(main())
