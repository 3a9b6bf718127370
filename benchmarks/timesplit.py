"""Where a finished campaign's time went: clean programs, first hits of bugs, and
findings of bugs an earlier program had hit.

A campaign that avoids held bugs (``--avoid-held``) is meant to find more bugs at equal
CPU time by spending less of it on bugs it already knows.  Whether it does is in its
program log (``programs.jsonl``):
each program's status, seconds (trial, confirmation, shrink, triage) and bugs.  In the
order the campaign finished them, a program is

- ``first``: it hit a bug no earlier program had hit (the bugs a campaign is run for);
- ``known``: every bug it hit, an earlier program had hit (what steering away saves);
- ``clean`` or ``untested`` otherwise.

It prints each folder's split in programs and seconds, the known-bug programs a hundred
programs, and the draws an avoiding campaign set aside.  Give a campaign with and one
without ``--avoid-held`` of one seed and torch side by side:

    python benchmarks/timesplit.py --held BLIND_FOLDER AVOID_FOLDER

A campaign started on a corpus that holds bugs already (``--corpus`` a copy of one)
meets known bugs from its first program: with ``--held``, a bug the corpus held before
the campaign (its first hit logged ``new`` false in ``bugs.jsonl``; in older logs, a
bug only counted, or whose example was replaced: ``Kept``'s ``counted``, ``repeat``,
``replaced``) is known too, though no earlier program of its log hit it:

    python benchmarks/timesplit.py --held BASE_FOLDER NEW_FOLDER

Where the log has the workers' own clock (``trial`` and ``after_trial`` on each line),
it also splits the findings' programs into their trials and what came after them
(shrink, recognition, triage), and the known ones into those that gave a bug another
example and those only counted: the trial of a known program is spent whatever dcefuzz
does after it, the rest is what recognising a repeat costs.

With ``--by-bug N`` it lists the N held bugs whose known programs took most time, each
with its trials and what came after them.

It reads the logs only (no torch), so it runs under any interpreter.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections import defaultdict
from pathlib import Path

PROGRAMS_FILE = "programs.jsonl"
FIRST, KNOWN, CLEAN, UNTESTED = "first", "known", "clean", "untested"


#: what became of a finding whose bug the corpus held examples of (``Kept``)
HELD = ("counted", "repeat", "replaced")


def kinds(lines: list[dict], held: bool = False, before: set[str] = frozenset()) -> list[tuple[dict, str]]:
    """Each program with its kind, in the order the campaign finished them (``held``:
    a bug the campaign's corpus held before any program hit it is known: those in
    ``before``, and those a finding only counted or replaced an example of)."""
    seen: set[str] = set(before) if held else set()
    out = []
    for line in sorted(lines, key=lambda ln: ln["done"]):
        hit = [bug for bug, _ in line.get("bugs", [])]
        if held:
            seen.update(bug for bug, kept in line.get("bugs", []) if kept in HELD)
        if hit:
            out.append((line, KNOWN if all(bug in seen for bug in hit) else FIRST))
        else:
            out.append((line, CLEAN if line.get("status") == "clean" else UNTESTED))
        seen.update(hit)
    return out


def held_before(folder: Path) -> set[str]:
    """The bugs the campaign's corpus held before it started: their first hits logged
    ``new`` false (``bugs.jsonl``)."""
    path = folder / "bugs.jsonl"
    lines = [json.loads(ln) for ln in path.read_text().splitlines() if ln.strip()] if path.is_file() else []
    return {line["bug"] for line in lines if line.get("new") is False}


def read(folder: Path) -> list[dict]:
    path = folder / PROGRAMS_FILE
    if not path.is_file():
        sys.exit(f"{folder}: no {PROGRAMS_FILE} (give a campaign's folder, its --state)")
    return [json.loads(ln) for ln in path.read_text().splitlines() if ln.strip()]


def _tally(rows: list[tuple[dict, str]]) -> dict[str, list[float]]:
    """kind -> [programs, seconds]"""
    t: dict[str, list[float]] = defaultdict(lambda: [0, 0.0])
    for line, kind in rows:
        t[kind][0] += 1
        t[kind][1] += line.get("seconds", 0.0)
    return t


#: what became of a repeat's findings when one of them was kept as an example (``Kept``)
KEPT = ("new", "replaced")


def _beyond_trial(rows: list[tuple[dict, str]]) -> None:
    """Where the log has the worker's clock (``trial``, ``after_trial``: a dcefuzz that
    logs them), the findings' programs split into their trials and what came after
    (shrink, recognition, triage), and the known ones further into those that gave
    one of their bugs another example (``KEPT``: its short shrink and saving) and
    those only counted: the cost of a repeat, median and total."""
    timed = [(line, kind) for line, kind in rows if "after_trial" in line and kind in (FIRST, KNOWN)]
    if not timed:
        return
    known_kept = [ln for ln, k in timed if k == KNOWN and any(kept in KEPT for _, kept in ln["bugs"])]
    groups = ((FIRST, [ln for ln, k in timed if k == FIRST]), ("known, an example kept", known_kept),
              ("known, counted only", [ln for ln, k in timed if k == KNOWN and ln not in known_kept]))
    print("  beyond the trial (the worker's clock):   programs  trial s  after s  after, median")
    for label, lines in groups:
        after = [ln["after_trial"] for ln in lines]
        median = f"{statistics.median(after):8.1f}" if after else "       -"
        print(f"    {label:36s} {len(lines):6d} {sum(ln['trial'] for ln in lines):8.0f} {sum(after):8.0f} {median}")


def by_bug(rows: list[tuple[dict, str]]) -> list[tuple[str, int, float, float]]:
    """The known programs' time by the bug they showed again: (bug, programs, trial s,
    after s), most time first.  A program that showed several is counted under each, its
    seconds shared among them; a log without the worker's clock puts ``seconds`` in
    the trial's place.  Where most of the known share is one bug's, or the time after
    the trials, the lever is that bug or its recognition, not what gets generated."""
    tally: dict[str, list[float]] = defaultdict(lambda: [0, 0.0, 0.0])
    for line, kind in rows:
        if kind != KNOWN:
            continue
        hit = list(dict.fromkeys(bug for bug, _ in line.get("bugs", [])))
        trial = line.get("trial", line.get("seconds", 0.0))
        after = line.get("after_trial", 0.0)
        for bug in hit:
            tally[bug][0] += 1
            tally[bug][1] += trial / len(hit)
            tally[bug][2] += after / len(hit)
    return sorted(((b, int(n), t, a) for b, (n, t, a) in tally.items()), key=lambda r: -(r[2] + r[3]))


def report(folder: Path, held: bool = False, bugs_shown: int = 0) -> None:
    rows = kinds(read(folder), held, held_before(folder))
    bugs = {bug for line, _ in rows for bug, _ in line.get("bugs", [])}
    t = _tally(rows)
    seconds = sum(s for _, s in t.values()) or 1.0
    wall = max((line["done"] for line, _ in rows), default=0.0)
    print(f"{folder}: {len(rows)} programs in {wall:.0f} s, {len(bugs)} bugs")
    for kind in (CLEAN, FIRST, KNOWN, UNTESTED):
        n, s = t.get(kind, (0, 0.0))
        print(f"  {kind:9s} {n:5d} programs {s:8.0f} s  {s / seconds:6.1%} of the time"
              + (f"  {s / n:5.1f} s each" if n else ""))
    print(f"  known-bug programs a hundred programs: {100 * t[KNOWN][0] / max(1, len(rows)):.1f}")
    _beyond_trial(rows)
    if bugs_shown:
        print("  the known programs by the bug they showed again:   programs  trial s  after s")
        for bug, n, trial, after in by_bug(rows)[:bugs_shown]:
            print(f"    {bug:48s} {n:6d} {trial:8.0f} {after:8.0f}")
    aside = [bugs for line, _ in rows for bugs in line.get("avoided", ())]
    if aside:
        print(f"  draws set aside for holding a held bug's example: {len(aside)} "
              f"(in {sum(1 for line, _ in rows if line.get('avoided'))} programs' indices)")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folders", type=Path, nargs="+", help="finished campaigns' folders (their --state)")
    ap.add_argument("--held", action="store_true",
                    help="a bug the corpus held before the campaign (counted, not saved) is known")
    ap.add_argument("--by-bug", type=int, default=0, metavar="N",
                    help="also the known programs' time by the bug they showed again, the N that took most")
    args = ap.parse_args()
    if args.by_bug < 0:
        ap.error("--by-bug takes a count of 0 or more")
    for folder in args.folders:
        report(folder, args.held, args.by_bug)
    return 0


if __name__ == "__main__":
    sys.exit(main())
