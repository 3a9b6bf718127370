"""What a repeat of a known bug costs beyond its trial, finding by finding, under an
older ``campaign/entries.py`` and this one, side by side in one process.

    python benchmarks/repeats.py --old TREE [--findings 8] [--seed 100] [--features all]

``throughput.py --costs-only`` divides the difference of two whole-campaign times by
the findings (two, in its 20 blind programs): on a shared machine one slow minute in
either run moves its answer by more than a repeat costs.  Here the same findings are
classified by both versions in turn, in one warm process, and each is timed alone:

1. the campaign's programs (``--seed``, drawn blind with ``--features``) are tried in
   order until ``--findings`` findings of the plain trial on Inductor are collected;
2. each is made an entry as a new finding is (``entry_for``: shrunk, triaged); its key
   is then a bug whose examples are full (``full``, key -> the statements of its
   largest example, as ``Examples.full`` gives it; the smallest entry of the key here),
   one whose key cannot tell causes apart left out as ``Examples`` leaves it;
3. each finding then goes the way a campaign sends a finding (``counted_only(...) or
   entry_for(...)``) under the old module (``TREE/fuzzer/campaign/entries.py``, loaded
   under another name, the rest of dcefuzz this tree's) and under this one, the order
   alternating from one finding to the next; the seconds each took, and whether it was
   only counted, are printed, with the median over findings.

What is timed is exactly what a repeat costs beyond its trial: the trial is not
repeated.  The whole-graph caches are off as in ``throughput.py``; the kernel cache
is on, and the alternating order gives each version the warm kernels as often.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import time

os.environ.setdefault("TORCHINDUCTOR_FX_GRAPH_CACHE", "0")
os.environ.setdefault("TORCHINDUCTOR_AUTOGRAD_CACHE", "0")


def _old_entries(tree: str):
    path = os.path.join(tree, "fuzzer", "campaign", "entries.py")
    spec = importlib.util.spec_from_file_location("old_entries", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--old", required=True, help="a worktree of the older version")
    ap.add_argument("--findings", type=int, default=8)
    ap.add_argument("--seed", type=int, default=100)
    ap.add_argument("--features", default="all")
    ap.add_argument("--max-programs", type=int, default=200)
    args = ap.parse_args()

    from fuzzer.campaign import entries as new
    from fuzzer.campaign.config import Config
    from fuzzer.corpus.bugs import key_of, separates
    from fuzzer.program import features as feats
    from fuzzer.program.generate import program_seed

    old = _old_entries(args.old)
    config = Config(seed=args.seed, device="cpu", corpus_dir="unused", features=tuple(feats.parse(args.features).items()))
    findings = []
    for index in range(args.max_programs):
        pseed = program_seed(args.seed, index)
        result = new.trial_of(pseed, config)
        findings += [(index, pseed, f) for f in result.findings if f.backend == "inductor"]
        if len(findings) >= args.findings:
            break
    print(f"{len(findings)} findings in programs 0..{index}", flush=True)
    known = {}
    for index, pseed, finding in findings:
        entry = new.entry_for(finding, pseed, config)
        if separates(entry):
            known[key_of(entry)] = min(known.get(key_of(entry), entry.statements), entry.statements)
        print(f"  program {index}: {key_of(entry)[:140]}", flush=True)
    costs: dict[str, list[float]] = {"old": [], "new": []}
    print("program  old s  counted  new s  counted", flush=True)
    for n, (index, pseed, finding) in enumerate(findings):
        row = {}
        for name in (("old", "new") if n % 2 == 0 else ("new", "old")):
            module = old if name == "old" else new
            start = time.perf_counter()
            counted = module.counted_only(finding, pseed, config, known)
            if counted is None:
                module.entry_for(finding, pseed, config)
            row[name] = (time.perf_counter() - start, counted is not None)
            costs[name].append(row[name][0])
        print(f"{index:7d}  {row['old'][0]:5.1f}  {str(row['old'][1]):7s}  {row['new'][0]:5.1f}  {row['new'][1]}",
              flush=True)
    for name, seconds in costs.items():
        print(f"{name}: a repeat costs {statistics.median(seconds):.1f} s beyond its trial (median of "
              f"{len(seconds)} findings; mean {statistics.mean(seconds):.1f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
