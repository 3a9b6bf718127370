"""What is already public about a bug: its issues and pull requests upstream, as data.

A bug's id is a hash of its grouping key, so it changes whenever the grouping does.
The upstream file (``corpus/upstream.json``) is therefore keyed by *member entries*:
each record names the entries it was written for, and a bug takes every record one of
its entries is named in.  A regrouping that moves entries between bugs moves their
records with them; a record whose entries land in two bugs speaks for both, and
``check`` says so.

A record:

    {"entries": ["effect-log-915158cff0e3", ...],
     "links": [{"ref": "pytorch/pytorch#189454", "kind": "issue", "state": "open",
                "note": "the dropped ordering edge"}, ...],
     "searched": "2026-11-30",
     "note": "one line for the table",
     "cause": "the cause as read in torch's source, in a few sentences",
     "script": "import torch\n..."}

``cause`` and ``script`` are optional, and where they are set they are what a
reader found by hand, not what the fuzzer measured: ``cause`` is the cause as read
(which code of torch does what wrong, quoted from the bug's section of
``docs/bugs.md``), ``script`` the shortest hand script of it there (a complete
program, torch only, that shows the bug in fewer lines than the entry's brief).  A
report carries both (``fuzzer.render.report``), the docs' section quotes them, and
``tests/test_report.py`` checks the two agree.  They are data here rather than read
out of the docs' prose, so nothing parses free text to find them.

A link's ``relation`` is ``same`` (the default: the issue or PR is about this cause),
``fixes`` (a merged PR whose change removed the bug: "fixed in 2.14.1 by #188278") or
``related`` (near it only).  A record without a ``same`` or ``fixes`` link, with
``searched`` set, says "searched, nothing public about its cause": a **new** bug.  A
bug no record names was never looked up.

The tracker shows a landed PR as "closed", like one given up, so a PR is ``merged``
only where a release's source was read and holds its change, and the link names that
release (``"release": "2.14.1"``); a closed PR whose change no release read holds is
``closed``, saying no more than the tracker does.  A ``fixes`` link's release must be
one where the bug's repros ran and were fixed (``check``): a fix the replay verdicts
contradict is refused.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from fuzzer.corpus import releases
from fuzzer.files import atomic_write, read_json

#: the file's name in a corpus folder
FILE = "upstream.json"
#: how a link bears on the bug: its cause itself, the merged change that removed it,
#: or only near it (a related report, another trigger of the same crash); ``same`` and
#: ``fixes`` make a bug known upstream
RELATIONS = ("same", "fixes", "related")
#: the relations that make a bug known upstream
KNOWN = frozenset({"same", "fixes"})
#: a link's kinds and the states each may be in; a PR's ``closed``: the tracker says
#: closed and no release read holds its change (landed after it, or never: not told apart)
STATES = {
    "issue": ("open", "closed", "fixed"),
    "pr": ("open", "merged", "closed", "closed-unmerged", "reverted"),
}
#: the one state that names the release whose source holds the change
MERGED = "merged"


class UpstreamError(ValueError):
    """The upstream file does not read as records."""


#: the words a link's line starts with, by relation
_LEADS = {"same": "", "fixes": "fixed by ", "related": "related: "}


@dataclass(frozen=True)
class Link:
    ref: str
    kind: str
    state: str
    note: str = ""
    relation: str = "same"
    #: a merged PR's: the release whose source was read and holds its change
    release: str = ""

    @property
    def status(self) -> str:
        """``merged in 2.14.1``, ``open``: the state, with the release that shows it."""
        return f"{self.state} in {self.release}" if self.release else self.state

    def label(self, lead: bool = True) -> str:
        """``fixed by pytorch/pytorch#188278 (pr, merged in 2.14.1)``: the link without its
        note; without ``lead``, without the words its relation puts before it."""
        return self._words("", lead)

    def line(self) -> str:
        return self._words(self.note, True)

    def _words(self, note: str, lead: bool) -> str:
        head = _LEADS[self.relation] if lead else ""
        return f"{head}{self.ref} ({self.kind}, {self.status}" + (f": {note}" if note else "") + ")"

    def to_json(self) -> dict:
        return {"ref": self.ref, "kind": self.kind, "state": self.state, "relation": self.relation,
                **({"release": self.release} if self.release else {}), **({"note": self.note} if self.note else {})}


@dataclass(frozen=True)
class Record:
    entries: tuple[str, ...]
    links: tuple[Link, ...]
    note: str = ""
    searched: str = ""
    #: the cause as read by hand in torch's source ("": not read, or not written here)
    cause: str = ""
    #: the shortest hand script that shows it: a complete program ("": none)
    script: str = ""

    @property
    def known(self) -> bool:
        """A public issue or PR is about this cause itself."""
        return any(link.relation in KNOWN for link in self.links)

    def to_json(self) -> dict:
        return {"entries": list(self.entries), "links": [link.to_json() for link in self.links],
                "note": self.note, "searched": self.searched,
                **({"cause": self.cause} if self.cause else {}), **({"script": self.script} if self.script else {})}


@dataclass(frozen=True)
class Upstream:
    """The records of a corpus, found by member entry."""

    records: tuple[Record, ...] = ()
    _by_entry: dict = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self):
        for r in self.records:
            for e in r.entries:
                self._by_entry.setdefault(e, []).append(r)

    def of(self, entries: Iterable[str]) -> tuple[Record, ...]:
        """The records any of ``entries`` is named in, each once, in file order."""
        seen: list[Record] = []
        for e in entries:
            for r in self._by_entry.get(e, ()):
                if r not in seen:
                    seen.append(r)
        return tuple(sorted(seen, key=self.records.index))

    def check(self, bugs) -> list[str]:
        """What does not fit: records naming entries no bug holds, and fixes the
        replay verdicts contradict (the bug not judged fixed in the fix's release)."""
        holder = {e: b for b in bugs for e in b.entries}
        problems = []
        for n, r in enumerate(self.records):
            missing = [e for e in r.entries if e not in holder]
            if missing:
                problems.append(f"record {n} ({_label(r)}): no such entry {', '.join(missing)}")
            held = {holder[e].id: holder[e] for e in r.entries if e in holder}
            problems += [f"record {n} ({_label(r)}): {problem}" for problem in _unfixed(r, held.values())]
        return problems

    def split(self, bugs) -> list[tuple[Record, tuple[str, ...]]]:
        """The records whose entries triage put in more than one bug, with those bugs.

        A record is one root cause as a reader has it; triage prefers splitting what
        its evidence cannot tell apart (another switch that also removes a bug) to
        merging two causes, so one cause may be several bugs: the record says so,
        and every one of them shows its links."""
        holder = {e: b.id for b in bugs for e in b.entries}
        out = []
        for r in self.records:
            owners = tuple(sorted({holder[e] for e in r.entries if e in holder}))
            if len(owners) > 1:
                out.append((r, owners))
        return out


def _label(r: Record) -> str:
    return r.note or (r.links[0].ref if r.links else "no links")


def _unfixed(record: Record, bugs) -> list[str]:
    """Each bug a ``fixes`` link of ``record`` speaks for that its repros did not find
    fixed in the link's release."""
    out = []
    for link in record.links:
        if link.relation != "fixes":
            continue
        for b in bugs:
            verdict = dict(releases.by_release(b.versions)).get(link.release, "not run")
            if verdict != releases.FIXED:
                out.append(f"{link.ref} fixes {b.id} in {link.release}, where it {verdict.replace('not run', 'was not run')}")
    return out


@dataclass(frozen=True)
class Reading:
    """What was read by hand of a bug's cause, from its records: the causes as read
    (one per record that has one) and the shortest hand script among them."""

    causes: tuple[str, ...] = ()
    #: "" where no record has a hand script
    script: str = ""

    @classmethod
    def of(cls, records: Iterable[Record]) -> Reading:
        records = tuple(records)
        scripts = sorted((r.script for r in records if r.script), key=lambda text: len(text.splitlines()))
        return cls(tuple(dict.fromkeys(r.cause for r in records if r.cause)), scripts[0] if scripts else "")


def summary(records: tuple[Record, ...]) -> dict:
    """A bug's ``upstream`` key: its links, its notes, whether it is new, and what was
    read of its cause (``causes``, ``script``)."""
    reading = Reading.of(records)
    if not records:
        return {"known": None, "links": [], "note": "", "causes": [], "script": ""}
    links = [link for r in records for link in r.links]
    return {"known": any(r.known for r in records), "links": [link.to_json() for link in links],
            "note": "; ".join(r.note for r in records if r.note), "causes": list(reading.causes),
            "script": reading.script}


def line(records: tuple[Record, ...]) -> str:
    """One line: ``new (searched 2026-11-30)``, the links, or ``not looked up``."""
    if not records:
        return "not looked up"
    links = [link for r in records for link in r.links]
    searched = max(r.searched for r in records)
    if not any(r.known for r in records):
        near = "; ".join(link.line() for link in links)
        return f"new: nothing public about its cause (searched {searched})" + (f"; {near}" if near else "")
    return "; ".join(link.line() for link in links)


def parse(data) -> Upstream:
    if not isinstance(data, dict) or not isinstance(data.get("bugs"), list):
        raise UpstreamError('expected {"bugs": [records]}')
    records = []
    for n, raw in enumerate(data["bugs"]):
        where = f"record {n}"
        if not isinstance(raw, dict) or not raw.get("entries"):
            raise UpstreamError(f"{where}: a record names its entries")
        links = [_link(link, where) for link in raw.get("links", [])]
        if not links and not raw.get("searched"):
            raise UpstreamError(f"{where}: no links and no date searched")
        cause, script = _reading(raw, where)
        records.append(Record(tuple(raw["entries"]), tuple(links), raw.get("note", ""), raw.get("searched", ""),
                              cause, script))
    return Upstream(tuple(records))


def _link(raw: dict, where: str) -> Link:
    """One link, refused where its state, relation and release do not agree."""
    kind, state, ref = raw.get("kind"), raw.get("state"), raw.get("ref")
    if kind not in STATES or state not in STATES[kind]:
        raise UpstreamError(f"{where}: {ref}: kind {kind!r} and state {state!r}; expected one of {STATES}")
    if not str(ref or "").count("#") == 1:
        raise UpstreamError(f"{where}: a link's ref is owner/repo#number, not {ref!r}")
    relation, release = raw.get("relation", "same"), raw.get("release", "")
    if relation not in RELATIONS:
        raise UpstreamError(f"{where}: {ref}: relation {relation!r}; expected one of {RELATIONS}")
    if (state == MERGED) != bool(release):
        raise UpstreamError(f"{where}: {ref}: a merged PR, and only one, names the release whose source "
                            f"holds its change (state {state!r}, release {release!r})")
    if release and (releases.release(release) is None or releases.release_name(release) != release):
        raise UpstreamError(f"{where}: {ref}: release {release!r} is not a release number like 2.14.1")
    if relation == "fixes" and state != MERGED:
        raise UpstreamError(f"{where}: {ref}: only a merged PR fixes a bug (state {state!r})")
    return Link(ref, kind, state, raw.get("note", ""), relation, release)


def _reading(raw: dict, where: str) -> tuple[str, str]:
    """A record's ``cause`` and ``script``: text, and the script a complete program
    (it compiles as a module: not a sketch of a program's body with a bare ``return``)."""
    cause, script = raw.get("cause", ""), raw.get("script", "")
    if not isinstance(cause, str) or not isinstance(script, str):
        raise UpstreamError(f"{where}: a cause and a script are text")
    if script:
        try:
            compile(script, f"<{where}'s script>", "exec")
        except SyntaxError as exc:
            raise UpstreamError(f"{where}: its script is not a complete program: {exc}") from exc
    return cause, script


def carry(folder: Path, old: str, new: str) -> bool:
    """A campaign put entry ``new`` in the place of ``old``, a larger example of its bug
    (``examples.Examples.save``): each record naming ``old`` names ``new`` there instead, so
    the bug keeps what is known of it upstream (a record left naming only removed entries
    would make a public bug look unsearched).  The file is rewritten whole, every other
    field as it was; returns whether any record named ``old``."""
    path = Path(folder) / FILE
    if not path.is_file():
        return False
    data = read_json(path, UpstreamError)
    named = [raw for raw in data.get("bugs", []) if isinstance(raw, dict) and old in raw.get("entries", [])]
    for raw in named:
        kept = [e for e in raw["entries"] if e != new]
        raw["entries"] = [new if e == old else e for e in kept]
    if named:
        atomic_write(path, json.dumps(data, indent=1, ensure_ascii=False) + "\n")
    return bool(named)


def load(folder: Path) -> Upstream:
    """The corpus folder's upstream file; none there, no records."""
    path = Path(folder) / FILE
    if not path.is_file():
        return Upstream()
    try:
        return parse(json.loads(path.read_text()))
    except json.JSONDecodeError as exc:
        raise UpstreamError(f"{path}: {exc}") from exc
    except UpstreamError as exc:
        raise UpstreamError(f"{path}: {exc}") from exc
