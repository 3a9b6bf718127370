"""Which public PyTorch bugs a campaign rediscovered: a benchmark of known bugs.

``benchmarks/known/`` holds one JSON record per public bug (``<number>.json``; the
rule that chose them is in ``benchmarks/known/README.md``): the issue, its symptom,
the form a program needs to hit it, the releases it is live on, and whether dcefuzz
can express it today.  Where it can, the record carries an *entry*: a case written
by hand (or taken from ``corpus/``, where an entry there is the issue's program) and,
per torch release it was run under, what that release gave it: a finding with its
bug's key (``fuzzer.corpus.bugs.key_of``, the key a campaign logs), or clean.

    python benchmarks/known.py FOLDER [FOLDER ...]   # what these campaigns rediscovered
    python benchmarks/known.py --check [NUMBER ...]  # run the hand-written entries here

The report's third line counts against what the campaigns could rediscover: the bugs
with a key on the release they ran on (read from their entries), of the symptoms their
kind of campaign shows (stale caches need ``--cache-pairs``; a campaign of programs
shows the rest).  A bug fixed on that release, or shown only on another, cannot be
rediscovered there, whatever the generator writes.

A campaign rediscovered a bug when it logged a bug (``bugs.jsonl``, or an entry of its
corpus where the log is missing) whose key is a key the bug's entry was seen with;
the first such line says when (seconds into the campaign) and on which program.
``--check`` runs each hand-written entry under the installed torch as a campaign
would treat its finding (``fuzzer.campaign.entries.entry_for``: confirmed, shrunk,
triaged) and records the key in the record, under that torch's version.  A record's
``area`` marks the bugs about memory (``AREAS``: aliasing, layout), whose counts the
report gives on a line of their own.  The benchmark measures the generator; nothing
in dcefuzz reads it.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from fuzzer.campaign.state import CampaignFolder  # noqa: E402
from fuzzer.corpus import bugs  # noqa: E402
from fuzzer.corpus.store import load_all  # noqa: E402

#: the benchmark's records
BENCH = ROOT / "benchmarks" / "known"
#: what a release gave an entry
FINDING, CLEAN = "finding", "clean"
#: the memory rows (issue 52's): a bug about aliasing between tensors (views, aliased
#: inputs, clones and copies of one storage) or about layout (strides of inputs and results)
AREAS = ("aliasing", "layout")
SYMPTOMS = ("wrong-output", "wrong-mutation", "effect-log", "missed-dce", "compile-error",
            "runtime-error", "crash", "stale-cache")


@dataclass
class Known:
    """One public bug of the benchmark, as its record says."""

    number: str
    issue: str
    title: str
    symptom: str
    form: str
    expressible: bool
    live: str = ""
    needs: str = ""
    #: one of AREAS, or "" for a bug of neither
    area: str = ""
    #: the entry's case (Case JSON), where the bug is expressible
    case: dict | None = None
    #: where the case comes from: ``hand-written``, or ``corpus:<entry id>``
    source: str = ""
    #: torch version -> {"status": finding|clean|untested|..., "key": ..., "kind": ...}
    observed: dict = field(default_factory=dict)
    path: Path | None = None

    @property
    def keys(self) -> set[str]:
        """Every key the entry was seen with, under any release."""
        return {o["key"] for o in self.observed.values() if o.get("status") == FINDING and o.get("key")}


def load(folder: Path = BENCH) -> list[Known]:
    """The benchmark's records, by issue number."""
    out = []
    for path in sorted(folder.glob("*.json")):
        data = json.loads(path.read_text())
        entry = data.get("entry") or {}
        out.append(Known(number=path.stem, issue=data["issue"], title=data.get("title", ""),
                         symptom=data["symptom"], form=data["form"], expressible=bool(data["expressible"]),
                         live=data.get("live", ""), needs=data.get("needs", ""), area=data.get("area", ""),
                         case=entry.get("case"),
                         source=entry.get("source", ""), observed=dict(entry.get("observed", {})), path=path))
    return sorted(out, key=lambda k: int(k.number))


# ------------------------------------------------------------------ a campaign's bugs
@dataclass(frozen=True)
class Hit:
    """A bug a campaign logged the first time it hit it."""

    key: str
    seconds: float | None
    program: int | None
    folder: str


