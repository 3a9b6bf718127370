"""What a repeat of a known bug costs beyond its trial, finding by finding, under an
older ``campaign/entries.py`` and this one, side by side.

    python benchmarks/repeats.py --old TREE [--whole] [--repeats 10] [--seed 100] [--features all]
        [--max-programs 150 | --programs 43,52,...] [--known CORPUS [--known-old OLD_CORPUS]]

``throughput.py --costs-only`` divides the difference of two whole-campaign times by
the findings (two, in its 20 blind programs): on a shared machine one slow minute in
either run moves its answer by more than a repeat costs.  Here each finding is timed
alone, as a campaign with ``--examples-per-bug 1`` meets it, by two processes at once
(the same load on both), one per version:

- the campaign's programs (``--seed``, drawn blind with ``--features``) are tried in
  order, and each finding on Inductor goes the way a campaign sends it: a finding of a
  family with no known bug is made an entry as a new one is (``entry_for``: shrunk,
  triaged) and its key becomes a bug whose examples are full (``Examples.held``);
  any other finding is a repeat candidate: ``counted_only(...) or entry_for(...)``,
  timed, its key then added too where it was not counted;
- the module that does it is ``TREE/fuzzer/campaign/entries.py`` (loaded under
  another name; the rest of dcefuzz is this tree's) in the one process, this tree's in
  the other; with ``--whole``, the one process runs all of TREE's dcefuzz (for a
  change beyond ``entries.py``: recognition, the bisection);
- each process has a kernel cache of its own, cold at the start: a repeat's program is
  one the campaign never compiled, and a cache the other process had warmed would
  hide what its compiles cost.

With ``--known CORPUS`` the campaign holds that corpus's bugs from the start, as
``--known-upstream`` makes it (each key whose entries tell causes apart, its examples
full at any size): only the findings of their families are classified and timed, and
nothing is shrunk as a new finding, so a loaded machine can afford it; ``--programs``
tries only the programs listed.  Where the two versions key the corpus differently (a new
identity), ``--known-old`` gives the older version its own copy of it, as it was keyed then.

It stops after ``--repeats`` repeat candidates (or ``--max-programs``) and prints, per
candidate, the seconds beyond its trial under each version and whether it was only
counted, then the median over the candidates the older version counted too (the cost
of a repeat) and over all.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time


def _old_entries(tree: str):
    path = os.path.join(tree, "fuzzer", "campaign", "entries.py")
    spec = importlib.util.spec_from_file_location("old_entries", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def child(args) -> None:
    """One version's run (see the module docstring); one JSON line per repeat candidate."""
    from fuzzer.campaign import entries as this
    from fuzzer.campaign.config import Config
    from fuzzer.corpus.bugs import key_of, separates
    from fuzzer.program import features as feats
    from fuzzer.program.generate import program_seed
    from fuzzer.triage.family import family

    module = _old_entries(args.old) if args.child == "old" and not args.whole else this
    config = Config(seed=args.seed, device="cpu", corpus_dir="unused",
                    features=tuple(feats.parse(args.features).items()))
    known = args.known_old if args.child == "old" and args.known_old else args.known
    full: dict = _known(known) if known else {}
    config = dataclasses.replace(config, known=tuple(full))  # counted at any size, as --known-upstream's
    measured = 0
    programs = [int(i) for i in args.programs.split(",")] if args.programs else range(args.max_programs)
    for index in programs:
        pseed = program_seed(args.seed, index)
        for finding in this.trial_of(pseed, config).findings:
            if finding.backend != "inductor":
                continue
            fam = family(this.found_entry(finding, pseed, config).bug_class)
            start, cpu = time.perf_counter(), _cpu()
            if not any(key.family == fam for key in full):
                if args.known:
                    continue  # not of a known bug's family: not what is measured
                entry, counted = module.entry_for(finding, pseed, config), None
            else:
                counted = module.counted_only(finding, pseed, config, full)
                entry = counted or (None if args.known else module.entry_for(finding, pseed, config))
                measured += 1
                print(json.dumps({"program": index, "seconds": time.perf_counter() - start, "cpu": _cpu() - cpu,
                                  "counted": counted is not None,
                                  "key": key_of(entry).text if entry else f"{fam.text} @ "}),
                      flush=True)
            if counted is None and entry is not None and separates(entry):
                full.setdefault(key_of(entry), entry.statements)
        if measured >= args.repeats:
            break


