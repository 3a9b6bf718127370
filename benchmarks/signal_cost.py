"""What the feedback signal costs per program, against Python line coverage of torch.

    python benchmarks/signal_cost.py [--programs 12] [--seed 0] [--features all]

Each of the campaign's programs 0..N-1 (``--features``, every feature by default) is
tried three times in one warm process, with the on-disk caches off for all three so
that every try compiles in full:

  plain     ``run_trial(case, "cpu")``
  signal    ``run_trial(case, "cpu", signal=True)``: the tokens feedback steers by
  coverage  the same, inside coverage.py's line tracer over ``torch._dynamo``,
            ``torch._functorch`` and ``torch._inductor`` (``pip install coverage``)

The order of the three rotates from program to program, so that the process's warm-up
and the machine's drift fall on all of them; the first program (the cold compile) is
left out of the medians.  The script prints the median seconds per program of each, the
ratios signal/plain and coverage/plain, and how many distinct tokens and torch lines
the programs reached (what each signal could tell a pool).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("TORCHINDUCTOR_FORCE_DISABLE_CACHES", "1")

#: the packages coverage.py traces: the compiler's Python
TRACED = ("torch._dynamo", "torch._functorch", "torch._inductor")
VARIANTS = ("plain", "signal", "coverage")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--programs", type=int, default=12)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--features", default="all")
    args = parser.parse_args(argv)
    try:
        import coverage
    except ImportError:
        sys.exit("signal_cost.py needs coverage.py: pip install coverage")
    from fuzzer.judge.trial import run_trial
    from fuzzer.program import features as feats
    from fuzzer.program.generate import generate, program_seed

    features = feats.parse(args.features)
    seconds: dict[str, list[float]] = {v: [] for v in VARIANTS}
    tokens: set[str] = set()
    lines: set[tuple[str, int]] = set()
    for i in range(args.programs):
        case = generate(program_seed(args.seed, i), features=features)
        rotation = VARIANTS[i % 3:] + VARIANTS[:i % 3]
        for variant in rotation:
            cov = coverage.Coverage(source_pkgs=list(TRACED), data_file=None) if variant == "coverage" else None
            start = time.perf_counter()
            if cov:
                cov.start()
            try:
                result = run_trial(case, "cpu", signal=variant != "plain")
            finally:
                if cov:
                    cov.stop()
            took = time.perf_counter() - start
            if i:
                seconds[variant].append(took)
            if variant == "signal":
                tokens.update(result.signal)
            if cov:
                data = cov.get_data()
                for f in data.measured_files():
                    lines.update((f, n) for n in data.lines(f) or ())
        print(f"program {i}: " + ", ".join(f"{v} {seconds[v][-1]:.2f}s" for v in VARIANTS if i),
              flush=True)
    med = {v: statistics.median(seconds[v]) for v in VARIANTS}
    print(f"\n{len(seconds['plain'])} programs (the cold first left out), seconds per program (median):")
    for v in VARIANTS:
        print(f"  {v:9s} {med[v]:6.2f}")
    print(f"signal/plain   {med['signal'] / med['plain']:.2f}")
    print(f"coverage/plain {med['coverage'] / med['plain']:.2f}")
    print(f"distinct tokens {len(tokens)}, distinct torch lines {len(lines)}")


if __name__ == "__main__":
    main()
