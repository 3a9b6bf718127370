"""Where a finished campaign's time went: clean programs, first hits of bugs, and
findings of bugs an earlier program had hit.

A feedback campaign is meant to find more bugs at equal CPU time by spending less of it
on bugs it already knows.  Whether it does is in its program log (``programs.jsonl``):
each program's status, seconds (trial, confirmation, shrink, triage) and bugs.  In the
order the campaign finished them, a program is

- ``first``: it hit a bug no earlier program had hit (the bugs a campaign is run for);
- ``known``: every bug it hit, an earlier program had hit (what steering away saves);
- ``clean`` or ``untested`` otherwise.

It prints each folder's split in programs and seconds, the known-bug programs a hundred
programs, and, for a feedback campaign, the same per arm and per band of the risk the
triggers put on a fresh program when it was drawn (``Schedule.risk_limit``): how much
of the known-bug time the triggers saw coming.  Give a blind and a feedback campaign of
one seed and torch side by side:

    python benchmarks/timesplit.py BLIND_FOLDER FEEDBACK_FOLDER

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
#: upper ends of the bands of a fresh program's risk (``Schedule.risk_limit`` is 0.3; a
#: program above it was taken to explore, or as the least risky of its draws)
RISK_BANDS = (0.0, 0.1, 0.3, 1.0)


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


def _band(risk: float) -> float:
    return next(top for top in RISK_BANDS if risk <= top)


def report(folder: Path, held: bool = False) -> None:
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
    by_arm: dict[str, list] = defaultdict(list)
    for line, kind in rows:
        by_arm[line.get("arm", "blind")].append((line, kind))
    if set(by_arm) != {"blind"}:
        print("  per arm:   programs   known  first  a hundred: known   seconds each")
        for arm, rs in sorted(by_arm.items(), key=lambda kv: -len(kv[1])):
            a = _tally(rs)
            print(f"    {arm:10s} {len(rs):6d} {a[KNOWN][0]:7d} {a[FIRST][0]:6d} {100 * a[KNOWN][0] / len(rs):17.1f}"
                  f" {sum(s for _, s in a.values()) / len(rs):14.1f}")
    # a line leaves out a risk of 0 drawn at the first try
    fresh = by_arm.get("fresh", [])
    if fresh:
        print("  fresh programs by the risk the triggers put on them:")
        lower = None
        for top in RISK_BANDS:
            rs = [(ln, k) for ln, k in fresh if _band(ln.get("risk", 0.0)) == top]
            if rs:
                a = _tally(rs)
                span = "0" if top == 0.0 else f"({lower:g}, {top:g}]"
                print(f"    risk {span:11s} {len(rs):5d} programs, {a[KNOWN][0]:4d} known "
                      f"({100 * a[KNOWN][0] / len(rs):4.1f} a hundred), {a[FIRST][0]:3d} first")
            lower = top


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folders", type=Path, nargs="+", help="finished campaigns' folders (their --state)")
    ap.add_argument("--held", action="store_true",
                    help="a bug the corpus held before the campaign (counted, not saved) is known")
    args = ap.parse_args()
    for folder in args.folders:
        report(folder, args.held)
    return 0


if __name__ == "__main__":
    sys.exit(main())
