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
    python benchmarks/triage.py FOLDER --key-only [--every K] [--limit N]

``--key-only`` compares, on each finding, the whole triage with the one a repeat of a
known bug gets (``localise(key_only=True)``: only the probes its key needs), the two
run one after the other in an order that alternates from finding to finding: the
seconds and oracle calls of each, and whether their bug keys agree (they must).  Run
it on unshrunk findings (a campaign's corpus made with ``--no-shrink --no-triage``),
which was what a repeat was triaged as; ``--every K`` takes every K-th entry.

``--repeat`` measures what a repeat costs now against then, on each finding: the
key-only triage of the program as found (then), and a short shrink
(``TRIAGE.repeat_shrink_calls`` candidates) followed by the key-only triage of what
it reached (now), in alternating order; and, as the reference, the key a new finding
of the same program gets (a full shrink, then the whole triage).  It prints the
seconds of each and whether each key is the reference's.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

from fuzzer.corpus.store import load_all
from fuzzer.judge.execute import device_unavailable
from fuzzer.judge.trial import Finding, judge_fresh
from fuzzer.triage.culprit import localise, triageable
from fuzzer.triage.family import family

TARGET_MEDIAN_SECONDS = 60.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folders", nargs="*", default=["corpus"])
    parser.add_argument("--limit", type=int, default=None, help="triage at most N entries")
    parser.add_argument("--every", type=int, default=1, help="take every K-th triageable entry")
    parser.add_argument("--key-only", action="store_true",
                        help="compare the whole triage with the key-only triage of a repeat")
    parser.add_argument("--repeat", action="store_true",
                        help="compare a repeat's key-only triage as found with one after a short shrink")
    args = parser.parse_args()
    loaded, bad = load_all(args.folders)
    entries = [e for e in loaded if triageable(e.kind, e.backend) and device_unavailable(e.device) is None]
    for line in bad:
        print(f"skipped: {line}", file=sys.stderr)
    entries = entries[::max(1, args.every)][:args.limit]
    if not entries:
        print("no triageable entries", file=sys.stderr)
        return 2
    judge_fresh(entries[0].case, entries[0].device)  # the cold compile is nobody's cost
    if args.key_only:
        return compare_key_only(entries)
    if args.repeat:
        return compare_repeat(entries)
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
        print(f"{e.id:34s} {c.blame!s:40s} {c.oracle_calls:5d} {c.seconds:8.1f} {one:8.2f} "
              f"{c.seconds / one:6.1f} {same}" + (" (budget spent)" if c.budget_exhausted else ""))
    med = statistics.median(seconds)
    print(f"\n{len(entries)} findings: seconds median {med:.1f} max {max(seconds):.1f}; "
          f"oracle calls median {statistics.median(calls):.0f} max {max(calls)}")
    print(f"blame as saved: {agree}/{len(entries)}")
    print(f"target median <= {TARGET_MEDIAN_SECONDS:.0f} s: {'met' if med <= TARGET_MEDIAN_SECONDS else 'MISSED'}")
    return 0


def compare_key_only(entries) -> int:
    """The whole triage and the key-only one of each entry, side by side."""
    print(f"{'entry':34s} {'kind':14s} {'key (family @ blame)':60s} {'whole':>12s} {'key only':>12s} agree")
    rows = []
    for i, e in enumerate(entries):
        runs = {}
        for key_only in ((False, True) if i % 2 == 0 else (True, False)):
            runs[key_only] = localise(e.case, e.kind, e.bug_class, e.device, backend=e.backend, key_only=key_only)
        whole, quick = runs[False], runs[True]
        key = f"{family(e.bug_class)} @ {whole.key}"
        agree = whole.key == quick.key
        rows.append((whole, quick, agree))
        print(f"{e.id:34s} {e.kind:14s} {key[-60:]:60s} {whole.oracle_calls:3d} {whole.seconds:7.1f}s "
              f"{quick.oracle_calls:3d} {quick.seconds:7.1f}s {'yes' if agree else 'NO: ' + str(quick.key)}"
              + (" (budget spent)" if whole.budget_exhausted or quick.budget_exhausted else ""))
    whole_s = [w.seconds for w, _, _ in rows]
    quick_s = [q.seconds for _, q, _ in rows]
    print(f"\n{len(rows)} findings: whole triage median {statistics.median(whole_s):.1f}s "
          f"({statistics.median(w.oracle_calls for w, _, _ in rows):.0f} calls), key only median "
          f"{statistics.median(quick_s):.1f}s ({statistics.median(q.oracle_calls for _, q, _ in rows):.0f} calls); "
          f"in all {sum(quick_s):.0f}s against {sum(whole_s):.0f}s ({sum(quick_s) / sum(whole_s):.2f})")
    print(f"keys agree: {sum(a for _, _, a in rows)}/{len(rows)}")
    return 0 if all(a for _, _, a in rows) else 1


def compare_repeat(entries) -> int:
    """A repeat's key-only triage as found, and after a short shrink, side by side, and
    both keys against a new finding's (full shrink, whole triage)."""
    from fuzzer.judge import contract, kinds
    from fuzzer.limits import SHRINK, TRIAGE, OracleBudget
    from fuzzer.reduce.shrinker import shrink

    def shrunk_then_triaged(e, judge, divs, budget, reference=False):
        """A repeat's short shrink and key-only triage, or (``reference``) a new finding's
        full, confirmed shrink and whole triage."""
        start = time.perf_counter()
        r = shrink(Finding(e.kind, e.case, divs, e.device, e.backend), budget, judge=judge, confirm=reference)
        c = localise(r.case, e.kind, contract.bug_class(e.kind, r.divergences), e.device, backend=e.backend,
                     key_only=not reference)
        return r, c, time.perf_counter() - start

    print(f"{'entry':34s} {'as found: calls s':>18s} {'shrunk a little: stmts calls s':>31s} "
          f"{'new finding: stmts s':>21s} agree (as found, a little)")
    rows = []
    little = OracleBudget(oracle_calls=TRIAGE.repeat_shrink_calls, seconds=60)
    for i, e in enumerate(entries):
        judge = kinds.of(e.kind).oracle(e, e.device, e.backend, e.fault)
        divs = judge(e.case).of_kind(e.kind)
        if not divs:
            print(f"{e.id:34s} does not reproduce: skipped")
            continue
        runs = {}
        for which in (("found", "little") if i % 2 == 0 else ("little", "found")):
            if which == "found":
                start = time.perf_counter()
                c = localise(e.case, e.kind, e.bug_class, e.device, backend=e.backend, key_only=True)
                runs[which] = (None, c, time.perf_counter() - start)
            else:
                runs[which] = shrunk_then_triaged(e, judge, divs, little)
        ref_r, ref, ref_s = shrunk_then_triaged(e, judge, divs, SHRINK.budget, reference=True)
        (_, a, a_s), (lr, b, b_s) = runs["found"], runs["little"]
        rows.append((a_s, b_s, a.key == ref.key, b.key == ref.key))
        print(f"{e.id:34s} {a.oracle_calls:8d} {a_s:8.1f}s {lr.statements:9d} {lr.oracle_calls + b.oracle_calls:9d} "
              f"{b_s:9.1f}s {ref_r.statements:10d} {ref_s:9.1f}s {'yes' if rows[-1][2] else 'NO'}, "
              f"{'yes' if rows[-1][3] else 'NO'}  {ref.key}")
    if not rows:
        return 2
    found_s, little_s = sum(r[0] for r in rows), sum(r[1] for r in rows)
    print(f"\n{len(rows)} findings: as found {found_s:.0f}s in all, shrunk a little {little_s:.0f}s "
          f"({little_s / found_s:.2f}); keys as a new finding's: as found {sum(r[2] for r in rows)}/{len(rows)}, "
          f"shrunk a little {sum(r[3] for r in rows)}/{len(rows)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
