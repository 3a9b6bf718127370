"""The corpus: one JSON entry plus one standalone repro script per distinct bug.

An entry's id is derived from its signature (``<kind>-<hash>``), so the same bug
found again, by this process or by another writing to the same folder, maps to
the same file names: the entry's hit count goes up, no second entry appears.
Both files are written atomically (temporary file in the same folder, then
``os.replace``), so a crash never leaves a half-written entry behind.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

import torch

from fuzzer import __version__, codegen, repro
from fuzzer.files import atomic_write, read_json
from fuzzer.program import Case, InvalidProgram, dead_pure_sites

SCHEMA = 1
ENTRY_SUFFIX = ".json"
SCRIPT_SUFFIX = ".py"

REQUIRED_FIELDS = ("schema", "id", "kind", "signature", "seed", "device", "backend",
                   "torch_version", "source", "program", "bindings", "statements", "detail")


class BadEntry(ValueError):
    """A corpus file that cannot be read back as an entry."""


def entry_id(kind: str, signature: str) -> str:
    return f"{kind}-{hashlib.sha256(signature.encode()).hexdigest()[:12]}"


@dataclass
class Entry:
    """A saved finding, as stored in ``<id>.json``."""

    id: str
    kind: str
    signature: str
    seed: int | None
    device: str
    backend: str
    torch_version: str
    case: Case
    detail: list[str]
    hits: int = 1
    fault: str | None = None
    found: str = ""
    dcefuzz_version: str = __version__
    #: {original_statements, statements, oracle_calls, seconds} when shrunk
    shrink: dict | None = None

    @property
    def statements(self) -> int:
        return len(self.case.program.body)

    def to_json(self) -> dict:
        return {
            "schema": SCHEMA,
            "id": self.id,
            "kind": self.kind,
            "signature": self.signature,
            "seed": self.seed,
            "device": self.device,
            "backend": self.backend,
            "torch_version": self.torch_version,
            "dcefuzz_version": self.dcefuzz_version,
            "fault": self.fault,
            "found": self.found,
            "hits": self.hits,
            "statements": self.statements,
            "shrink": self.shrink,
            "source": codegen.source(self.case.program),
            "program": self.case.program.to_json(),
            "bindings": [dict(b) for b in self.case.bindings],
            "input_seed": self.case.input_seed,
            "dead_pure_sites": sorted(dead_pure_sites(self.case.program)),
            "detail": list(self.detail),
        }

    @classmethod
    def from_json(cls, data: dict) -> Entry:
        missing = [f for f in REQUIRED_FIELDS if f not in data]
        if missing:
            raise BadEntry(f"missing fields {missing}")
        if data["schema"] != SCHEMA:
            raise BadEntry(f"schema {data['schema']!r}, this dcefuzz reads schema {SCHEMA}")
        try:
            case = Case.from_json({"program": data["program"], "bindings": data["bindings"],
                                   "input_seed": data.get("input_seed", 0)})
            case.validate()
        except InvalidProgram as exc:
            raise BadEntry(f"invalid program: {exc}") from exc
        return cls(
            id=data["id"], kind=data["kind"], signature=data["signature"], seed=data["seed"],
            device=data["device"], backend=data["backend"], torch_version=data["torch_version"],
            case=case, detail=list(data["detail"]), hits=int(data.get("hits", 1)),
            fault=data.get("fault"), found=data.get("found", ""),
            dcefuzz_version=data.get("dcefuzz_version", ""),
            shrink=data.get("shrink"),
        )

    def script(self) -> str:
        return repro.render(self)


def load(path: str | os.PathLike) -> Entry:
    """Read one entry (the ``.json`` file, or its stem / ``.py`` sibling)."""
    p = Path(path)
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
            hits = old.hits + entry.hits
            if entry.statements < old.statements:
                entry.hits, entry.found = hits, old.found
            else:
                old.hits = hits
                atomic_write(path, json.dumps(old.to_json(), indent=2) + "\n")
                return path, False
    if not entry.found:
        entry.found = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    atomic_write(path.with_suffix(SCRIPT_SUFFIX), entry.script())
    atomic_write(path, json.dumps(entry.to_json(), indent=2) + "\n")
    return path, new


def remove(path: str | os.PathLike) -> None:
    """Delete an entry: the JSON first (``save`` writes it last), so an entry is
    never left without its script; a crash in between leaves only a stray script."""
    p = Path(path).with_suffix(ENTRY_SUFFIX)
    for f in (p, p.with_suffix(SCRIPT_SUFFIX)):
        try:
            f.unlink()
        except FileNotFoundError:
            pass


def entries_in(paths) -> tuple[list[Path], list[str]]:
    """Expand files and folders into entry JSON paths; name what isn't one."""
    found, bad = [], []
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            found += sorted(q for q in p.glob(f"*{ENTRY_SUFFIX}") if not q.name.startswith("."))
        elif p.suffix in (ENTRY_SUFFIX, SCRIPT_SUFFIX) and p.with_suffix(ENTRY_SUFFIX).exists():
            found.append(p.with_suffix(ENTRY_SUFFIX))
        else:
            bad.append(f"{p}: not a corpus entry or folder")
    return found, bad


def torch_version() -> str:
    return torch.__version__