def campaign_hits(folder: str | Path) -> list[Hit]:
    """The bugs a campaign folder logged, first hit first: ``bugs.jsonl``, or where a
    campaign left none, the entries of its corpus (keyed as the campaign keys them,
    ``bugs.key_of``; no time is known then)."""
    camp = CampaignFolder(folder)
    lines = camp.bug_lines()
    if lines:
        return [Hit(line["key"], line.get("seconds"), line.get("program"), str(folder)) for line in lines]
    entries, _ = load_all([str(camp.corpus)]) if camp.corpus.exists() else ([], [])
    return [Hit(bugs.key_of(e).text, None, None, str(folder)) for e in entries]


def rediscovered(bench: list[Known], folders: list[str | Path]) -> dict[str, Hit]:
    """For each benchmark bug (by number) that the campaigns hit, its earliest hit: a
    logged bug whose key is one its entry was seen with."""
    hits = [h for f in folders for h in campaign_hits(f)]
    found: dict[str, Hit] = {}
    for known in bench:
        mine = [h for h in hits if h.key in known.keys]
        if mine:
            found[known.number] = min(mine, key=lambda h: (h.seconds is None, h.seconds or 0.0))
    return found


def _memory_line(bench: list[Known], found: dict[str, Hit]) -> str:
    """The aliasing and layout rows, counted as the first line counts all."""
    rows = [k for k in bench if k.area in AREAS]
    by_area = ", ".join(f"{sum(k.area == a for k in rows)} {a}" for a in AREAS)
    expressible = [k for k in rows if k.expressible]
    live = [k for k in expressible if k.keys]
    return (f"aliasing and layout rows: {len(rows)} ({by_area}); {len(expressible)} expressible, "
            f"{len(live)} with a key; rediscovered {sum(k.number in found for k in rows)} of {len(live)}")


#: the symptom only a campaign of cache pairs (``--cache-pairs``) can show, and only it
CACHE_SYMPTOM = "stale-cache"


def campaign_release(folders: list[str | Path]) -> tuple[str | None, bool]:
    """The torch release the campaigns ran on and whether they ran cache pairs, read
    from their entries (each records its ``torch_version`` and kind): (None, False)
    where they saved none."""
    entries = []
    for folder in folders:
        camp = CampaignFolder(folder)
        if camp.corpus.exists():
            entries += load_all([str(camp.corpus)])[0]
    if not entries:
        return None, False
    releases = Counter(e.torch_version for e in entries)
    return releases.most_common(1)[0][0], all(e.kind == CACHE_SYMPTOM for e in entries)


def _release_line(bench: list[Known], found: dict[str, Hit], release: str, pairs: bool) -> str:
    """What a campaign on ``release`` could rediscover: a bug with a key on that release
    (a bug fixed there, or shown only on another, has none), of the symptoms its kind of
    campaign shows (cache pairs show stale caches alone; programs everything else)."""
    live = [k for k in bench if k.expressible and (k.observed.get(release) or {}).get("status") == FINDING]
    reach = [k for k in live if (k.symptom == CACHE_SYMPTOM) == pairs]
    hit = sum(k.number in found for k in reach)
    kind = "cache pairs" if pairs else "programs"
    return (f"on {release}, the campaigns' release: {len(live)} with a key there, {len(reach)} of them of the "
            f"symptoms a campaign of {kind} shows; rediscovered {hit} of {len(reach)}"
            f" ({100 * hit // max(len(reach), 1)} %)")


def report(bench: list[Known], folders: list[str | Path], release: str | None = None,
           pairs: bool = False) -> str:
    """The table ``known.py FOLDER`` prints (``release``: the campaigns' torch, whose
    reachable bugs get a line of their own; None: no such line)."""
    found = rediscovered(bench, folders)
    expressible = [k for k in bench if k.expressible]
    live = [k for k in expressible if k.keys]
    lines = [f"{len(bench)} public bugs; {len(expressible)} expressible today "
             f"({100 * len(expressible) // max(len(bench), 1)} %), {len(live)} of them with a key "
             f"(a finding on a release tried); rediscovered {len(found)} of {len(live)}", _memory_line(bench, found)]
    if release is not None:
        lines.append(_release_line(bench, found, release, pairs))
    lines.append("")
    for k in bench:
        hit = found.get(k.number)
        if hit is not None:
            when = f"{hit.seconds:.0f} s" if hit.seconds is not None else "time unknown"
            state = f"REDISCOVERED at {when}, program {hit.program}"
        elif not k.expressible:
            state = f"not expressible ({k.needs})"
        elif not k.keys:
            state = "expressible, no finding on the releases tried"
        else:
            state = "missed"
        lines.append(f"{k.issue:24s} {k.symptom:15s} {state}")
    return "\n".join(lines)


