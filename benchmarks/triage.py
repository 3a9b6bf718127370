"""Measure triage on real findings: seconds and oracle calls per finding.

Every non-crash entry of the given corpus folders (default: the committed
``corpus/``) is triaged afresh with the default budget (``fuzzer.triage.culprit.
localise``: the stage walk, the switch probe, torch's compiler bisector), after one
warm-up compile.  Beside each triage the script times one plain fresh compile and
judgement of the same case (one oracle call), so the cost reads as a ratio too: the
machine's noise moves both alike.

Prints one row per finding, then the median and max seconds and oracle calls, and
the median against the target (median <= 60 s on a 2-core CPU).  Also says whether
each finding's blame agrees with the one saved in its entry.

    python benchmarks/triage.py [corpus ...] [--limit N]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

from fuzzer.corpus.store import load_all
from fuzzer.judge.execute import device_unavailable
from fuzzer.judge.trial import judge_fresh
from fuzzer.triage.culprit import localise, triageable

TARGET_MEDIAN_SECONDS = 60.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folders", nargs="*", default=["corpus"])
    parser.add_argument("--limit", type=int, default=None, help="triage at most N entries")
    args = parser.parse_args()
    loaded, bad = load_all(args.folders)
    entries = [e for e in loaded if triageable(e.kind, e.backend) and device_unavailable(e.device) is None]
    for line in bad:
        print(f"skipped: {line}", file=sys.stderr)
    entries = entries[:args.limit]
    if not entries:
        print("no triageable entries", file=sys.stderr)
        return 2
    judge_fresh(entries[0].case, entries[0].device)  # the cold compile is nobody's cost
    print(f"{'entry':34s} {'blame':40s} {'calls':>5s} {'seconds':>8s} {'1 call s':>8s} {'ratio':>6s} saved")
    seconds, calls = [], []
    agree = 0
    for e in entries:
        start = time.perf_counter()
        judge_fresh(e.case, e.device)
        one = time.perf_counter() - start
        c = localise(e.case, e.kind, e.bug_class, e.device, backend=e.backend)
        seconds.append(c.seconds)
        calls.append(c.oracle_calls)
        saved = e.culprit.blame if e.culprit is not None else None
        same = "same" if saved == c.blame else f"was {saved}"
        agree += saved == c.blame
        print(f"{e.id:34s} {str(c.blame):40s} {c.oracle_calls:5d} {c.seconds:8.1f} {one:8.2f} "
              f"{c.seconds / one:6.1f} {same}" + (" (budget spent)" if c.budget_exhausted else ""))
    med = statistics.median(seconds)
    print(f"\n{len(entries)} findings: seconds median {med:.1f} max {max(seconds):.1f}; "
          f"oracle calls median {statistics.median(calls):.0f} max {max(calls)}")
    print(f"blame as saved: {agree}/{len(entries)}")
    print(f"target median <= {TARGET_MEDIAN_SECONDS:.0f} s: {'met' if med <= TARGET_MEDIAN_SECONDS else 'MISSED'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
