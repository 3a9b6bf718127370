"""The corpus folder: one JSON entry plus one standalone repro script per distinct bug.

An entry's id is derived from its signature (``<kind>-<hash>``), so the same bug
found again, by this process or by another writing to the same folder, maps to
the same file names: the entry's hit count goes up, no second entry appears.
Both files are written atomically (temporary file in the same folder, then
``os.replace``), so a crash never leaves a half-written entry behind.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
from pathlib import Path

from fuzzer.corpus import upstream
from fuzzer.corpus.entry import ENTRY_SUFFIX, SCRIPT_SUFFIX, BadEntry, Entry
from fuzzer.files import atomic_write, read_json
from fuzzer.judge import kinds


def load(path: str | os.PathLike) -> Entry:
    """Read one entry (the ``.json`` file, or its stem / ``.py`` sibling)."""
    p = Path(path)
    if p.is_dir():  # a folder's name would become "<folder>.json", which names nothing
        raise BadEntry(f"{p}: a folder, not an entry: name one entry's {ENTRY_SUFFIX} file in it")
    if p.suffix != ENTRY_SUFFIX:
        p = p.with_suffix(ENTRY_SUFFIX)
    data = read_json(p, BadEntry, "no such entry")
    if not isinstance(data, dict):
        raise BadEntry(f"{p}: not a JSON object")
    try:
        return Entry.from_json(data)
    except BadEntry as exc:
        raise BadEntry(f"{p}: {exc}") from None
    except (KeyError, TypeError, ValueError) as exc:
        raise BadEntry(f"{p}: {exc!r}") from exc


def save(entry: Entry, folder: str | os.PathLike) -> tuple[Path, bool]:
    """Write the entry and its script; if one with this id exists, count a hit instead.

    A repeat hit keeps whichever example is smaller.  Returns the JSON path and
    whether a new entry was created.
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{entry.id}{ENTRY_SUFFIX}"
    new = True
    if path.exists():
        try:
            old = load(path)
        except BadEntry:
            old = None
        if old is not None:
            new = False
            when = now()
            # the incoming copy's own hit times (a merged shard's) are kept; its other hits are now
            timed = entry.hit_times[-entry.hits:] if entry.hits else []
            untimed = max(0, entry.hits - len(timed))
            if entry.statements < old.statements:
                entry.hits, entry.found, entry.hit_times = old.hits + len(timed), old.found, []
                entry.hit(when, untimed, old.hit_times + timed)
                entry.known_bug = entry.known_bug or old.known_bug
            else:
                old.hits += len(timed)
                old.hit(when, untimed, timed)
                atomic_write(path, json.dumps(old.to_json(), indent=2) + "\n")
                return path, False
    if not entry.found:
        entry.found = now()
    if not entry.hit_times:
        entry.hit_times = [entry.found] * min(entry.hits, 1)
    update(path, entry)
    return path, new


def update(path: str | os.PathLike, entry: Entry) -> None:
    """Write ``entry`` over the entry at ``path`` (script first, then the JSON)."""
    path = Path(path).with_suffix(ENTRY_SUFFIX)
    atomic_write(path.with_suffix(SCRIPT_SUFFIX), kinds.script(entry))
    atomic_write(path, json.dumps(entry.to_json(), indent=2) + "\n")


def now() -> str:
    """The current UTC time, as entries record it."""
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def move(path: str | os.PathLike, folder: str | os.PathLike) -> Path:
    """Move an entry (its JSON and script) into ``folder``, made if need be; the JSON
    goes last, as ``save`` writes it.  Returns the JSON's new path."""
    p = Path(path).with_suffix(ENTRY_SUFFIX)
    Path(folder).mkdir(parents=True, exist_ok=True)
    for f in (p.with_suffix(SCRIPT_SUFFIX), p):
        if f.exists():
            os.replace(f, Path(folder) / f.name)
    return Path(folder) / p.name


def remove(path: str | os.PathLike) -> None:
    """Delete an entry: the JSON first (``save`` writes it last), so an entry is
    never left without its script; a crash in between leaves only a stray script."""
    p = Path(path).with_suffix(ENTRY_SUFFIX)
    for f in (p, p.with_suffix(SCRIPT_SUFFIX)):
        try:
            f.unlink()
        except FileNotFoundError:
            pass


#: files a corpus folder holds beside its entries
NOT_ENTRIES = frozenset({upstream.FILE})


def entries_in(paths) -> tuple[list[Path], list[str]]:
    """Expand files and folders into entry JSON paths; name what isn't one."""
    found, bad = [], []
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            found += sorted(q for q in p.glob(f"*{ENTRY_SUFFIX}")
                            if not q.name.startswith(".") and q.name not in NOT_ENTRIES)
        elif p.suffix in (ENTRY_SUFFIX, SCRIPT_SUFFIX) and p.with_suffix(ENTRY_SUFFIX).exists():
            found.append(p.with_suffix(ENTRY_SUFFIX))
        else:
            bad.append(f"{p}: not a corpus entry or folder")
    return found, bad


def load_all(paths) -> tuple[list[Entry], list[str]]:
    """Every readable entry of ``paths`` (files or folders), and a line for each that is not."""
    found, bad = entries_in(paths)
    entries = []
    for p in found:
        try:
            entries.append(load(p))
        except BadEntry as exc:
            bad.append(str(exc))
    return entries, bad