# -------------------------------------------------------------------- --check
def observe(known: Known, corpus: Path = ROOT / "corpus") -> dict:
    """What the installed torch gives ``known``'s entry: for a corpus entry, its key
    and its recorded verdict on this release (its ``versions``, from ``dcefuzz
    replay``); for a hand-written one, a campaign's treatment of a fresh trial."""
    import torch

    if known.source.startswith("corpus:"):
        entry_id = known.source.split(":", 1)[1]
        entries, _ = load_all([str(corpus / f"{entry_id}.json")])
        entry = entries[0]
        verdict = entry.versions.get(torch.__version__)
        how = "the corpus entry's replay on this release"
        if verdict is None and entry.torch_version == torch.__version__:
            verdict, how = "reproduces", "the corpus entry was found on this release"
        status = FINDING if verdict == "reproduces" else (verdict or "not replayed")
        key = bugs.key_of(entry)
        return {"status": status, "kind": entry.kind, "key": key.text, "bug": bugs.bug_id(key),
                "how": how}
    return _trial(known)


def _trial(known: Known) -> dict:
    """A hand-written entry judged here, as a campaign judges a program: its trial, then
    each finding shrunk and triaged (``entries.entry_for``) and keyed."""
    from fuzzer.campaign import entries
    from fuzzer.campaign.config import Config
    from fuzzer.judge.trial import run_trial
    from fuzzer.program.ir import Case

    case = Case.from_json(known.case)
    case.validate()
    config = Config(seed=0, device="cpu", corpus_dir="")
    result = run_trial(case, config.device, config.backend)
    if not result.findings:
        detail = result.untested_reason or ""
        return {"status": str(result.status), **({"detail": detail} if detail else {}), "how": "a trial here"}
    found = []
    for finding in result.findings:
        entry = entries.entry_for(finding, None, config)
        key = bugs.key_of(entry)
        found.append({"status": FINDING, "kind": entry.kind, "key": key.text, "bug": bugs.bug_id(key),
                      "statements": entry.statements, "how": "a trial here, shrunk and triaged"})
    return found[0] if len(found) == 1 else {**found[0], "others": found[1:]}


def check(bench: list[Known], numbers: list[str]) -> None:
    """Run the chosen entries (all expressible ones by default) and record each result
    in its record, under the installed torch's version."""
    import torch

    for known in bench:
        if not known.expressible or not known.case or (numbers and known.number not in numbers):
            continue
        seen = observe(known)
        print(f"{known.issue}: {seen.get('status')} {seen.get('kind', '')} {seen.get('bug', '')}", flush=True)
        data = json.loads(known.path.read_text())
        data["entry"].setdefault("observed", {})[torch.__version__] = seen
        known.path.write_text(json.dumps(data, indent=1) + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folders", nargs="*", help="campaign folders (or, with --check, issue numbers)")
    parser.add_argument("--check", action="store_true", help="run the benchmark's entries under this torch")
    parser.add_argument("--release", help="the torch the campaigns ran on, as entries record it (2.13.0+cpu), "
                        "where their folders hold no entries to read it from (a --corpus elsewhere)")
    parser.add_argument("--cache-pairs", action="store_true", help="the campaigns ran cache pairs")
    args = parser.parse_args(argv)
    bench = load()
    if args.check:
        check(bench, args.folders)
        return 0
    if not args.folders:
        parser.error("give a campaign folder")
    release, pairs = campaign_release(args.folders)
    release, pairs = args.release or release, args.cache_pairs or pairs
    print(report(bench, args.folders, release, pairs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
