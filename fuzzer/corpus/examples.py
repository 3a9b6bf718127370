"""A campaign's corpus, kept to a few example entries per bug.

One root cause has many 1-minimal programs; a long campaign would save each of
them (hundreds of entries for a handful of bugs).  ``Examples`` indexes the
corpus folder by bug (``fuzzer.corpus.bugs.key_of``) and keeps at most ``cap``
entries per bug, the smallest: a finding of a bug that already has ``cap``
examples either takes the place of the largest (when it is smaller; the hits and
the first-found time of the one it replaces carry over, and so does its name in
the folder's upstream records) or only counts, as a hit on the bug's smallest entry.  Nothing is lost but the program text of a larger
repeat.

A bug whose key cannot tell causes apart (``bugs.separates``: a crash with no frame
of torch, a stage and nothing inside it) is never full: a finding under its key may
be another cause, so it is saved, never only counted.

The index is read once, at the start of a campaign; the campaign's parent process
is the corpus's only writer (workers never write it).  Campaigns sharing one
folder at once (shards on one disk) each keep their own cap, so such a folder may
hold up to ``cap`` examples per bug per campaign.
"""

from __future__ import annotations

import dataclasses
import enum
import os
from dataclasses import dataclass
from pathlib import Path

from fuzzer.corpus import bugs, store, upstream
from fuzzer.corpus.entry import BadEntry, Entry
from fuzzer.triage.key import BugKey
from fuzzer.limits import TRIAGE


class Kept(str, enum.Enum):
    """What became of a finding."""

    #: a new entry (the bug had fewer than ``cap`` examples, or is new)
    NEW = "new"
    #: an entry with the same signature existed: it got the hit
    REPEAT = "repeat"
    #: a new entry that took the place of the bug's largest example
    REPLACED = "replaced"
    #: the bug has ``cap`` smaller examples: a hit on its smallest entry
    COUNTED = "counted"


@dataclass(frozen=True)
class Saved:
    kept: Kept
    #: the entry that now holds the hit
    path: Path
    bug: str
    #: the bug had no entry in this corpus before
    new_bug: bool
    #: the larger example a REPLACED entry took the place of (its files are gone)
    removed: Path | None = None


@dataclass
class _Example:
    id: str
    statements: int
    path: Path


class Examples:
    """The entries of one corpus folder, by bug, at most ``cap`` each."""

    def __init__(self, folder: str | os.PathLike, cap: int = TRIAGE.examples_per_bug):
        self.folder, self.cap = Path(folder), cap
        self.by_bug: dict[BugKey, list[_Example]] = {}
        #: the keys some entry of which says nothing that tells causes apart
        self.vague: set[BugKey] = set()
        found, _ = store.entries_in([str(self.folder)]) if self.folder.is_dir() else ([], [])
        for path in found:
            try:
                entry = store.load(path)
            except BadEntry:
                continue
            self._add(bugs.key_of(entry), entry, path)

    def _add(self, key: BugKey, entry: Entry, path: Path) -> None:
        if not bugs.separates(entry):
            self.vague.add(key)
        members = self.by_bug.setdefault(key, [])
        members[:] = [m for m in members if m.id != entry.id]
        members.append(_Example(entry.id, entry.statements, Path(path)))
        members.sort(key=lambda m: (m.statements, m.id))

    def forget(self, entry_id: str) -> None:
        """An entry was removed from the folder by someone else (a re-shrink)."""
        for members in self.by_bug.values():
            members[:] = [m for m in members if m.id != entry_id]
        self.by_bug = {k: ms for k, ms in self.by_bug.items() if ms}

    def note(self, entry: Entry, path: Path) -> None:
        """An entry was saved to the folder by someone else (a re-shrink)."""
        self._add(bugs.key_of(entry), entry, Path(path))

    def held(self) -> dict[BugKey, int]:
        """The bugs held, each with the statements of its largest example where it has
        its ``cap`` examples (a finding of it is only counted, or, smaller, takes that
        example's place), else 0 (a finding of it is kept as another example): either way
        classified cheaply, ``campaign.entries.counted_only``: the first example is the
        bug's repro, shrunk in full; the others show where else it appears, and a full
        shrink of each was most of a campaign's time on bugs it had found.  Never a key
        that cannot tell causes apart."""
        return {key: ms[-1].statements if len(ms) >= self.cap else 0
                for key, ms in self.by_bug.items() if key not in self.vague}

    @property
    def bugs(self) -> int:
        return len(self.by_bug)

    @property
    def entries(self) -> int:
        return sum(len(m) for m in self.by_bug.values())

    def save(self, entry: Entry) -> Saved:
        key = bugs.key_of(entry)
        bug = bugs.bug_id(key)
        members = self.by_bug.get(key, [])
        new_bug = not members
        held_by = next((k for k, ms in self.by_bug.items() if any(m.id == entry.id for m in ms)), None)
        if held_by is not None:
            # the same program again: its entry (and the bug it was filed under) gets the hit
            path, _ = store.save(entry, self.folder)
            return Saved(Kept.REPEAT, path, bugs.bug_id(held_by), False)
        if len(members) < self.cap or key in self.vague or not bugs.separates(entry):
            path, _ = store.save(entry, self.folder)
            self._add(key, entry, path)
            return Saved(Kept.NEW, path, bug, new_bug)
        largest = members[-1]
        if entry.statements < largest.statements:
            try:
                old = store.load(largest.path)
                entry = dataclasses.replace(entry, hits=entry.hits + old.hits,
                                            found=min(filter(None, (entry.found, old.found)), default=""),
                                            hit_times=sorted(old.hit_times + [store.now()] * entry.hits))
            except BadEntry:
                pass
            path, _ = store.save(entry, self.folder)
            store.remove(largest.path)
            upstream.carry(self.folder, largest.id, entry.id)
            members.remove(largest)
            self._add(key, entry, path)
            return Saved(Kept.REPLACED, path, bug, False, largest.path)
        smallest = members[0]
        try:
            held = store.load(smallest.path)
        except BadEntry:
            path, _ = store.save(entry, self.folder)
            self._add(key, entry, path)
            return Saved(Kept.NEW, path, bug, False)
        when = store.now()
        held.hit(when, entry.hits)
        store.update(smallest.path, held)
        return Saved(Kept.COUNTED, smallest.path, bug, False)
