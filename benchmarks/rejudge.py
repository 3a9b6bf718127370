"""Does judging a known bug's program again, with the switch that removes that bug
thrown, show what the bug hid?  Measured on a finished blind campaign.

A program that hits a bug the campaign has found shows little else: a compile error
stops the compile, and a wrong value is one verdict of the whole program.  Where the
bug's culprit names a switch of Inductor whose throwing removes it
(``fuzzer.triage.switches``), the same program could be judged once more with that
switch thrown, so that the rest of it is tested.  Whether that pays is what this
script measures, before a campaign does it: for each program of a blind campaign's
folder whose findings were all of bugs found by earlier programs (``programs.jsonl``,
in the order they finished), the program is drawn again from (seed, index) and judged
afresh with the last such switch of its first bug thrown.  It prints how many
programs could be judged again, the seconds each took against the campaign's seconds
a program, and every bug class the second judgement showed that the program's own
bugs do not (a class of a family none of the campaign's entries shows is marked
``new``): the candidates, to read by hand.  A class shown only with a switch thrown
is a bug of a configuration users rarely set, and could only be saved with that
switch recorded in its entry.

    python benchmarks/rejudge.py FOLDER [--limit N]

Run it under the campaign's torch (its environment's interpreter).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from fuzzer.campaign.state import PROGRAMS_FILE, STATE_FILE  # noqa: E402
from fuzzer.corpus import bugs as bug_groups  # noqa: E402
from fuzzer.corpus.store import load_all  # noqa: E402
from fuzzer.judge import contract  # noqa: E402
from fuzzer.judge.trial import judge_fresh  # noqa: E402
from fuzzer.program.generate import generate  # noqa: E402
from fuzzer.triage import switches  # noqa: E402
from fuzzer.triage.family import family  # noqa: E402
from timesplit import KNOWN, kinds  # noqa: E402


def repeats(lines: list[dict]) -> list[dict]:
    """The programs whose every finding is of a bug an earlier program hit, in the order
    the campaign finished them."""
    return [line for line, kind in kinds(lines) if kind == KNOWN]


def classes(verdict) -> set:
    return {contract.bug_class(kind, verdict.of_kind(kind)) for kind in {d.kind for d in verdict.divergences}}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", type=Path)
    ap.add_argument("--limit", type=int, default=0, help="judge at most this many programs again (0: all)")
    ap.add_argument("--device", default="cpu")
    args = ap.parse_args()
    from torch._inductor import config as inductor_config

    state = json.loads((args.folder / STATE_FILE).read_text())
    if state.get("feedback"):
        sys.exit("a feedback campaign's programs are not drawn from (seed, index) alone: give a blind one")
    lines = [json.loads(ln) for ln in (args.folder / PROGRAMS_FILE).read_text().splitlines() if ln.strip()]
    entries, _ = load_all([args.folder / "corpus"])
    found = {b.id: b for b in bug_groups.group(entries)}
    families = {family(e.bug_class) for e in entries}
    campaign_seconds = statistics.median(ln["seconds"] for ln in lines if "seconds" in ln)
    table = {s.name: s for s in switches.SWITCHES}
    todo = repeats(lines)
    judged, no_switch, shown, seconds = 0, 0, [], []
    for line in todo:
        if args.limit and judged >= args.limit:
            break
        first = found.get(line["bugs"][0][0])
        gone = switches.gone(first.culprit.switches) if first is not None and first.culprit else []
        if not gone:
            no_switch += 1
            continue
        own = {found[b].family for b, _ in line["bugs"] if b in found}
        case = generate(line["seed"], features=state.get("features", {}))
        start = time.perf_counter()
        with inductor_config.patch(table[gone[-1]].patch):
            verdict = judge_fresh(case, args.device)
        seconds.append(time.perf_counter() - start)
        judged += 1
        if verdict.status != contract.OK:
            continue
        for cls in sorted(classes(verdict), key=lambda found_class: found_class.text):
            if family(cls) not in own:
                mark = "" if family(cls) in families else "  new"
                shown.append((line["index"], gone[-1], cls))
                print(f"program {line['index']} ({first.id} off with {gone[-1]}): {cls}{mark}", flush=True)
    print(f"{len(lines)} programs, {len(todo)} whose findings were all repeats; "
          f"{judged} judged again ({no_switch} of bugs no switch removes)")
    if seconds:
        print(f"seconds a judgement again: median {statistics.median(seconds):.2f} "
              f"(the campaign's seconds a program: median {campaign_seconds:.2f})")
    by_bug: dict[str, int] = {}
    for line in todo:
        by_bug[line["bugs"][0][0]] = by_bug.get(line["bugs"][0][0], 0) + 1
    for bug, n in sorted(by_bug.items(), key=lambda kv: -kv[1]):
        b = found.get(bug)
        gone = switches.gone(b.culprit.switches) if b is not None and b.culprit else []
        print(f"  {n:3d} repeats of {bug} ({b.blame if b else 'not in the corpus'}; "
              f"{'removed by ' + gone[-1] if gone else 'no switch removes it'})")
    fresh = {family(cls) for _, _, cls in shown} - families
    print(f"{len(shown)} classes the program's own bugs lack, in {len({i for i, _, _ in shown})} programs; "
          f"{len(fresh)} families none of the campaign's entries shows")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
