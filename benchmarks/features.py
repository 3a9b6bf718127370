"""Programs per minute with and without features, side by side on one machine.

    python benchmarks/features.py [--programs 40] [--rounds 2] [--seed 0] [--each]

Each variant is a fresh process that runs what a campaign worker runs per program
(``run_trial``: eager, compiled, the reference and determinism runs where they are
needed, the confirming fresh compile of a finding), with Inductor's whole-graph
caches off, on programs ``0..N-1`` of one campaign seed drawn with the variant's
``--features``.  The first program is a warm-up (imports, the first cold compile)
and is not timed.

Variants: ``none`` (the programs of before features), ``all`` (the default weights)
and, with ``--each``, every feature alone at weight 1.  The variants of a round run
one after another, rounds interleaved so that drift of the machine's speed spreads
over all of them; the script prints each round, the median programs/min of each
variant and its ratio to ``none``, the feature mix of the programs each ran (how
many had each feature) and their outcomes (clean, finding, untested, ...).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys

WORKER = r"""
import json, sys, time, collections
import torch
torch._inductor.config.fx_graph_cache = False
torch._functorch.config.enable_autograd_cache = False
from fuzzer.program import features
from fuzzer.program.generate import generate, program_seed
from fuzzer.judge.trial import run_trial
seed, n, spec = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
table = features.parse(spec)
cases = [generate(program_seed(seed, i), features=table) for i in range(n + 1)]
run_trial(cases[0], "cpu")  # warm-up: imports and the first cold compile
statuses, mix = collections.Counter(), collections.Counter()
start = time.perf_counter()
for case in cases[1:]:
    statuses[run_trial(case, "cpu").status] += 1
    mix.update(case.program.features())
seconds = time.perf_counter() - start
print(json.dumps({"seconds": seconds, "statuses": statuses, "mix": mix}))
"""


def run_variant(spec: str, seed: int, programs: int) -> dict:
    out = subprocess.run([sys.executable, "-c", WORKER, str(seed), str(programs), spec],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--programs", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--each", action="store_true", help="also every feature alone at weight 1")
    args = parser.parse_args()

    from fuzzer.program import features

    variants = ["none", "all"] + ([f"{f.name}=1" for f in features.FEATURES] if args.each else [])
    rates: dict[str, list[float]] = {v: [] for v in variants}
    last: dict[str, dict] = {}
    for r in range(args.rounds):
        order = variants[r % len(variants):] + variants[:r % len(variants)]
        for spec in order:
            result = run_variant(spec, args.seed, args.programs)
            rate = args.programs / result["seconds"] * 60
            rates[spec].append(rate)
            last[spec] = result
            print(f"round {r + 1}  {spec:<20} {rate:6.1f} programs/min  ({result['seconds']:.0f} s)", flush=True)
    base = statistics.median(rates["none"])
    print(f"\n{'features':<20} {'programs/min':>12} {'vs none':>8}  outcomes; feature mix (of {args.programs})")
    for spec in variants:
        median = statistics.median(rates[spec])
        outcomes = ", ".join(f"{k} {v}" for k, v in sorted(last[spec]["statuses"].items()))
        mix = ", ".join(f"{k} {v}" for k, v in sorted(last[spec]["mix"].items())) or "-"
        print(f"{spec:<20} {median:12.1f} {median / base:8.2f}  {outcomes}; {mix}")


if __name__ == "__main__":
    main()
