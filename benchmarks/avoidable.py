"""How much of a finished blind campaign's known-bug time ``--avoid-held`` would have
set aside: the rule replayed over the programs the campaign ran.

``timesplit.py`` says how a campaign's time split into clean programs, first hits and
known bugs.  This script asks, of each program the campaign ran (``programs.jsonl``:
its seed, drawn again with the campaign's feature weights from ``state.json``),
whether the avoidance rule (``fuzzer.campaign.avoidance``) would have drawn it again:
whether it holds an example of a bug the corpus ``CORPUS`` holds, found as a program
campaign on the CPU finds it, or a held cause's ``held_by``.  It prints, per kind of
program (clean, first, known, untested), how many and how many seconds the rule would
and would not have set aside.  What it would not set aside of the known time is the
share that no choice of program by held examples can save: the bugs a program shows
without holding their example, and what recognising them costs after the trial.

    python benchmarks/avoidable.py FOLDER CORPUS

Run it under the campaign's torch (its environment's interpreter), from a dcefuzz of
the campaign's generator: the seeds are drawn again, not read.  It ignores the rule's
coin that lets one index in ten run its first draw, so it is an upper bound.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from fuzzer.campaign.avoidance import Avoidance  # noqa: E402
from fuzzer.campaign.state import STATE_FILE  # noqa: E402
from fuzzer.program import generate  # noqa: E402

_spec = importlib.util.spec_from_file_location("timesplit", ROOT / "benchmarks" / "timesplit.py")
timesplit = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(timesplit)


def found_on_cpu(entry) -> bool:
    """An entry a plain program campaign on the CPU finds as it was found: no cache
    pair's variant, no planted fault, through ``compile``."""
    origin = entry.origin
    return origin.variant is None and origin.fault is None and origin.device == "cpu" and origin.target == "compile"


def split(folder: Path, corpus: Path) -> tuple[Counter, Counter, Avoidance]:
    """(programs, seconds) by (kind, set aside), and the avoidance replayed."""
    avoidance = Avoidance.of_folders([corpus], lambda key: True, found_on_cpu)
    weights = json.loads((folder / STATE_FILE).read_text())["features"]
    rows = timesplit.kinds(timesplit.read(folder), True, timesplit.held_before(folder))
    programs, seconds = Counter(), Counter()
    for line, kind in rows:
        aside = bool(avoidance.held_by(generate.generate(line["seed"], features=weights).program))
        programs[(kind, aside)] += 1
        seconds[(kind, aside)] += line.get("seconds", 0.0)
    return programs, seconds, avoidance


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", type=Path, help="a finished campaign's folder (its --state), run without --avoid-held")
    ap.add_argument("corpus", type=Path, help="the corpus it held at its start (a copy of the committed corpus/)")
    args = ap.parse_args()
    if not (args.folder / STATE_FILE).is_file() or not args.corpus.is_dir():
        ap.error("give a campaign's folder (with state.json) and a corpus folder")
    programs, seconds, avoidance = split(args.folder, args.corpus)
    total = sum(seconds.values()) or 1.0
    print(f"{args.folder}: {len(avoidance.examples)} held examples, {len(avoidance.causes)} held causes")
    print("  kind        set aside            kept")
    for kind in (timesplit.CLEAN, timesplit.FIRST, timesplit.KNOWN, timesplit.UNTESTED):
        cells = [f"{programs[(kind, a)]:4d} {seconds[(kind, a)]:7.0f} s {seconds[(kind, a)] / total:6.1%}" for a in (True, False)]
        print(f"  {kind:9s} {cells[0]}   {cells[1]}")
    kept = {k: s for (k, a), s in seconds.items() if not a}
    print(f"  known share of what the rule keeps: {kept.get(timesplit.KNOWN, 0.0) / (sum(kept.values()) or 1.0):.1%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
