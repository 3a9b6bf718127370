"""Measure the shrinker on real findings: planted faults and the committed corpus.

For every applicable fault, the first finding of the fault's kind that a seeded
campaign makes (and that disappears without the fault) is shrunk with the default
budget; for every entry in corpus/ that records its program seed, the original
generated program is rebuilt from the seed and shrunk again.  Each result is then
checked for 1-minimality: removing any one remaining statement (with what reads
its result) or returned value must lose the bug.

Prints one table row per finding, then medians against the targets
(median < 60 s, median < 150 oracle calls, every result 1-minimal, planted-fault
repros at most 3 statements).

    python benchmarks/shrink.py [--seed 0] [--faults a,b] [--corpus corpus] [--max-programs 80]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

from fuzzer import faults
from fuzzer.corpus.store import BadEntry, load
from fuzzer.judge import contract
from fuzzer.judge.execute import default_device
from fuzzer.judge.trial import Finding, judge_fresh, run_trial
from fuzzer.program.generate import generate, program_seed
from fuzzer.limits import SHRINK
from fuzzer.reduce.shrinker import is_one_minimal, shrink

TARGET_MEDIAN_SECONDS = 60.0
TARGET_MEDIAN_CALLS = 150
TARGET_FAULT_STATEMENTS = 3


def first_fault_finding(name: str, seed: int, device: str, max_programs: int):
    """The first finding caused by the (already planted) fault, with its program index."""
    kind = faults.get(name).expected_kind
    for i in range(max_programs):
        case = generate(program_seed(seed, i))
        for f in run_trial(case, device).findings:
            if f.kind != kind:
                continue
            with faults.suspended():
                if judge_fresh(case, device).of_kind(kind):
                    continue  # torch's own bug, not the fault's
            return f, i
    return None, max_programs


def measure(label: str, case, kind: str, divs, device: str) -> dict:
    start = time.perf_counter()
    result = shrink(Finding(kind, case, divs, device, "inductor"), budget=SHRINK.budget)
    seconds = time.perf_counter() - start
    minimal, keeps = is_one_minimal(result.case, kind, result.divergences,
                                    lambda c: judge_fresh(c, device))
    return {"finding": label, "kind": kind, "original": result.original_statements,
            "reduced": result.statements, "calls": result.oracle_calls, "seconds": seconds,
            "one_minimal": minimal, "confirmed": result.confirmed, "keeps": keeps,
            "signature": result.signature.text}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--faults", default=None, help="comma-separated fault names (default: all)")
    ap.add_argument("--corpus", default="corpus")
    ap.add_argument("--max-programs", type=int, default=80)
    ap.add_argument("--device", default=None)
    args = ap.parse_args()
    device = args.device or default_device()

    rows = []
    names = args.faults.split(",") if args.faults else sorted(faults.CATALOGUE)
    for name in names:
        if faults.get(name).unavailable():
            print(f"{name}: not applicable to this torch", file=sys.stderr)
            continue
        with faults.planted(name):
            finding, index = first_fault_finding(name, args.seed, device, args.max_programs)
            if finding is None:
                print(f"{name}: no finding in {index} programs", file=sys.stderr)
                continue
            rows.append({"fault": True, **measure(f"fault {name} (program {index})", finding.case,
                                                  finding.kind, finding.divergences, device)})
        print(f"done: {rows[-1]['finding']}", file=sys.stderr, flush=True)

    for path in sorted(Path(args.corpus).glob("*.json")):
        try:
            entry = load(path)
        except BadEntry as exc:
            print(f"skip {exc}", file=sys.stderr)
            continue
        if entry.fault or entry.seed is None:
            continue
        original = generate(entry.seed)
        verdict = judge_fresh(original, device)
        divs = verdict.of_kind(entry.kind) if verdict.status == contract.OK else []
        if not divs:
            print(f"{entry.id}: original program no longer diverges here", file=sys.stderr)
            continue
        rows.append({"fault": False, **measure(f"corpus {entry.id}", original, entry.kind, divs, device)})
        print(f"done: {rows[-1]['finding']}", file=sys.stderr, flush=True)

    header = f"{'finding':58s} {'kind':15s} {'orig':>4s} {'red':>4s} {'calls':>5s} {'secs':>6s}  1-minimal"
    print(header)
    print("-" * len(header))
    for r in rows:
        print(f"{r['finding'][:58]:58s} {r['kind']:15s} {r['original']:4d} {r['reduced']:4d} "
              f"{r['calls']:5d} {r['seconds']:6.1f}  {'yes' if r['one_minimal'] else 'NO ' + ', '.join(r['keeps'])}")
    if not rows:
        print("no findings measured")
        return 1
    med_s = statistics.median(r["seconds"] for r in rows)
    med_c = statistics.median(r["calls"] for r in rows)
    all_min = all(r["one_minimal"] for r in rows)
    fault_max = max((r["reduced"] for r in rows if r["fault"]), default=0)
    print()
    print(f"median seconds      {med_s:.1f}  (target < {TARGET_MEDIAN_SECONDS:.0f})")
    print(f"median oracle calls {med_c:.0f}  (target < {TARGET_MEDIAN_CALLS})")
    print(f"all 1-minimal       {'yes' if all_min else 'no'}")
    print(f"largest planted-fault repro {fault_max} statements (target <= {TARGET_FAULT_STATEMENTS})")
    ok = (med_s < TARGET_MEDIAN_SECONDS and med_c < TARGET_MEDIAN_CALLS and all_min
          and fault_max <= TARGET_FAULT_STATEMENTS)
    print("targets met" if ok else "targets NOT met")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
