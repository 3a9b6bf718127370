"""Campaign state on disk: where a campaign stands, so it can resume, and its stats log.

A campaign folder holds ``state.json`` (seed, shard, the next program index and the
running counts; rewritten atomically every progress interval and at the end),
``stats.jsonl`` (one JSON line per progress interval, for plotting), ``programs.jsonl``
(one line per finished program: how it was made, its seconds, its status and bugs) and, unless the
campaign was given another corpus folder, ``corpus/`` with its findings.  A campaign
started without a folder gets a new one (:func:`new_run_folder`): a first run never
writes into a repository's committed corpus, and a second run never repeats the
first one's programs or adds to its counts.  Going on with a folder's campaign is
always explicit (resume); starting a new campaign in it is refused.  Because
program ``i`` is a pure function of ``(seed, i)``, the next index is all a resumed
campaign needs to carry on the same stream without repeating a program.

Shards split one stream across machines: shard ``K/N`` takes the programs whose
index is ``K-1`` modulo ``N``, so no two shards ever run the same program.
"""

from __future__ import annotations

import datetime as _dt
import itertools
import json
import os
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from fuzzer.files import atomic_write, read_json
from fuzzer.judge.identity import BugClass

STATE_FILE = "state.json"
STATS_FILE = "stats.jsonl"
#: dcefuzz's own errors (``fuzzer.internal``), one JSON line each, with the traceback
INTERNAL_FILE = "internal-errors.jsonl"
#: the user ops' declaration findings (``fuzzer.user.audit``), beside the state
DECLARATIONS_FILE = "declarations.json"
#: one line per bug as the run first hits it: when, on which program, whether new
BUGS_FILE = "bugs.jsonl"
#: one line per program as it finishes: how it was made, what it cost, what it found
PROGRAMS_FILE = "programs.jsonl"
#: what torch logs in the workers (Dynamo's ERROR lines with their stacks, Inductor's
#: warnings): the campaign's terminal shows dcefuzz's lines only
TORCH_LOG = "torch.log"
STATE_SCHEMA = 1
#: the targets of a campaign whose state names none (``fuzzer.judge.targets.DEFAULT``)
DEFAULT_TARGETS: tuple[str, ...] = ("compile",)
#: what parts the names of a campaign's targets where it writes them as one text
TARGET_SEPARATOR = ","


def targets_text(names: tuple[str, ...]) -> str:
    """A campaign's targets as its state's JSON and its messages write them (as
    ``--targets`` takes them): their names joined by commas."""
    return TARGET_SEPARATOR.join(names)


class BadState(ValueError):
    """A state file that cannot be resumed from."""


@dataclass(frozen=True)
class Shard:
    """Shard ``index`` (1-based) of ``count``."""

    index: int = 1
    count: int = 1

    @classmethod
    def parse(cls, text: str) -> Shard:
        try:
            k, n = (int(x) for x in text.split("/"))
        except ValueError:
            raise ValueError(f"{text!r} is not a shard like 2/8") from None
        if not 1 <= k <= n:
            raise ValueError(f"shard {k}/{n}: need 1 <= K <= N")
        return cls(k, n)

    def indices(self, start: int = 0) -> Iterator[int]:
        """This shard's program indices, from the first one at or after ``start``."""
        first = start + (self.index - 1 - start) % self.count
        i = first
        while True:
            yield i
            i += self.count

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


#: where a campaign started without a folder gets one, relative to the current directory
RUNS_ROOT = Path(".dcefuzz") / "runs"
#: the corpus of a campaign folder, unless the campaign was given another one
CORPUS_FOLDER = "corpus"
#: where a casualty that did not die again in a fresh process is kept, out of the corpus
UNCONFIRMED_FOLDER = "unconfirmed"


def run_folder_name(seed: int, shard: Shard, when: _dt.datetime) -> str:
    """``<UTC timestamp>-seed<S>-shard<K>of<N>``: sorts by start time, says what ran."""
    utc = when.astimezone(_dt.timezone.utc)
    return f"{utc:%Y%m%dT%H%M%SZ}-seed{seed}-shard{shard.index}of{shard.count}"