def _cpu() -> float:
    """CPU seconds of this process and the children it waited for (the C++ compiles):
    on a machine shared with other work, what a repeat costs whatever the load."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def _known(folder: str) -> dict:
    """The bugs of a corpus that a finding may be counted as, as ``--known-upstream``
    holds them: each separating key, its examples full at any size."""
    from fuzzer.corpus.bugs import key_of, separates
    from fuzzer.corpus.store import entries_in, load

    return {key_of(entry): 0 for entry in map(load, entries_in([folder])[0]) if separates(entry)}


def _child_command(name: str, args) -> list[str]:
    """The script and arguments of one version's process: with ``--whole``, the older
    version runs its own copy of this script where its tree has one (its records are
    its own: a key may be text there), handed the corpus as it keyed it."""
    own = os.path.join(os.path.abspath(args.old), "benchmarks", "repeats.py")
    argv = list(sys.argv[1:])
    if "--known-old" in argv:
        at = argv.index("--known-old")
        del argv[at:at + 2]
    if name != "old" or not args.whole or not os.path.exists(own):
        return [__file__, *sys.argv[1:]]
    if args.known_old and "--known" in argv:
        argv[argv.index("--known") + 1] = args.known_old
    return [own, *argv]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--old", required=True, help="a worktree of the older version")
    ap.add_argument("--whole", action="store_true", help="the older version is all of TREE's dcefuzz")
    ap.add_argument("--repeats", type=int, default=10)
    ap.add_argument("--seed", type=int, default=100)
    ap.add_argument("--features", default="all")
    ap.add_argument("--max-programs", type=int, default=150)
    ap.add_argument("--programs", help="only these programs, comma-separated")
    ap.add_argument("--known", help="a corpus whose bugs the campaign holds from the start")
    ap.add_argument("--known-old", help="the older version's own copy of that corpus, where the two key it "
                    "differently (the older version reads it, the newer --known)")
    ap.add_argument("--child", choices=("old", "new"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args)
        return 0
    procs, outs, errs = {}, {}, {}
    with tempfile.TemporaryDirectory() as tmp:
        for name in ("old", "new"):
            env = dict(os.environ, TORCHINDUCTOR_FX_GRAPH_CACHE="0", TORCHINDUCTOR_AUTOGRAD_CACHE="0",
                       TORCHINDUCTOR_CACHE_DIR=os.path.join(tmp, f"cache-{name}"))
            if name == "old" and args.whole:
                env["PYTHONPATH"] = os.path.abspath(args.old)
            outs[name] = open(os.path.join(tmp, f"{name}.jsonl"), "w+")
            errs[name] = open(os.path.join(tmp, f"{name}.err"), "w+")
            procs[name] = subprocess.Popen([sys.executable, *_child_command(name, args), "--child", name],
                                           env=env, stdout=outs[name], stderr=errs[name])
        for name, proc in procs.items():
            if proc.wait() != 0:
                errs[name].seek(0)
                print(f"{name}: exited {proc.returncode}; its last words:\n{''.join(errs[name].readlines()[-15:])}")
        rows = {}
        for name, out in outs.items():
            out.seek(0)
            rows[name] = [json.loads(line) for line in out if line.startswith("{")]
    print("program  old s  (cpu)  counted  new s  (cpu)  counted  key (old's)")
    both, every = {"old": [], "new": []}, {"old": [], "new": []}
    both_cpu, cpu = {"old": [], "new": []}, {"old": [], "new": []}
    pending = list(rows["new"])
    for old in rows["old"]:
        new = next((row for row in pending if row["program"] == old["program"]), None)
        if new is None:
            print(f"{old['program']:7d}  {old['seconds']:5.1f}  {str(old['counted']):7s}  (not a candidate of the new)")
            continue
        pending.remove(new)
        print(f"{old['program']:7d}  {old['seconds']:5.1f}  {old.get('cpu', 0):5.1f}  {str(old['counted']):7s}  "
              f"{new['seconds']:5.1f}  {new.get('cpu', 0):5.1f}  {str(new['counted']):7s}  {old['key'][:100]}")
        for name, row in (("old", old), ("new", new)):
            every[name].append(row["seconds"])
            cpu[name].append(row.get("cpu", 0.0))
            if old["counted"]:
                both[name].append(row["seconds"])
                both_cpu[name].append(row.get("cpu", 0.0))
    for name in ("old", "new"):
        if every[name]:
            counted = f"{statistics.median(both[name]):.1f} s" if both[name] else "-"
            print(f"{name}: a repeat the old version counted costs {counted} beyond its trial (median of "
                  f"{len(both[name])}); every repeat candidate {statistics.median(every[name]):.1f} s "
                  f"(median of {len(every[name])}, mean {statistics.mean(every[name]):.1f} s)")
            if both_cpu[name]:
                print(f"{name}: in CPU seconds, a repeat the old version counted "
                      f"{statistics.median(both_cpu[name]):.1f} s (median), every candidate "
                      f"{statistics.median(cpu[name]):.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
