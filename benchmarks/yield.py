"""Distinct bugs per CPU-hour: configurations of dcefuzz compared as fuzzers are
compared (FuzzBench, Magma), trial by trial.

    python benchmarks/yield.py --configs blind,avoid --trials 3 --minutes 15 --jobs 1 --side-by-side \\
        --held corpus --out benchmarks/results/yield-2.13.jsonl [--python PATH] [--plot yield.png]
    python benchmarks/yield.py --report benchmarks/results/yield-2.13.jsonl [--plot yield.png]

A *configuration* is a name and the ``dcefuzz run`` flags it adds (``CONFIGS``:
``blind`` adds none, ``avoid`` is ``--avoid-held``).  Trial ``k`` of every
configuration runs with campaign seed ``--seed + k`` for ``--minutes`` wall-clock
minutes with ``--jobs`` workers, in a fresh campaign folder and corpus and with fresh
compile caches (a ``TORCHINDUCTOR_CACHE_DIR`` of its own), every feature on.  The
configurations of one trial run one after another, in an order rotated from trial to
trial, so that the machine's drift falls on all of them: equal wall time with the same
jobs on the same machine is equal CPU time.

A bug is what triage says it is (``dcefuzz bugs``: a family and a culprit); the
campaign logs each bug's first hit (``bugs.jsonl`` in its folder).  Each trial's
record is appended to ``--out`` as the trial ends (one JSON line), so a long benchmark
can run over several sessions, and records from several files combine (``--report
A B``).  The report gives, per configuration: distinct bugs at T (median, min, max),
the area under the discovery curve (mean bugs over the trial), bugs not localised
(their own group: an untriaged entry), and the median time to the first hit of each
bug; then the ratio of each configuration to the first one, with a Mann-Whitney U
test where scipy is installed (the ``bench`` extra; else a bootstrap interval of
the ratio of medians), saying so plainly when the trials are too few for any test
to tell; and which bugs the first configuration found in most trials that another
missed in all.  ``--plot`` draws the median discovery curves with their min-max band
(matplotlib: the ``plot`` extra).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import timesplit

#: configuration name -> the ``dcefuzz run`` flags it adds
CONFIGS = {
    "blind": [],
    "avoid": ["--avoid-held"],
}
#: resolution of the discovery curve, in seconds
STEP = 10.0
#: bootstrap resamples
RESAMPLES = 2000
#: the shares of a trial at which the first configuration's own curve is read against
#: its end: at 0.5, what twice the CPU time gave it (a ratio between configurations is
#: worth that much CPU); at 0.7, what all of a blind trial's time on repeats of known
#: bugs (about 30 %) would have given it, were none spent there
OWN_GAIN_AT = (0.5, 0.7)


def known_share(state: Path) -> float | None:
    """The share of a campaign's seconds spent on programs that hit only known bugs:
    bugs its corpus held at the start, or hit by a program finished before
    (``timesplit.kinds`` with ``held``)."""
    path = state / timesplit.PROGRAMS_FILE
    if not path.exists():
        return None
    lines = [json.loads(ln) for ln in path.read_text().splitlines() if ln.strip()]
    rows = timesplit.kinds(lines, True, timesplit.held_before(state))
    total = sum(line.get("seconds") or 0.0 for line, _ in rows)
    known = sum(line.get("seconds") or 0.0 for line, kind in rows if kind == timesplit.KNOWN)
    return round(known / total, 4) if total else None


def run_trial(python: str, config: str, trial: int, seed: int, minutes: float, jobs: int,
              keep: Path | None, features: str, held: Path | None = None) -> dict:
    """One campaign of one configuration; its record.  ``held``: a corpus copied in
    before the campaign starts, whose bugs are not counted as found (a record's
    ``bugs`` are those new to it; ``held_hit`` how many of its bugs were hit)."""
    with tempfile.TemporaryDirectory(prefix="dcefuzz-yield-") as tmp:
        base = Path(keep) / f"{config}-trial{trial}" if keep else Path(tmp)
        state = base / "state"
        if held is not None:
            shutil.copytree(held, base / "corpus", dirs_exist_ok=True)
        cache = Path(tmp) / "inductor-cache"
        env = dict(os.environ, TORCHINDUCTOR_CACHE_DIR=str(cache), TRITON_CACHE_DIR=str(cache / "triton"))
        cmd = [python, "-m", "fuzzer", "run", "--time", f"{minutes * 60:.0f}s", "--jobs", str(jobs),
               "--seed", str(seed), "--features", features, "--state", str(state),
               "--corpus", str(base / "corpus"), *CONFIGS[config]]
        start = time.time()
        done = subprocess.run(cmd, env=env, capture_output=True, text=True)
        wall = time.time() - start
        hits = [json.loads(line) for line in (state / "bugs.jsonl").read_text().splitlines()] \
            if (state / "bugs.jsonl").exists() else []
        bugs = [b for b in hits if held is None or b.get("new")]
        st = json.loads((state / "state.json").read_text()) if (state / "state.json").exists() else {}
        version = subprocess.run([python, "-c", "import torch; print(torch.__version__)"],
                                 capture_output=True, text=True).stdout.strip()
        return {"config": config, "trial": trial, "seed": seed, "minutes": minutes, "jobs": jobs,
                "features": features, "torch": version, "exit": done.returncode, "wall": round(wall, 1),
                "programs": st.get("programs", 0), "findings": st.get("findings", {}),
                "statuses": st.get("statuses", {}), "internal_errors": st.get("internal_errors", {}),
                "bugs": {b["bug"]: b["seconds"] for b in bugs},
                "keys": {b["bug"]: b.get("key", "") for b in bugs},
                "kinds": {b["bug"]: b["kind"] for b in bugs},
                "held": str(held) if held is not None else None, "held_hit": len(hits) - len(bugs),
                "known_share": known_share(state),
                "avoided": _avoided(state),
                "tail": done.stdout[-1500:] if done.returncode else ""}


def _avoided(state: Path) -> int:
    """Draws a campaign set aside for holding a held bug's example (``--avoid-held``)."""
    path = state / "programs.jsonl"
    lines = [json.loads(ln) for ln in path.read_text().splitlines() if ln.strip()] if path.exists() else []
    return sum(len(line.get("avoided", ())) for line in lines)


