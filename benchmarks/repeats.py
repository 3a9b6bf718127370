"""What a repeat of a known bug costs beyond its trial, program by program, under two
versions of dcefuzz side by side.

    python benchmarks/repeats.py --old TREE --new TREE [--programs 40] [--seed 100]
        [--features all] [--rounds 2]

``throughput.py --costs-only`` divides the difference of two whole-campaign times by
the findings (two, in its 20 blind programs): on a shared machine one slow minute in
either run moves its answer by more than a repeat costs.  Here each program's own
seconds are read from the campaign's program log (``programs.jsonl``: trial,
confirmation, shrink and triage), so a finding's cost is compared with the same
program's elsewhere:

1. ``d``: the old tree's campaign of ``--programs`` programs (``--jobs 1 --blind``,
   shrink and triage on) into a fresh corpus: every bug found gets its example;
2. ``b``: each tree's campaign of the same programs with ``--no-shrink --no-triage``:
   the trial alone, per program;
3. ``e``: each tree's campaign of the same programs again, into a copy of d's corpus
   with ``--examples-per-bug 1``, so that every finding is of a bug whose examples are
   full; ``--rounds`` times, the trees' order alternating (old, new, new, old, ...).

A repeat's cost is, per program with findings in e, its e seconds less its b seconds
(the median of the b runs), and the script prints each such program's costs per tree
and round, what its finding became, and the median over programs per tree.  Both
trees run under this interpreter with their own folder first on ``PYTHONPATH``, the
whole-graph caches off as in ``throughput.py``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

#: whole-graph caches off (``throughput.py``)
ENV = dict(os.environ, TORCHINDUCTOR_FX_GRAPH_CACHE="0", TORCHINDUCTOR_AUTOGRAD_CACHE="0")


def _campaign(tree: str, corpus: str, state: str, args, *flags: str) -> dict[int, dict]:
    """One campaign under ``tree``; its program log, by program index."""
    env = dict(ENV, PYTHONPATH=tree)
    subprocess.run([sys.executable, "-m", "fuzzer", "run", "--programs", str(args.programs), "--seed",
                    str(args.seed), "--jobs", "1", "--blind", "--features", args.features, "--corpus", corpus,
                    "--state", state, *flags], check=True, env=env, cwd=tree,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    with open(os.path.join(state, "programs.jsonl")) as fh:
        lines = [json.loads(line) for line in fh if line.strip()]
    return {line["index"]: line for line in lines}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--old", required=True)
    ap.add_argument("--new", required=True)
    ap.add_argument("--programs", type=int, default=40)
    ap.add_argument("--seed", type=int, default=100)
    ap.add_argument("--features", default="all")
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()
    trees = {"old": os.path.abspath(args.old), "new": os.path.abspath(args.new)}
    with tempfile.TemporaryDirectory() as tmp:
        base = os.path.join(tmp, "d-corpus")
        d = _campaign(trees["old"], base, os.path.join(tmp, "d"), args)
        print(f"d: {sum(1 for line in d.values() if line.get('bugs'))} programs with findings", flush=True)
        trial: dict[str, dict[int, dict]] = {}
        for name, tree in trees.items():
            trial[name] = _campaign(tree, os.path.join(tmp, f"b-{name}"), os.path.join(tmp, f"b-{name}-state"),
                                    args, "--no-shrink", "--no-triage")
        runs: list[tuple[str, dict[int, dict]]] = []
        for r in range(args.rounds):
            order = ("old", "new") if r % 2 == 0 else ("new", "old")
            for name in order:
                corpus = os.path.join(tmp, f"e{r}-{name}")
                shutil.copytree(base, corpus)
                runs.append((name, _campaign(trees[name], corpus, corpus + "-state", args, "--examples-per-bug",
                                             "1")))
                print(f"e round {r + 1} {name} done", flush=True)
    found = sorted({i for _, log in runs for i, line in log.items() if line.get("bugs")})
    costs: dict[str, list[float]] = {"old": [], "new": []}
    print("seconds beyond the trial, and what became of each finding (counted, repeat: the same entry "
          "again, replaced, new), per run")
    print("program  trial s  " + "  ".join(f"{name:>18s}" for name, _ in runs))
    for i in found:
        t = statistics.median(trial[name][i]["seconds"] for name in trees)
        row = [log[i]["seconds"] - t for _, log in runs]
        for name in trees:
            costs[name].append(statistics.median(c for (n, _), c in zip(runs, row) if n == name))
        cells = [f"{c:.1f} {','.join(kept for _, kept in log[i].get('bugs', []))}" for c, (_, log) in zip(row, runs)]
        print(f"{i:7d}  {t:7.1f}  " + "  ".join(f"{c:>18s}" for c in cells))
    for name in trees:
        if costs[name]:
            print(f"{name}: a repeat costs {statistics.median(costs[name]):.1f} s beyond its trial (median of "
                  f"{len(costs[name])} programs with findings; mean {statistics.mean(costs[name]):.1f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
