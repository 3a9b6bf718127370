"""A corpus entry: the record of one saved finding, and the one place that builds it.

Every entry, whatever found it (a campaign's trial, a casualty of the worker pool,
a shrink of either, a re-shrink of a saved entry), is made by :meth:`Entry.build`
from a kind, a case, the divergences that show the bug and where, how and when it was
found (:class:`Origin`), so its signature, id and detail lines are always derived the
same way.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Sequence
from dataclasses import astuple, dataclass, field

import torch

from fuzzer import __version__, hashseed
from fuzzer.corpus.releases import Versions
from fuzzer.judge import targets
from fuzzer.judge.contract import BugClass, Divergence
from fuzzer.judge.spots import Spot, spots_of
from fuzzer.judge.trial import VariantRecord
from fuzzer.limits import CORPUS
from fuzzer.program import codegen
from fuzzer.program.ir import Case, InvalidProgram
from fuzzer.program.liveness import dead_pure_sites
from fuzzer.reduce import signature
from fuzzer.reduce.signature import Signature
from fuzzer.reduce.shrinker import ShrinkRecord
from fuzzer.triage.culprit import Culprit

SCHEMA = 1
ENTRY_SUFFIX = ".json"
SCRIPT_SUFFIX = ".py"

REQUIRED_FIELDS = ("schema", "id", "kind", "signature", "seed", "device", "backend",
                   "torch_version", "source", "program", "bindings", "statements", "detail")


class BadEntry(ValueError):
    """A corpus file that cannot be read back as an entry."""


def entry_id(kind: str, signature: Signature, target: str = targets.DEFAULT) -> str:
    """The id of an entry: its kind and a hash of its signature's text (and of its target,
    where it is not the default, so one program's finding through two targets is two
    entries)."""
    named = signature.text if target == targets.DEFAULT else f"{target}: {signature.text}"
    return f"{kind}-{hashlib.sha256(named.encode()).hexdigest()[:12]}"


@dataclass(frozen=True)
class Origin:
    """Where, how and when a finding was made, as its entry keeps it."""

    #: the program's seed (None: a program not drawn from one)
    seed: int | None
    device: str
    backend: str
    #: the fault planted (``fuzzer.faults``), if any
    fault: str | None = None
    #: the pipeline it was found through (``fuzzer.judge.targets``)
    target: str = targets.DEFAULT
    #: a stale-cache finding's declaration variant
    variant: VariantRecord | None = None
    #: torch's intra-op threads of the process that found it (None: this process's)
    threads: int | None = None
    #: the torch it was found with (None: this one)
    torch_version: str | None = None
    #: how many times it was hit, and when first (ISO time; "": not said)
    hits: int = 1
    found: str = ""


@dataclass
class Entry:
    """A saved finding, as stored in ``<id>.json``."""

    id: str
    kind: str
    #: its bug class and its program's normal form (``fuzzer.reduce.signature``), read
    #: from its JSON's text once
    signature: Signature
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
    #: what its shrink did, when shrunk
    shrink: ShrinkRecord | None = None
    #: where in the compiler the bug lives (None: not triaged)
    culprit: Culprit | None = None
    #: torch version -> "reproduces", "fixed" or "error", from replays of the repro
    #: script under other interpreters (``dcefuzz replay --python``)
    versions: Versions = field(default_factory=dict)
    #: when a campaign last hit this entry's bug with this entry (ISO time; "" = never
    #: since it was found)
    last_seen: str = ""
    #: a stale-cache finding's declaration variant (``fuzzer.cache.variants``, as JSON):
    #: what the old and the new side of its cache pair registered
    variant: VariantRecord | None = None
    #: why this entry is a known bug (``dcefuzz known``): the pytest plugin then
    #: expects it to reproduce (xfail) rather than fail the run; None: not marked
    known_bug: str | None = None
    #: torch's intra-op threads in the process that found it (``torch.get_num_threads``;
    #: a campaign's workers run one each): some bugs show only with that many, so a
    #: replay and the repro script run with it (None: not recorded, torch's default)
    threads: int | None = None
    #: the hash seed of the process that found it (``fuzzer.hashseed``; None: at random)
    hash_seed: str | None = None
    #: when each hit happened (ISO times, the newest ``CORPUS.hit_times_kept``): a bug's hits
    #: over time; entries saved before hits were timed have none
    hit_times: list = field(default_factory=list)
    #: the pipeline it was found through (``fuzzer.judge.targets``; absent from its JSON:
    #: ``compile``, as every entry saved before targets existed)
    target: str = targets.DEFAULT
    #: where its divergences show in its program (``fuzzer.judge.spots``): each probe of its
    #: triage looks for its bug there (None: not recorded, as in entries saved before spots
    #: existed; a probe then reads the class alone)
    spots: frozenset | None = None

    def hit(self, when: str, count: int = 1, times: Sequence[str] = ()) -> None:
        """Count ``count`` hits more, at ``when``; ``times``: another copy's hit times, kept too."""
        self.hits += count
        self.last_seen = when
        self.hit_times = sorted([*self.hit_times, *times, *[when] * count])[-CORPUS.hit_times_kept:]

    @property
    def statements(self) -> int:
        return len(self.case.program.body)

    def to_json(self) -> dict:
        return {
            "schema": SCHEMA,
            "id": self.id,
            "kind": self.kind,
            "signature": self.signature.text,
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
            "culprit": self.culprit.to_json() if self.culprit is not None else None,
            "versions": dict(self.versions),
            "last_seen": self.last_seen,
            **({"variant": self.variant} if self.variant is not None else {}),
            **({"known_bug": self.known_bug} if self.known_bug is not None else {}),
            **({"threads": self.threads} if self.threads is not None else {}),
            **({"hash_seed": self.hash_seed} if self.hash_seed is not None else {}),
            **({"hit_times": list(self.hit_times)} if self.hit_times else {}),
            **({"target": self.target} if self.target != targets.DEFAULT else {}),
            **({"spots": [[spot.what, spot.name] for spot in sorted(self.spots, key=astuple)]}
               if self.spots is not None else {}),
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
            id=data["id"], kind=data["kind"], signature=Signature.parse(str(data["signature"])), seed=data["seed"],
            device=data["device"], backend=data["backend"], torch_version=data["torch_version"],
            case=case, detail=list(data["detail"]), hits=int(data.get("hits", 1)),
            fault=data.get("fault"), found=data.get("found", ""),
            dcefuzz_version=data.get("dcefuzz_version", ""),
            shrink=data.get("shrink"),
            culprit=Culprit.from_json(data["culprit"]) if data.get("culprit") else None,
            versions=dict(data.get("versions") or {}), last_seen=data.get("last_seen", ""),
            variant=data.get("variant"), known_bug=data.get("known_bug"),
            threads=int(data["threads"]) if data.get("threads") is not None else None,
            hash_seed=str(data["hash_seed"]) if data.get("hash_seed") is not None else None,
            hit_times=[str(t) for t in data.get("hit_times") or []],
            target=str(data.get("target") or targets.DEFAULT),
            spots=frozenset(Spot(str(what), str(name)) for what, name in data["spots"]) if "spots" in data else None,
        )

    @classmethod
    def build(cls, kind: str, case: Case, divergences: Sequence[Divergence], origin: Origin, *,
              shrink: ShrinkRecord | None = None, notes: Sequence[str] = (), culprit: Culprit | None = None) -> Entry:
        """The entry for ``divergences`` of ``kind`` on ``case``, found as ``origin`` says
        (its target in its id unless it is the default).

        ``notes`` are detail lines kept after the divergences (where a process died).
        A program shrunk past its last call of a user's op no longer imports its module.
        """
        if case.program.imports and not case.program.user_ops():
            case = dataclasses.replace(case, program=dataclasses.replace(case.program, imports=()))
        sig = signature.of(kind, case, list(divergences))
        return cls(id=entry_id(kind, sig, origin.target), kind=kind, signature=sig, seed=origin.seed,
                   device=origin.device, backend=origin.backend,
                   torch_version=origin.torch_version or torch.__version__, case=case,
                   threads=torch.get_num_threads() if origin.threads is None else origin.threads,
                   hash_seed=hashseed.AT_START,
                   detail=[d.line() for d in divergences] + list(notes), hits=origin.hits, fault=origin.fault,
                   found=origin.found, shrink=shrink, culprit=culprit, variant=origin.variant, target=origin.target,
                   spots=spots_of(case, divergences))

    @property
    def origin(self) -> Origin:
        """Where, how and when its finding was made, as :meth:`build` takes it."""
        return Origin(seed=self.seed, device=self.device, backend=self.backend, fault=self.fault,
                      target=self.target, variant=self.variant, threads=self.threads,
                      torch_version=self.torch_version, hits=self.hits, found=self.found)

    def reduced(self, case: Case, divergences: Sequence[Divergence], shrink: ShrinkRecord,
                notes: Sequence[str] = ()) -> Entry:
        """This entry's bug on a smaller ``case`` that shows it again: the same kind, seed,
        device, backend, fault, hits, first-found time, torch and cache-pair variant, and
        the shrink's record."""
        return Entry.build(self.kind, case, divergences, self.origin, shrink=shrink, notes=notes)

    @property
    def seen(self) -> str:
        """When this entry's bug was last hit (its finding time if never since)."""
        return self.last_seen or self.found

    @property
    def bug_class(self) -> BugClass:
        """The class part of the signature: what a replay must see again."""
        return self.signature.bug_class