def benchmark(args) -> None:
    order = list(args.configs)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    held = Path(args.held) if args.held else None
    for k in range(args.first_trial, args.first_trial + args.trials):
        rotation = order[k % len(order):] + order[:k % len(order)]

        def one(config: str, k: int = k) -> dict:
            return run_trial(args.python, config, k, args.seed + k, args.minutes, args.jobs,
                             Path(args.keep) if args.keep else None, args.features, held)

        if args.side_by_side:  # every configuration of the trial at once, on the same machine
            with ThreadPoolExecutor(len(rotation)) as pool:
                records = list(pool.map(one, rotation))
        else:
            records = [one(config) for config in rotation]
        for record in records:
            with open(out, "a") as fh:
                fh.write(json.dumps(record) + "\n")
            print(f"trial {k} {record['config']:10s}: {record['programs']} programs, {len(record['bugs'])} bugs "
                  f"(exit {record['exit']}, {record['wall']:.0f}s, known share {record['known_share']})", flush=True)


def load(paths: list[str]) -> list[dict]:
    records = []
    for p in paths:
        for line in Path(p).read_text().splitlines():
            if line.strip():
                records.append(json.loads(line))
    return records


def curve(record: dict) -> list[int]:
    """Bugs found by each STEP of the trial."""
    horizon = record["minutes"] * 60
    times = sorted(record["bugs"].values())
    return [sum(1 for t in times if t <= s) for s in _steps(horizon)]