def new_run_folder(seed: int, shard: Shard, root: str | os.PathLike = RUNS_ROOT,
                   now: _dt.datetime | None = None) -> Path:
    """Create a folder no campaign has used, under ``root``, and return it.

    Two campaigns started in the same second with the same seed and shard get
    ``<name>`` and ``<name>-2``: the folder is claimed by creating it, so they
    cannot both take one.
    """
    base = run_folder_name(seed, shard, now or _dt.datetime.now(_dt.timezone.utc))
    Path(root).mkdir(parents=True, exist_ok=True)
    for n in itertools.count(1):
        path = Path(root) / (base if n == 1 else f"{base}-{n}")
        try:
            path.mkdir()
        except FileExistsError:
            continue
        return path
    raise AssertionError("unreachable")  # pragma: no cover


@dataclass(frozen=True)
class Withdrawal:
    """A casualty taken out of the corpus: its own case did not die so again in a fresh
    process (``reduce.casualty.dies_again``), so the program its worker died on is a
    suspect, not a finding.  Kept in the state, the summary, ``dcefuzz stats`` and the
    site with why, so a withdrawn corruption is never silently lost."""

    #: the entry's id and kind, and the bug class it was saved with
    id: str
    kind: str
    bug_class: BugClass
    #: why, in words (``Confirmation.why``: how each fresh process ended)
    why: str
    #: where its files went (the campaign folder's ``unconfirmed/``)
    path: str

    def to_json(self) -> dict:
        return {"id": self.id, "kind": self.kind, "bug_class": self.bug_class.text, "why": self.why, "path": self.path}

    @classmethod
    def from_json(cls, data: dict) -> Withdrawal:
        return cls(id=str(data["id"]), kind=str(data["kind"]), bug_class=BugClass.parse(str(data["bug_class"])),
                   why=str(data["why"]), path=str(data["path"]))

    def line(self) -> str:
        return f"{self.id} ({self.bug_class}): {self.why} -> {self.path}"


@dataclass
class CampaignState:
    seed: int
    shard: Shard
    #: every program index of this shard below it has run (the watermark)
    next_index: int = 0
    #: indices above the watermark that have run too (parallel workers finish out of order)
    done_above: list[int] = field(default_factory=list)
    programs: int = 0
    seconds: float = 0.0
    findings: Counter = field(default_factory=Counter)
    statuses: Counter = field(default_factory=Counter)
    saved: int = 0
    repeats: int = 0
    recompiles: int = 0
    #: programs not wholly compiled (and with no finding), by the first reason
    untested: Counter = field(default_factory=Counter)
    #: the same programs by ``(reason, cause)`` of that first reason
    #: (``fuzzer.judge.observe.Gap``: the type of the failure a refusal declined, ...)
    causes: Counter = field(default_factory=Counter)
    #: the feature weights the programs are drawn with (``fuzzer.program.features``):
    #: part of what program i is, so a resumed campaign must keep them
    features: dict = field(default_factory=dict)
    #: the custom ops the programs may call, when a user's are among them
    #: (``{"builtin": bool, "user": [qualified names]}``; empty: dcefuzz's own)
    ops: dict = field(default_factory=dict)
    #: dcefuzz's own errors (``fuzzer.internal``), by the stage that raised
    internal: Counter = field(default_factory=Counter)
    #: what the programs reached that the contract judges apart (``judge.trial.reached``)
    reached: Counter = field(default_factory=Counter)
    #: whether the programs came from a feedback director, which dcefuzz had until
    #: 2026-12 (docs/campaigns.md, "Feedback, measured and removed"): such a campaign
    #: is not resumed
    feedback: bool = False
    #: the pipelines its programs are compiled and run through (``fuzzer.judge.targets``,
    #: ``Config.targets``): a resumed campaign must keep to the same (in the JSON: their
    #: names joined by commas, absent for ``compile`` alone)
    targets: tuple[str, ...] = DEFAULT_TARGETS
    #: casualties taken out of the corpus, with why (:class:`Withdrawal`)
    withdrawn: list[Withdrawal] = field(default_factory=list)

    def to_json(self) -> dict:
        return {"schema": STATE_SCHEMA, "seed": self.seed, "shard": str(self.shard),
                "next_index": self.next_index, "done_above": list(self.done_above), "programs": self.programs,
                "seconds": round(self.seconds, 2), "findings": dict(self.findings),
                "statuses": dict(self.statuses), "saved": self.saved, "repeats": self.repeats,
                "recompiles": self.recompiles, "untested": dict(self.untested),
                "untested_causes": causes_json(self.causes),
                "internal_errors": dict(self.internal), "reached": dict(self.reached),
                "features": dict(self.features), **({"ops": dict(self.ops)} if self.ops else {}),
                **({"feedback": True} if self.feedback else {}),
                **({"target": targets_text(self.targets)} if self.targets != DEFAULT_TARGETS else {}),
                **({"withdrawn": [w.to_json() for w in self.withdrawn]} if self.withdrawn else {})}

    @classmethod
    def from_json(cls, data: dict) -> CampaignState:
        try:
            if data["schema"] != STATE_SCHEMA:
                raise BadState(f"state schema {data['schema']!r}, this dcefuzz reads {STATE_SCHEMA}")
            return cls(seed=int(data["seed"]), shard=Shard.parse(data["shard"]),
                       next_index=int(data["next_index"]),
                       done_above=[int(i) for i in data.get("done_above", [])], programs=int(data["programs"]),
                       seconds=float(data["seconds"]), findings=Counter(data["findings"]),
                       statuses=Counter(data["statuses"]), saved=int(data["saved"]),
                       repeats=int(data["repeats"]), recompiles=int(data.get("recompiles", 0)),
                       untested=Counter(data.get("untested", {})),
                       causes=Counter({(reason, cause): int(n) for reason, by in data.get("untested_causes", {}).items()
                                       for cause, n in by.items()}),
                       internal=Counter(data.get("internal_errors", {})),
                       reached=Counter(data.get("reached", {})),
                       features={str(k): float(v) for k, v in data.get("features", {}).items()},
                       ops=dict(data.get("ops", {})), feedback=bool(data.get("feedback", False)),
                       targets=tuple(str(data.get("target") or DEFAULT_TARGETS[0]).split(TARGET_SEPARATOR)),
                       withdrawn=[Withdrawal.from_json(w) for w in data.get("withdrawn", [])])
        except (KeyError, TypeError, ValueError) as exc:
            if isinstance(exc, BadState):
                raise
            raise BadState(f"malformed state: {exc!r}") from exc


