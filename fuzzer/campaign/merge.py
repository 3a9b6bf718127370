"""Merging the campaign folders of shard runs into one (``dcefuzz merge``).

Shards run where a Ray cluster is not: a Slurm array, separate machines, each
``dcefuzz run --shard K/N --seed S``.  Their folders merge into one that reads as a
single run of seed S over every program they ran: ``state.json`` sums the counts and
records the programs run (shard 1/1, its watermark the first program no shard ran,
so ``--resume`` on the merged folder runs what is left and nothing twice); the
corpora merge entry by entry (``fuzzer.corpus.store.save``: the same signature adds
its hits and keeps the smaller example, so a bug found in several shards is one
entry with every hit); the stats logs are kept, each line tagged with its shard; and
the user ops' declaration findings are joined.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from fuzzer.campaign.state import (
    DECLARATIONS_FILE,
    INTERNAL_FILE,
    STATS_FILE,
    BadState,
    CampaignFolder,
    CampaignState,
    Shard,
    targets_text,
)
from fuzzer.corpus import store
from fuzzer.files import atomic_write


@dataclass
class Merged:
    state: CampaignState
    entries: int = 0
    new_entries: int = 0
    #: entries that were hits of an entry another shard had already
    merged_hits: int = 0
    unreadable: list[str] = field(default_factory=list)


def _ran(state: CampaignState) -> set[int]:
    """Every program index a shard's state says ran."""
    below = set()
    for i in state.shard.indices(0):
        if i >= state.next_index:
            break
        below.add(i)
    return below | set(state.done_above)


def merge(out: str | Path, folders: list[str | Path]) -> Merged:
    """Merge campaign ``folders`` into the new campaign folder ``out``."""
    target = CampaignFolder(out)
    target.check_unused()
    states = _shards(folders)
    total = _total(states, _ran_once(folders, states))
    result = Merged(total)
    for folder in folders:
        entries, bad = store.load_all([CampaignFolder(folder).corpus]) if CampaignFolder(folder).corpus.exists() \
            else ([], [])
        result.unreadable += bad
        for entry in entries:
            _, new = store.save(entry, target.corpus)
            result.entries += 1
            result.new_entries += new
            if not new:  # another shard found this signature first: one saved entry, one repeat hit
                result.merged_hits += 1
    total.saved -= result.merged_hits
    total.repeats += result.merged_hits
    target.save(total)
    _merge_files(target, folders, states)
    return result


def _shards(folders: list[str | Path]) -> list[CampaignState]:
    """The states of ``folders``, each a shard of one campaign (the same seed, features,
    ops, feedback and targets), or ``BadState``."""
    states = []
    for folder in folders:
        try:
            states.append(CampaignFolder(folder).load())
        except BadState as exc:
            raise BadState(f"{folder}: {exc}") from None
    first = states[0]
    for folder, state in zip(folders, states):
        for what, mine, theirs in (("seed", state.seed, first.seed), ("features", state.features, first.features),
                                   ("ops", state.ops, first.ops), ("feedback", state.feedback, first.feedback),
                                   ("target", targets_text(state.targets), targets_text(first.targets))):
            if mine != theirs:
                raise BadState(f"{folder} ran {what} {mine!r}, {folders[0]} {theirs!r}: only shards of one "
                               "campaign merge")
    return states


def _ran_once(folders: list[str | Path], states: list[CampaignState]) -> set[int]:
    """Every program index the shards ran, or ``BadState`` where two ran one."""
    ran: set[int] = set()
    for folder, state in zip(folders, states):
        mine = _ran(state)
        if mine & ran:
            raise BadState(f"{folder} ran programs another folder ran too (shard {state.shard}): "
                           "merge each shard once")
        ran |= mine
    return ran


def _total(states: list[CampaignState], ran: set[int]) -> CampaignState:
    """One state for the shards' ``states``: counts summed, the programs ``ran`` recorded."""
    first = states[0]
    watermark = 0
    while watermark in ran:
        watermark += 1
    return CampaignState(
        seed=first.seed, shard=Shard(), next_index=watermark, done_above=sorted(i for i in ran if i > watermark),
        programs=sum(s.programs for s in states), seconds=sum(s.seconds for s in states),
        findings=sum((s.findings for s in states), Counter()), statuses=sum((s.statuses for s in states), Counter()),
        saved=sum(s.saved for s in states), repeats=sum(s.repeats for s in states),
        recompiles=sum(s.recompiles for s in states), untested=sum((s.untested for s in states), Counter()),
        causes=sum((s.causes for s in states), Counter()),
        features=dict(first.features), ops=dict(first.ops), internal=sum((s.internal for s in states), Counter()),
        reached=sum((s.reached for s in states), Counter()), feedback=first.feedback, targets=first.targets,
        withdrawn=[w for s in states for w in s.withdrawn])


def _merge_files(target: CampaignFolder, folders: list[str | Path], states: list[CampaignState]) -> None:
    """The shards' stats logs (each line tagged with its shard), declaration findings
    (each once) and dcefuzz's own errors, written into ``target``."""
    lines = []
    for folder, state in zip(folders, states):
        for line in CampaignFolder(folder).stats_lines():
            lines.append(json.dumps({**line, "merged_from": str(state.shard)}))
    atomic_write(target.path / STATS_FILE, "".join(line + "\n" for line in lines))
    problems = []
    for folder in folders:
        path = Path(folder) / DECLARATIONS_FILE
        if path.exists():
            problems += [p for p in json.loads(path.read_text()) if p not in problems]
    if problems:
        atomic_write(target.path / DECLARATIONS_FILE, json.dumps(problems, indent=2) + "\n")
    errors = [line for folder, state in zip(folders, states) if (Path(folder) / INTERNAL_FILE).exists()
              for line in (Path(folder) / INTERNAL_FILE).read_text().splitlines() if line.strip()]
    if errors:
        atomic_write(target.path / INTERNAL_FILE, "".join(line + "\n" for line in errors))
