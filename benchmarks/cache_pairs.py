"""Measure cache pairs: seconds per pair, beside a single-process trial of the same case.

For each of ``--programs`` programs of a seed, the cache case and its variant are
drawn as a ``--cache-pairs`` campaign draws them; the script times one pair
(``fuzzer.cache.trial.judge_pair``: two fresh processes, three compiles) and, in this
warm process, one fresh compile and judgement of the same case
(``fuzzer.judge.trial.judge_fresh``), so the cost reads as a ratio too: the
machine's noise moves both alike.  A pair's fixed cost is two interpreter starts and
two torch imports, which no warm worker can save.

Prints a row per pair (variant, verdict, seconds, ratio), then pairs per minute
(one worker, without confirmation or shrinking) and the median ratio.

    python benchmarks/cache_pairs.py [--programs N] [--seed S]
"""

from __future__ import annotations

import argparse
import statistics
import time

from fuzzer.cache import trial
from fuzzer.judge.contract import STALE_CACHE
from fuzzer.judge.trial import judge_fresh
from fuzzer.program.generate import program_seed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--programs", type=int, default=8)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    cases = []
    for i in range(args.programs):
        pseed = program_seed(args.seed, i)
        case = trial.cache_case(pseed)
        variant = trial.variant_for(case, pseed)
        if variant is not None:
            cases.append((case, variant))
    judge_fresh(cases[0][0], "cpu")  # the cold compile of this process is nobody's cost
    print(f"{'variant':22s} {'verdict':18s} {'pair s':>7s} {'1 compile s':>11s} {'ratio':>6s}")
    pairs, ratios = [], []
    for case, variant in cases:
        start = time.perf_counter()
        verdict = trial.judge_pair(case, variant, "cpu")
        pair_s = time.perf_counter() - start
        start = time.perf_counter()
        judge_fresh(case, "cpu")
        one_s = time.perf_counter() - start
        said = (STALE_CACHE if verdict.of_kind(STALE_CACHE) else
                ",".join(gap.reason for gap in verdict.untested) or verdict.status)
        pairs.append(pair_s)
        ratios.append(pair_s / one_s)
        print(f"{variant.label:22s} {said:18s} {pair_s:7.1f} {one_s:11.1f} {pair_s / one_s:6.1f}")
    print(f"\n{len(pairs)} pairs: {60 / statistics.mean(pairs):.1f} pairs/min on one worker "
          f"(median {statistics.median(pairs):.1f} s); a pair costs {statistics.median(ratios):.1f}x "
          "a fresh compile in a warm process (median)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
