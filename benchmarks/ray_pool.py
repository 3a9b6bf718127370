"""The local pool against Ray local: the same programs, the same number of workers.

    python benchmarks/ray_pool.py [--programs 12] [--rounds 3] [--jobs 2] [--seed 0]

Each variant is a fresh ``dcefuzz run`` process on programs 0..N-1 and 0..2N-1 of one
seed, ``--no-shrink --no-triage`` (work per finding is the same on both and would only
add noise):

  local  ``--jobs J``: spawned worker processes on this machine;
  ray    ``--ray local --jobs J``: a Ray instance started by the run, J actors.

Programs/min are reported end to end (the 2N run: the process start, Ray's start-up and
the workers' imports and first compiles included) and marginal (N programs over the
difference of the two times: the fixed costs cancel, leaving the steady state a long
campaign runs at).  Ray's start-up is the ``ray cluster ... reached in Xs`` the run
prints.  Rounds are interleaved, each starting with the other variant, because this
machine's timings drift by 5-10% from one minute to the next; the script prints every
round and the median ratio ray/local (target >= 0.9).  Inductor's whole-graph caches are
off, as in ``throughput.py``: the variants run the same programs in turn.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

ENV = dict(os.environ, TORCHINDUCTOR_FX_GRAPH_CACHE="0", TORCHINDUCTOR_AUTOGRAD_CACHE="0")
_REACHED = re.compile(r"reached in ([\d.]+)s")


def _run(args: list[str]) -> tuple[float, float | None]:
    """Seconds from process start to exit, and Ray's start-up seconds if it printed them."""
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "fuzzer", "run", *args], env=ENV, check=True,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    seconds = time.perf_counter() - start
    m = _REACHED.search(done.stderr)
    return seconds, float(m.group(1)) if m else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--programs", type=int, default=12)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    a = parser.parse_args()
    n = a.programs
    variants = {"local": [], "ray": ["--ray", "local"]}
    ratios_end, ratios_marginal, startups = [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        runs = 0

        def timed(extra: list[str], count: int) -> tuple[float, float | None]:
            nonlocal runs
            runs += 1
            return _run(["--programs", str(count), "--seed", str(a.seed), "--jobs", str(a.jobs), "--no-shrink",
                         "--no-triage", "--state", os.path.join(tmp, f"run{runs}"), *extra])

        for r in range(a.rounds):
            order = list(variants) if r % 2 == 0 else list(reversed(variants))
            times = {}
            for key in order:
                t1, s1 = timed(variants[key], n)
                t2, s2 = timed(variants[key], 2 * n)
                times[key] = (t1, t2)
                startups += [s for s in (s1, s2) if s is not None]
            end = {k: 2 * n / t2 * 60 for k, (_, t2) in times.items()}
            marginal = {k: n / (t2 - t1) * 60 if t2 > t1 else float("nan") for k, (t1, t2) in times.items()}
            ratios_end.append(end["ray"] / end["local"])
            ratios_marginal.append(marginal["ray"] / marginal["local"])
            print(f"round {r + 1} (order {', '.join(order)}):", flush=True)
            for key in variants:
                print(f"   {key:5s} {n} programs in {times[key][0]:6.1f}s, {2 * n} in {times[key][1]:6.1f}s: "
                      f"{end[key]:5.1f}/min end to end, {marginal[key]:5.1f}/min marginal", flush=True)
            print(f"   ray/local {ratios_end[-1]:.2f} end to end, {ratios_marginal[-1]:.2f} marginal", flush=True)
    print()
    print(f"ray/local throughput, median of {a.rounds} rounds ({a.jobs} workers each): "
          f"{statistics.median(ratios_end):.2f} end to end, {statistics.median(ratios_marginal):.2f} marginal "
          "(target >= 0.9)")
    if startups:
        print(f"ray start-up: median {statistics.median(startups):.1f}s (min {min(startups):.1f}s, "
              f"max {max(startups):.1f}s) over {len(startups)} runs")


if __name__ == "__main__":
    main()
