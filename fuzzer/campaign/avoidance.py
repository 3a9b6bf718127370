"""Avoidance: a campaign draws again a program that holds a held bug's example.

A campaign on a corpus that holds bugs spends much of its time on programs that show
one of them again: a fifth to a third of a blind campaign's time on the committed
corpus, most of it on programs that run the few statements a held bug's example is
(an effect inside a ``while_loop`` body: one statement, shown by every program that
draws it), each tried, confirmed, shrunk short and recognised to be counted.  Cheaper
recognition cannot win that back: the trial is spent whatever comes after it.

So, with ``--avoid-held``, program ``i`` is drawn as always (``program_seed(S, i)``);
where it *holds* an example of a bug the corpus held when the campaign started
(``fuzzer.corpus.subprogram.holds``: the example's statements, wired as there, under
the example's mode), it is drawn again from a seed of its own
(``derive_seed("avoid", seed, k)``), up to ``CampaignLimits.avoid_draws`` draws, and
the first that holds none is run; where every draw holds one, the first is.  A draw
is never set aside for a bug it only resembles (the same forms, other data flow,
another mode), so a held bug's forms stay in every other
combination; and a share of indices (``CampaignLimits.avoid_explore``, by a coin of
the seed and index) runs its first draw whatever it holds, so that a new bug in a
held one's company is slowed, never hidden for good.

The examples are those of the corpus at the start (and, with ``--known-upstream``,
that folder's entries of the bugs it names), written to the campaign folder
(``avoid.json``) and read back by ``--resume``: program ``i`` is a function of the
seed, the torch version and that set, whatever the campaign finds later and in
whatever order its workers finish.  Each program's line in ``programs.jsonl`` names
the bugs whose examples its index's earlier draws held (``avoided``).
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass
from pathlib import Path

from fuzzer.campaign.config import Config
from fuzzer.corpus import bugs, store
from fuzzer.corpus.entry import BadEntry, Entry
from fuzzer.corpus.subprogram import holds
from fuzzer.files import atomic_write
from fuzzer.judge import kinds
from fuzzer.limits import CAMPAIGN
from fuzzer.program.generate import derive_seed
from fuzzer.program.ir import Program
from fuzzer.triage import causes

#: the campaign folder's file of the examples avoided
AVOID_FILE = "avoid.json"


def start(config: Config, held: Collection[bugs.BugKey], folder: Path | None, resume: bool,
          log: Callable[[str], None]) -> Avoidance | None:
    """What a campaign of ``config`` avoids (None: not ``--avoid-held``, or cache pairs,
    which draw programs of their own): on ``--resume``, the examples its ``folder`` kept;
    else those of the bugs ``held`` now (``Session.held``), kept in ``folder``."""
    if not config.avoid_held or config.trial != kinds.PROGRAM:
        return None
    if resume and folder is not None and (saved := Avoidance.load(folder)) is not None:
        return saved
    avoidance = Avoidance.of_campaign(config, held)
    if folder is not None:
        avoidance.save(folder)
    log(f"avoiding programs that hold one of {len(avoidance.examples)} examples of "
        f"{len({e.bug for e in avoidance.examples})} held bugs, or one of {len(avoidance.causes)} held causes")
    return avoidance


def found_alike(entry: Entry, config: Config) -> bool:
    """Whether a campaign of ``config`` could have found ``entry``: a program trial (no
    cache pair's variant) through one of its targets, on its device, under its fault."""
    origin = entry.origin
    return (origin.variant is None and origin.target in config.targets and origin.fault == config.fault
            and origin.device == config.device)


@dataclass(frozen=True)
class HeldExample:
    """One example of a held bug: its bug, its entry, its program."""

    bug: str
    entry: str
    program: Program

    def to_json(self) -> dict:
        return {"bug": self.bug, "entry": self.entry, "program": self.program.to_json()}

    @classmethod
    def from_json(cls, data: dict) -> HeldExample:
        return cls(str(data["bug"]), str(data["entry"]), Program.from_json(data["program"]))


@dataclass(frozen=True)
class Drawn:
    """What program ``index`` of a campaign is: the seed of the program run, and for each
    draw set aside, the bugs whose examples it held."""

    index: int
    seed: int
    avoided: tuple[tuple[str, ...], ...] = ()

    @property
    def draws(self) -> int:
        """Programs drawn for the index: those set aside, and the one run where it is
        none of them."""
        return len(self.avoided) + (len(self.avoided) < CAMPAIGN.avoid_draws)


@dataclass(frozen=True)
class Avoidance:
    """The held bugs a campaign draws again for: their examples, and their causes where a
    program can be told to have one before it runs."""

    examples: tuple[HeldExample, ...]
    #: (bug, cause name): held bugs keyed by a cause whose probes say what a program
    #: needs to have it (``Cause.held_by``: an ORDERED effect inside that higher-order
    #: op's body, whichever form puts it there)
    causes: tuple[tuple[str, str], ...] = ()

    @classmethod
    def of_folders(cls, folders: Iterable[str | Path], keys: Callable[[bugs.BugKey], bool],
                   found_alike: Callable[[Entry], bool]) -> Avoidance:
        """The examples in ``folders`` of the bugs ``keys`` accepts (the corpus's held
        keys, the keys known upstream) that were found as this campaign would find them
        (``found_alike``: its trial kind, target, device, planted fault), each entry
        once, in a stable order."""
        paths = sorted({str(p) for folder in folders if Path(folder).is_dir()
                        for p in store.entries_in([str(folder)])[0]})
        seen: set[str] = set()
        out, held_causes = [], set()
        for path in paths:
            try:
                entry = store.load(path)
            except BadEntry:
                continue
            key = bugs.key_of(entry)
            if entry.id in seen or not keys(key) or not found_alike(entry) or not entry.case.program.body:
                continue
            seen.add(entry.id)
            out.append(HeldExample(bugs.bug_id(key), entry.id, entry.case.program))
            cause = causes.named(key.blame) if key.family == causes.FAMILY else None
            if cause is not None and cause.held_by is not None:
                held_causes.add((bugs.bug_id(key), cause.name))
        return cls(tuple(sorted(out, key=lambda e: (e.bug, e.entry))), tuple(sorted(held_causes)))

    @classmethod
    def of_campaign(cls, config: Config, held: Collection[bugs.BugKey]) -> Avoidance:
        """The examples a campaign of ``config`` avoids: in its corpus (and the folder of
        the keys known upstream), of the bugs ``held`` (``Session.held``), found as it
        finds them (:func:`found_alike`)."""
        folders = [config.corpus_dir, *([config.known_dir] if config.known_dir else [])]
        return cls.of_folders(folders, held.__contains__, lambda entry: found_alike(entry, config))

    def held_by(self, program: Program) -> tuple[str, ...]:
        """The bugs an example of which ``program`` holds, or whose cause it holds (each
        once, sorted)."""
        held = {e.bug for e in self.examples if holds(program, e.program)}
        held.update(bug for bug, name in self.causes if causes.named(name).held_by(program))
        return tuple(sorted(held))

    def draw(self, campaign_seed: int, index: int, pseed: int, program_of: Callable[[int], Program]) -> Drawn:
        """Index ``index``'s program: its own seed ``pseed`` unless that program holds an
        example, then the first of its redraws that holds none (the first draw where
        all do, or where the index's coin says to explore)."""
        explore = random.Random(derive_seed("avoid-explore", campaign_seed, index)).random() < CAMPAIGN.avoid_explore
        if not (self.examples or self.causes) or explore:
            return Drawn(index, pseed)
        avoided: list[tuple[str, ...]] = []
        for k in range(CAMPAIGN.avoid_draws):
            seed = pseed if k == 0 else derive_seed("avoid", pseed, k)
            held = self.held_by(program_of(seed))
            if not held:
                return Drawn(index, seed, tuple(avoided))
            avoided.append(held)
        return Drawn(index, pseed, tuple(avoided))

    # ------------------------------------------------------------------ as data
    def save(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        atomic_write(folder / AVOID_FILE, json.dumps({"examples": [e.to_json() for e in self.examples],
                                                      "causes": [list(c) for c in self.causes]}) + "\n")

    @classmethod
    def load(cls, folder: Path) -> Avoidance | None:
        """The examples a campaign started with (None: it avoided nothing)."""
        path = folder / AVOID_FILE
        if not path.is_file():
            return None
        data = json.loads(path.read_text())
        return cls(tuple(HeldExample.from_json(d) for d in data["examples"]),
                   tuple((str(bug), str(name)) for bug, name in data.get("causes", ())))