def _steps(horizon: float) -> list[float]:
    n = int(horizon // STEP)
    return [STEP * (i + 1) for i in range(n)]


def auc(record: dict) -> float:
    """Mean number of bugs over the trial: the discovery curve's area over its length."""
    c = curve(record)
    return sum(c) / len(c) if c else 0.0


def own_gain(record: dict, fraction: float) -> float | None:
    """A trial's bugs at T over its bugs at ``fraction`` * T: what its own discovery curve
    gained in the last (1 - fraction) of the time.  With ``fraction`` 0.5 it is what
    twice the CPU time gave this configuration, the yardstick for any ratio between
    configurations; None where it had found nothing by then."""
    horizon = record["minutes"] * 60
    early = sum(1 for t in record["bugs"].values() if t <= fraction * horizon)
    late = sum(1 for t in record["bugs"].values() if t <= horizon)
    return late / early if early else None


def unlocalised(record: dict) -> int:
    return sum(1 for key in record.get("keys", {}).values() if " @ entry:" in key)


def _test(a: list[float], b: list[float]) -> str:
    """A rank test of b against a, or a bootstrap interval where scipy is missing."""
    n = min(len(a), len(b))
    note = ""
    if n < 4:
        note = (f"; with {n} trials a side no two-sided rank test can reach p < 0.05 "
                "(the smallest p Mann-Whitney gives for 3 against 3 is 0.1)")
    try:
        from scipy.stats import mannwhitneyu
    except ImportError:
        rng = random.Random(0)
        ratios = []
        for _ in range(RESAMPLES):
            ma = statistics.median(rng.choices(a, k=len(a)))
            mb = statistics.median(rng.choices(b, k=len(b)))
            if ma > 0:
                ratios.append(mb / ma)
        if not ratios:
            return "no bootstrap interval (the first configuration found nothing)" + note
        ratios.sort()
        lo, hi = ratios[int(0.025 * len(ratios))], ratios[int(0.975 * len(ratios)) - 1]
        return f"bootstrap 95% interval of the ratio of medians [{lo:.2f}, {hi:.2f}] (scipy not installed)" + note
    test = mannwhitneyu(b, a, alternative="two-sided")
    return f"Mann-Whitney U = {test.statistic:.1f}, two-sided p = {test.pvalue:.3f}" + note


def report(records: list[dict], plot: str | None = None) -> None:
    by: dict[str, list[dict]] = defaultdict(list)
    for r in records:
        by[r["config"]].append(r)
    configs = list(dict.fromkeys(r["config"] for r in records))
    torch_versions = sorted({r["torch"] for r in records})
    minutes = sorted({r["minutes"] for r in records})
    print(f"torch {', '.join(torch_versions)}; {', '.join(f'{m:g}' for m in minutes)} minutes a trial; "
          f"jobs {', '.join(sorted({str(r['jobs']) for r in records}))}")
    print(f"{'configuration':14s} {'trials':>6s} {'bugs at T: median':>18s} {'min':>4s} {'max':>4s} "
          f"{'AUC':>6s} {'unlocalised':>11s} {'programs':>9s}")
    for c in configs:
        rs = by[c]
        counts = [len(r["bugs"]) for r in rs]
        print(f"{c:14s} {len(rs):6d} {statistics.median(counts):18.1f} {min(counts):4d} {max(counts):4d} "
              f"{statistics.median([auc(r) for r in rs]):6.1f} {statistics.median([unlocalised(r) for r in rs]):11.1f} "
              f"{statistics.median([r['programs'] for r in rs]):9.0f}")
    if any(r.get("held") for r in records):
        print("(bugs: those the held corpus lacks; per CPU hour: bugs over minutes x jobs)")
        for c in configs:
            rs = by[c]
            rate = [len(r["bugs"]) / (r["minutes"] * r["jobs"] / 60) for r in rs]
            shares = [r["known_share"] for r in rs if r.get("known_share") is not None]
            print(f"  {c:14s} new bugs per CPU hour, median {statistics.median(rate):.2f} "
                  f"(min {min(rate):.2f}, max {max(rate):.2f}); known-bug share of time, median "
                  + (f"{100 * statistics.median(shares):.1f} % (min {100 * min(shares):.1f}, max {100 * max(shares):.1f})"
                     if shares else "-")
                  + f"; held bugs hit, median {statistics.median([r.get('held_hit', 0) for r in rs]):.0f}"
                  + f"; draws set aside, median {statistics.median([r.get('avoided', 0) for r in rs]):.0f}")
    base = configs[0]
    for fraction in OWN_GAIN_AT:
        gains = [g for g in (own_gain(r, fraction) for r in by[base]) if g is not None]
        if gains:
            print(f"{base}'s own curve: bugs at T over bugs at {fraction:g} T, median {statistics.median(gains):.2f} "
                  f"(min {min(gains):.2f}, max {max(gains):.2f}, {len(gains)} trials)")
    for c in configs[1:]:
        a = [len(r["bugs"]) for r in by[base]]
        b = [len(r["bugs"]) for r in by[c]]
        ratio = statistics.median(b) / statistics.median(a) if statistics.median(a) else float("inf")
        print(f"\n{c}/{base}: distinct bugs at T, ratio of medians {ratio:.2f}; AUC ratio "
              f"{statistics.median([auc(r) for r in by[c]]) / max(1e-9, statistics.median([auc(r) for r in by[base]])):.2f}")
        print("  " + _test(a, b))
        common = _common(by[base])
        missed = [bug for bug in common if not any(bug in r["bugs"] for r in by[c])]
        print(f"  bugs {base} found in most of its trials: {len(common)}; missed by {c} in every trial: "
              f"{len(missed)}" + (f" ({', '.join(missed)})" if missed else ""))
        only = sorted({bug for r in by[c] for bug in r["bugs"]} - {bug for r in by[base] for bug in r["bugs"]})
        print(f"  bugs only {c} found: {len(only)}")
        for bug in only:
            key = next(r["keys"].get(bug, "") for r in by[c] if bug in r["bugs"])
            print(f"    {bug}  {key}")
    print("\nmedian seconds to the first hit, per bug (trials that hit it / trials):")
    bugs = sorted({bug for r in records for bug in r["bugs"]})
    for bug in bugs:
        cells = []
        for c in configs:
            hits = [r["bugs"][bug] for r in by[c] if bug in r["bugs"]]
            cells.append(f"{c} {statistics.median(hits):6.0f}s {len(hits)}/{len(by[c])}" if hits
                         else f"{c}      - 0/{len(by[c])}")
        print(f"  {bug}  " + "   ".join(cells))
    if plot:
        _plot(by, configs, plot)


def _common(records: list[dict]) -> list[str]:
    counts: dict[str, int] = defaultdict(int)
    for r in records:
        for bug in r["bugs"]:
            counts[bug] += 1
    return sorted(b for b, n in counts.items() if n * 2 > len(records))


def _plot(by: dict, configs: list[str], path: str) -> None:
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("--plot needs matplotlib (pip install -e '.[plot]')", file=sys.stderr)
        return
    fig, ax = plt.subplots(figsize=(7, 4))
    for c in configs:
        curves = [curve(r) for r in by[c]]
        n = min(len(x) for x in curves)
        xs = [s / 60 for s in _steps(by[c][0]["minutes"] * 60)][:n]
        med = [statistics.median(x[i] for x in curves) for i in range(n)]
        lo = [min(x[i] for x in curves) for i in range(n)]
        hi = [max(x[i] for x in curves) for i in range(n)]
        ax.plot(xs, med, label=f"{c} (median of {len(curves)})")
        ax.fill_between(xs, lo, hi, alpha=0.2)
    ax.set_xlabel("minutes")
    ax.set_ylabel("distinct bugs")
    ax.set_title("bugs found over time")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    print(f"plot: {path}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--configs", type=lambda s: s.split(","), default=["blind", "avoid"])
    ap.add_argument("--trials", type=int, default=3)
    ap.add_argument("--first-trial", type=int, default=0,
                    help="index of the first trial (to add trials to an earlier run's file)")
    ap.add_argument("--minutes", type=float, default=15.0)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--seed", type=int, default=100, help="campaign seed of trial 0 (trial k: seed + k)")
    ap.add_argument("--features", default="all")
    ap.add_argument("--held", default=None, metavar="CORPUS",
                    help="a corpus copied into each trial's before it starts (e.g. corpus): only bugs it lacks count")
    ap.add_argument("--side-by-side", action="store_true",
                    help="run the configurations of a trial at once (each with --jobs workers), not one after another")
    ap.add_argument("--python", default=sys.executable, help="the interpreter whose torch and dcefuzz run")
    ap.add_argument("--out", default="yield.jsonl")
    ap.add_argument("--keep", default=None, help="keep each trial's campaign folder and corpus here")
    ap.add_argument("--report", nargs="+", default=None, metavar="JSONL",
                    help="only report on these records (no new trials)")
    ap.add_argument("--plot", default=None, metavar="PNG")
    args = ap.parse_args()
    unknown = [c for c in args.configs if c not in CONFIGS]
    if unknown:
        ap.error(f"unknown configuration(s) {', '.join(unknown)}; known: {', '.join(CONFIGS)}")
    if args.held and not Path(args.held).is_dir():
        ap.error(f"--held {args.held}: no such folder")
    if args.report:
        records = load(args.report)
        report(records, args.plot)
        return 0
    benchmark(args)
    report(load([args.out]), args.plot)
    return 0


if __name__ == "__main__":
    sys.exit(main())