def causes_json(causes: Counter) -> dict:
    """``(reason, cause)`` counts as JSON: ``{reason: {cause: n}}``."""
    out: dict = {}
    for (reason, cause), n in sorted(causes.items()):
        out.setdefault(reason, {})[cause] = n
    return out


def withdrawn_text(withdrawn: list[Withdrawal]) -> str:
    """The withdrawn casualties as a summary line says them: how many, and why each."""
    return f"{len(withdrawn)} (casualties that did not die so again in a fresh process, not findings" + (
        ": " + "; ".join(w.line() for w in withdrawn) if withdrawn else "") + ")"


def untested_text(untested: Counter, causes: Counter) -> str:
    """Untested programs by reason, each with its causes where they have one:
    ``graph-break 2, refused 12 [OutsideGuards 9, UserError 3]``."""
    parts = []
    for reason, n in sorted(untested.items()):
        named = sorted((cause, k) for (r, cause), k in causes.items() if r == reason and cause)
        parts.append(f"{reason} {n}" + (" [" + ", ".join(f"{c} {k}" for c, k in named) + "]" if named else ""))
    return ", ".join(parts)


class CampaignFolder:
    """Reads and writes one campaign's state and stats log."""

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)

    @property
    def corpus(self) -> Path:
        """The folder's own corpus (used unless the campaign names another)."""
        return self.path / CORPUS_FOLDER

    @property
    def unconfirmed(self) -> Path:
        """Casualties that did not die again in a fresh process: evidence, not findings."""
        return self.path / UNCONFIRMED_FOLDER

    @property
    def torch_log(self) -> Path:
        return self.path / TORCH_LOG

    def holds_campaign(self) -> bool:
        return (self.path / STATE_FILE).exists() or (self.path / STATS_FILE).exists()

    def check_unused(self) -> None:
        """Refuse to start a new campaign where one has run: its state would be
        overwritten and its stats log appended to, and from index 0 the new campaign
        would repeat the old one's programs."""
        if self.holds_campaign():
            raise BadState(f"{self.path} already holds a campaign: pass --resume to carry on "
                           "from it, or choose another --state folder")

    def load(self) -> CampaignState:
        data = read_json(self.path / STATE_FILE, BadState, "no campaign state to resume")
        return CampaignState.from_json(data)

    def resume(self, fresh: CampaignState) -> CampaignState:
        """The state saved here, which a run that would start as ``fresh`` continues;
        BadState where its programs were drawn otherwise (seed and shard, features,
        targets, ops; a campaign run with feedback is not resumed)."""
        state = self.load()
        if (state.seed, state.shard) != (fresh.seed, fresh.shard):
            raise BadState(f"{self.path} holds seed {state.seed} shard {state.shard}, "
                           f"not seed {fresh.seed} shard {fresh.shard}")
        self._drawn_alike("features", state.features, fresh.features, "none")
        if state.targets != fresh.targets:
            raise BadState(f"{self.path} ran its programs through target {targets_text(state.targets)}: "
                           f"resume with --target {targets_text(state.targets)}")
        self._drawn_alike("ops", state.ops, fresh.ops, "dcefuzz")
        if state.feedback:
            raise BadState(f"{self.path} drew its programs with feedback, which dcefuzz no longer has: "
                           "start a new campaign")
        return state

    def _drawn_alike(self, option: str, saved: dict, given: dict, empty: str) -> None:
        """BadState where the saved run drew its programs with other ``--<option>``
        (``empty``: how none is said)."""
        if saved != given:
            raise BadState(f"{self.path} drew its programs with {option} {saved or empty}, "
                           f"not {given or empty}: resume with the same --{option}")

    def save(self, state: CampaignState) -> None:
        self.path.mkdir(parents=True, exist_ok=True)
        atomic_write(self.path / STATE_FILE, json.dumps(state.to_json(), indent=2) + "\n")

    def log_stats(self, state: CampaignState, **extra) -> None:
        self.path.mkdir(parents=True, exist_ok=True)
        line = {"time": round(time.time(), 1), **state.to_json(), **extra}
        line.pop("schema", None)
        with open(self.path / STATS_FILE, "a") as fh:
            fh.write(json.dumps(line) + "\n")

    def log_bug(self, seconds: float, index: int, bug: str, key: str, kind: str, new: bool) -> None:
        """Append a bug's first hit in this run (``new``: new to the corpus too)."""
        self.path.mkdir(parents=True, exist_ok=True)
        line = {"time": round(time.time(), 1), "seconds": round(seconds, 1), "program": index, "bug": bug,
                "key": key, "kind": kind, "new": new}
        with open(self.path / BUGS_FILE, "a") as fh:
            fh.write(json.dumps(line) + "\n")

    def bug_lines(self) -> list[dict]:
        return _json_lines(self.path / BUGS_FILE)

    def log_program(self, line: dict) -> None:
        """Append one finished program's line (``Session.finished``): the record a reader,
        or a study of what a schedule should steer by, reads program by program."""
        self.path.mkdir(parents=True, exist_ok=True)
        with open(self.path / PROGRAMS_FILE, "a") as fh:
            fh.write(json.dumps(line) + "\n")

    def program_lines(self) -> list[dict]:
        return _json_lines(self.path / PROGRAMS_FILE)

    def log_internal(self, index: int | None, program_seed: int | None, error) -> Path:
        """Append one of dcefuzz's own errors (``fuzzer.internal.InternalError``), with the
        program it met, to ``internal-errors.jsonl``; its path."""
        self.path.mkdir(parents=True, exist_ok=True)
        line = {"time": round(time.time(), 1), "program": index, "program_seed": program_seed,
                **error.to_json()}
        with open(self.path / INTERNAL_FILE, "a") as fh:
            fh.write(json.dumps(line) + "\n")
        return self.path / INTERNAL_FILE

    def stats_lines(self) -> list[dict]:
        return _json_lines(self.path / STATS_FILE)


def _json_lines(path: Path) -> list[dict]:
    """A JSON-lines log, read: none there, no lines; a line cut short by a kill is
    skipped, the rest still reads."""
    if not path.exists():
        return []
    out = []
    for raw in path.read_text().splitlines():
        try:
            out.append(json.loads(raw))
        except json.JSONDecodeError:
            continue
    return out
