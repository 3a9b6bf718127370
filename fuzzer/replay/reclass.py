"""Judge saved entries again under this dcefuzz's bug classes, and rename them.

A bug class is what every replay, shrink and repro script must see again, and an
entry's id hashes it with the program.  When the contract learns to class a bug
better (an error by where torch raised it, not by its words), the entries saved
before still say the old class, and a replay reads them as "another bug of this
kind".  ``dcefuzz reclass`` runs each entry's program again from a fresh compile,
twice, as a replay does; where it shows the entry's kind with the entry's bug (the
*legacy* class of what it shows now, an error's first message line normalised or a
missed-dce without its cause, is the entry's class, or the class is already
today's), the entry is saved again
under the class it has now: a new signature, a new id and a new repro script, with
everything else kept (hits, first found, shrink record, versions, culprit); an
entry whose class is unchanged gets its script written afresh where it differs,
since every script carries the contract's code.  An entry saved before entries
recorded where their bugs show (``Entry.spots``) gets them from this judgement, so
its triage's probes look for its bug there (``fuzzer.triage.probe``).  The
culprit was judged against the old class: ``dcefuzz triage --again`` localises anew.

A crash saved as a SIGABRT or SIGSEGV before a heap corruption was one death by
either signal is run again in a fresh process; where it dies by glibc's heap words,
it is saved again as ``heap corruption`` (``fuzzer.judge.death``).

The corpus folder's ``upstream.json`` names bugs by their member entries; the
renamed ids are put in it, so what is known upstream survives the renaming.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path

from fuzzer.corpus import upstream
from fuzzer.corpus.entry import SCRIPT_SUFFIX, BadEntry, Entry, entry_id
from fuzzer.corpus.store import load, update
from fuzzer.files import atomic_write
from fuzzer.isolation.deaths import probe
from fuzzer.isolation.process import death_of
from fuzzer.judge import contract, kinds
from fuzzer.judge.death import HEAP_CORRUPTION, HEAP_SIGNALS
from fuzzer.judge.execute import device_unavailable, intra_op_threads
from fuzzer.judge.legacy import legacy_class, renamed, unnamed_raiser
from fuzzer.judge.spots import spots_of
from fuzzer.limits import VERSIONS
from fuzzer.reduce import signature
from fuzzer.reduce.casualty import divergence_of
from fuzzer.replay.reshrink import put_in_place
from fuzzer.triage.family import family

RENAMED = "RENAMED"
UNCHANGED = "UNCHANGED"
#: the entry could not be judged again, or showed another bug: left as it is
LEFT = "LEFT"


@dataclass(frozen=True)
class Reclassed:
    path: str
    old_id: str
    new_id: str
    outcome: str
    detail: str

    def line(self) -> str:
        moved = f" -> {self.new_id}" if self.new_id != self.old_id else ""
        return f"{self.outcome:9s} {self.old_id}{moved}: {self.detail}"


def _same_bug(entry: Entry, divs: list[contract.Divergence]) -> bool:
    now = contract.bug_class(entry.kind, divs)
    return (now in (entry.bug_class, renamed(entry.bug_class))
            or family(legacy_class(entry.kind, divs)) == family(entry.bug_class)
            or unnamed_raiser(entry.kind, divs) == entry.bug_class)


def _rescripted(entry: Entry, path: Path) -> str:
    """Write the entry's repro script afresh where it differs from today's (a script
    carries the contract's code, which a new classing changed)."""
    script = Path(path).with_suffix(SCRIPT_SUFFIX)
    if script.is_file() and script.read_text() == kinds.script(entry):
        return ""
    update(path, entry)
    return " (script rewritten)"


def reclass_entry(path: Path, device: str | None = None) -> Reclassed:
    """Judge the entry at ``path`` again and, where its class is now another, save it
    under that class (the old files go once the new ones are written)."""
    try:
        entry = load(path)
    except BadEntry as exc:
        return Reclassed(str(path), Path(path).stem, Path(path).stem, LEFT, str(exc))

    def result(outcome: str, detail: str, new_id: str | None = None, where: str | None = None) -> Reclassed:
        return Reclassed(where or str(path), entry.id, new_id or entry.id, outcome, detail)

    dev = device or entry.device
    reason = device_unavailable(dev)
    if entry.kind in contract.PROCESS_KINDS:
        recorded, _ = death_of(entry.detail[0] if entry.detail else "")
        if recorded not in HEAP_SIGNALS:
            return result(UNCHANGED, "a death is classed by how the process died, as before"
                          + _rescripted(entry, path))
        if reason is not None:
            return result(LEFT, f"cannot run on {dev}: {reason}")
        return _reclass_death(entry, path, dev, result)
    if reason is not None:
        return result(LEFT, f"cannot run on {dev}: {reason}")
    fresh = kinds.oracle(entry, dev, entry.backend)
    shown = []
    for _ in range(2):  # as a replay: the bug must recur after a fresh compile
        with intra_op_threads(entry.threads):
            verdict = fresh(entry.case)
        divs = verdict.of_kind(entry.kind) if verdict.status == contract.OK else []
        if not divs or not _same_bug(entry, divs):
            if divs:
                seen = contract.bug_class(entry.kind, divs)
            else:
                seen = "no divergence of this kind" if verdict.status == contract.OK else verdict.status
            return result(LEFT, f"does not show its bug again here ({seen})")
        shown.append(divs)
    divs = shown[0]
    if {contract.bug_class(entry.kind, d) for d in shown} != {contract.bug_class(entry.kind, divs)}:
        return result(LEFT, "its class differs from one compile to the next")
    now = contract.bug_class(entry.kind, divs)
    if entry.spots is None:  # saved before spots: where its bug shows, for its triage's probes
        entry = dataclasses.replace(entry, spots=spots_of(entry.case, divs))
        update(path, entry)
    if now == entry.bug_class:
        return result(UNCHANGED, now.text + _rescripted(entry, path))
    sig = signature.of(entry.kind, entry.case, list(divs))
    notes = [line for line in entry.detail if not line.startswith("[")]
    new = dataclasses.replace(entry, id=entry_id(entry.kind, sig, entry.target), signature=sig,
                              detail=[d.line() for d in divs] + notes)
    where = put_in_place(entry, path, new)
    return result(RENAMED, now.text, new.id, str(where))


def _reclass_death(entry: Entry, path: Path, device: str, result) -> Reclassed:
    """A crash saved as a SIGABRT or SIGSEGV from before a heap corruption was one death
    by either signal (``fuzzer.judge.death``): die again in a fresh process, up to
    ``VERSIONS.flaky_tries`` times (a corrupted heap does not always speak); a death by
    glibc's heap words renames the entry under ``heap corruption``, its recorded signal
    without them leaves it as it is."""
    deaths = []
    for _ in range(VERSIONS.flaky_tries):
        death = probe(entry.case, device, entry.backend)
        deaths.append(death)
        if death.kind == entry.kind and death.after_eager and death_of(death.detail)[0] == HEAP_CORRUPTION:
            div = death.divergence()
            sig = signature.of(entry.kind, entry.case, [div])
            notes = [line for line in entry.detail if not line.startswith("[")]
            new = dataclasses.replace(entry, id=entry_id(entry.kind, sig, entry.target), signature=sig,
                                      detail=[div.line()] + notes)
            where = put_in_place(entry, path, new)
            return result(RENAMED, contract.bug_class(entry.kind, [div]).text, new.id, str(where))
    if any(d.kind == entry.kind and d.after_eager and d.detail == divergence_of(entry).detail for d in deaths):
        return result(UNCHANGED, contract.bug_class(entry.kind, [divergence_of(entry)]).text
                      + _rescripted(entry, path))
    return result(LEFT, "does not die its death again here (" + "; ".join(d.line() for d in deaths) + ")")


def rename_upstream(folder: Path, renamed: dict[str, str]) -> int:
    """Put the renamed entry ids into ``folder``'s upstream file; how many it held."""
    path = Path(folder) / upstream.FILE
    if not renamed or not path.is_file():
        return 0
    data = json.loads(path.read_text())
    changed = 0
    for record in data.get("bugs", []):
        old = record.get("entries", [])
        changed += sum(e in renamed for e in old)
        record["entries"] = [renamed.get(e, e) for e in old]
    if changed:
        upstream.parse(data)  # still a valid file
        atomic_write(path, json.dumps(data, indent=1) + "\n")
    return changed
