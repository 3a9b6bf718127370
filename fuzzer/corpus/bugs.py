"""Bugs: corpus entries grouped by root cause.

One root cause has many 1-minimal programs, and shows as a different kind
depending on where its corrupted value goes (returned: ``wrong-output``; written
to an input: ``wrong-mutation``; seen by an effectful op: ``effect-log`` data).  So
entries group by their *family* (the bug class with those three merged) and their
culprit's *blame* (``fuzzer.triage.culprit``): the stage, and the switch or pass
inside it, and whether it needs dynamic shapes.  An entry whose bug could not be localised, or was never triaged,
groups with nothing: merging what nothing says is one cause would hide a bug.  A
crash or timeout (triaged from outside its process only) blames the innermost
frame of torch its process died in (``stacks.torch_frame``), never a frame of
dcefuzz's code, where a corrupted heap is often noticed; one whose stack holds no
frame of torch groups with nothing.

A crash or timeout's stage (``fuzzer.triage.casualty``: the first backend whose fresh
process dies so) is shown beside its key, not in it: a campaign's pool takes
casualties with one (kind, death, frame of torch) for one bug the moment a worker
dies, before any stage is known, so a stage in the key would split what the pool has
already merged; and where no frame of torch was recorded, a stage alone would merge
every heap corruption of a stage into one bug.

A bug's id is derived from its key, so the same bug has the same id in every
corpus and every run.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass

from fuzzer.corpus.releases import ERROR, FIXED, REPRODUCES, History, Versions, history  # noqa: F401 - read as bugs.X
from fuzzer.isolation import stacks
from fuzzer.judge import contract
from fuzzer.judge.contract import BugClass
from fuzzer.judge.raised import SITE_PREFIX
from fuzzer.limits import REPORT
from fuzzer.program import codegen
from fuzzer.triage import aliasing, causes, rules
from fuzzer.triage.culprit import Culprit
from fuzzer.triage.family import CORRUPTED, VALUE_KINDS, family
from fuzzer.triage.key import BugKey


def _frames(detail: list[str]) -> list[str]:
    """The stack a casualty's detail recorded, innermost first."""
    return [line.strip()[3:] for line in detail if line.strip().startswith("at ")]


def blame_of(entry) -> str | None:
    """What in the compiler the entry's bug is blamed on (None: nothing says; for a
    crash or timeout, no frame of torch was recorded, ``stacks.torch_frame``)."""
    if entry.kind in contract.PROCESS_KINDS:
        frame = stacks.torch_frame(_frames(entry.detail))
        return f"process:{frame}" if frame else None
    return entry.culprit.blame if entry.culprit is not None else None


def does(program) -> str:
    """What a program does, as far as telling causes apart goes: the forms its
    statements use (each once, sorted) and what of its mode a bug may need
    (gradients and ``torch.func.grad``'s, a dtype, strided or aliased inputs, a module,
    a dynamic mode, windows and at which calls, marks, inputs in another layout).

    An entry is shrunk 1-minimal, so every form in it is one its bug needs; an
    unshrunk one holds more, which can only split its bug from the shrunk one's."""
    forms = sorted({stmt.form for stmt in program.body})
    extra = mode_words(program.mode)
    return ", ".join(forms) + (f"; {', '.join(extra)}" if extra else "")


def mode_words(mode) -> list[str]:
    """What of a program's mode ``does`` writes after its forms: every part of it a bug
    may need (gradients, ``torch.func.grad``'s, a dtype, strided, aliased, laid out or
    windowed inputs, a module, objects it holds, a dynamic mode, marks), so a bug that needs one is never
    its plain twin's."""
    extra = [word for word, on in (("grad", mode.grad), ("func_grad", mode.func_grad),
                                   (f"dtype={mode.dtype}", mode.dtype != "float32"),
                                   ("strided", bool(mode.strided)), ("aliased", bool(mode.aliases)),
                                   ("module", bool(mode.module)), ("carry", mode.carry),
                                   ("object_attrs", mode.object_attrs),
                                   (f"dynamic={mode.dynamic}", mode.dynamic != "true"),
                                   ("windows", bool(mode.windows)), (f"windows={mode.window_calls}",
                                                                     bool(mode.window_calls))) if on]
    return extra + sorted({f"mark:{how}" for _, _, how in mode.marks}) + sorted(
        {f"layout:{how}" for _, how in mode.layouts})


#: the higher-order op of a region (``torch.compiler.nested_compile_region``)
REGION_HOP = "invoke_subgraph"


def buffers_told(program) -> str:
    """What a program tells the compiler about its buffers through what it cannot see
    into: custom calls that write an operand, return one (a tagged op's result) or run in
    a region (``nested_compile_region``: a graph of its own whose outputs may be its
    inputs, saved for a backward with donated buffers; ``cond``, ``while_loop``, ``map``
    and ``scan`` return fresh tensors only, by their documented rules), a backward, a
    module's buffers, inputs that share storage.  Each once, sorted; "" where it tells
    nothing.

    A wrong value that a moving switch hides (the scheduler's buffer reuse, its
    reordering) shows where a buffer was placed, and its cause is the wrong fact that
    let it be placed there: a fallback kernel told that a tagged op's out= result
    aliases nothing, and a region's backward buffer told it was donated, are two causes
    under one switch.  Read off a 1-minimal program, the facts are those its bug needs;
    ``does`` would also split one cause by the aten forms around it."""
    from fuzzer.program import forms

    told = set()
    for stmt in program.body:
        form = forms.form(stmt.form)
        if form.custom is None:
            continue
        told.update(word for word, on in (("writes", bool(form.mutates)),
                                          ("returns its operand", form.result_aliases),
                                          ("in a region", form.hop == REGION_HOP)) if on)
    mode = program.mode
    told.update(word for word, on in (("grad", mode.grad), ("module", bool(mode.module)),
                                      ("shared inputs", bool(mode.aliases or mode.windows))) if on)
    return ", ".join(sorted(told))


def _stage_only(blame: str | None) -> bool:
    """A blame that names a stage and nothing inside it (no switch, pass or frame)."""
    return blame is not None and ":" not in blame


#: the blame of a key that is one entry's alone (nothing localised it)
ENTRY_ALONE = "entry:"


def key_of(entry) -> BugKey:
    """The bug an entry belongs to: family and blame (and whether it needs dynamic
    shapes), or the entry alone.

    A wrong value whose blame names only its stage (``eager`` and ``aot_eager`` have no
    subsystem for the bisector, and no switch is probed before Inductor) adds what its
    program does (``does``): without it every wrong value at ``aot_eager`` was one bug,
    which held two causes under one id in turn.  A wrong value blamed on a switch that
    only moves the computation adds what the program tells the compiler of its buffers
    (``buffers_told``): two causes met under the buffer-reuse switch.  Neither where the
    culprit says the bug needs its inputs' aliasing to change between calls
    (``fuzzer.triage.aliasing``): that fact is its key alone (``Culprit.key``), whatever
    the program does and wherever it shows.  And where the probes showed its cause
    (``fuzzer.triage.causes``), the key is the cause alone, ``cause @ <name>``: one bug
    whatever its family, stage, switches or program."""
    if entry.kind in contract.PROCESS_KINDS or entry.culprit is None:
        blame = blame_of(entry)
    else:
        blame = entry.culprit.key
    if entry.culprit is not None and entry.culprit.cause and entry.kind not in contract.PROCESS_KINDS:
        return BugKey(causes.FAMILY, entry.culprit.cause)  # its cause, whatever it shows as
    if entry.culprit is not None and entry.culprit.aliasing_changes:
        return BugKey(family(entry.bug_class), blame)  # its cause, wherever it shows (``Culprit.key``)
    if entry.kind in VALUE_KINDS and entry.culprit is not None and _stage_only(entry.culprit.blame):
        done = does(entry.case.program)
        blame += f"{DOES_OPEN}{done}}}" if done else ""
    elif family(entry.bug_class).kind == CORRUPTED and entry.culprit is not None and entry.culprit.places:
        blame += f" {{buffers {buffers_told(entry.case.program) or 'none'}}}"
    return BugKey(family(entry.bug_class), blame if blame else ENTRY_ALONE + entry.id)


#: where ``key_of`` writes what a stage-only wrong value's program does into its blame
DOES_OPEN = " {does "


@dataclass(frozen=True)
class Does:
    """What a key's ``{does ...}`` says its 1-minimal program does: its forms, and the
    words of its mode (``mode_words``)."""

    forms: tuple[str, ...]
    mode: tuple[str, ...]

    @classmethod
    def of_key(cls, key: BugKey) -> Does | None:
        """The one way back from the words ``key_of`` writes into a key's blame; None for
        a key that says nothing of its program."""
        blame = key.blame
        start = blame.find(DOES_OPEN)
        if start < 0 or not blame.endswith("}"):
            return None
        forms, _, mode = blame[start + len(DOES_OPEN):-1].partition("; ")
        return cls(tuple(w for w in forms.split(", ") if w), tuple(w for w in mode.split(", ") if w))


def separates(entry) -> bool:
    """Whether the entry's key can tell one cause from another, so that a finding may be
    recognised as a known bug through it (``Examples``, ``--known-upstream``).

    It cannot where it says only a stage and nothing of what went wrong there: a
    crash or timeout with no frame of torch, a wrong value at a stage with no switch or
    pass, a program that does nothing and no need of a change in its inputs' aliasing
    between calls, an error raised where no frame of torch says (its class is its
    message), a missed-dce without why the call is kept.  Such a key
    may still group entries for a listing; a finding under it is never taken for a
    repeat."""
    if entry.kind in contract.PROCESS_KINDS:
        return blame_of(entry) is not None
    if entry.culprit is not None and entry.culprit.cause:
        return True  # the probes showed what in torch went wrong
    blame = entry.culprit.blame if entry.culprit is not None else None
    if not _stage_only(blame):
        return True  # inside a stage, or the entry alone
    if entry.kind in VALUE_KINDS:
        return bool(entry.culprit.aliasing_changes or does(entry.case.program))
    symptoms = entry.bug_class.symptoms
    if entry.kind in contract.ERROR_KINDS:
        return bool(symptoms) and symptoms[0].startswith(SITE_PREFIX)
    return bool(symptoms)


def bug_id(key: BugKey) -> str:
    return f"bug-{hashlib.sha256(key.text.encode()).hexdigest()[:10]}"


_WHAT = {
    CORRUPTED: "wrong values (returned, written to an input or seen by an effectful op)",
    contract.EFFECT_LOG: "effectful custom-op calls {}",
    contract.COMPILE_ERROR: "compile error: {}",
    contract.RUNTIME_ERROR: "compiled code raises: {}",
    contract.CRASH: "the compiling process dies: {}",
    contract.TIMEOUT: "the compiled program hangs: {}",
    contract.MISSED_DCE: "a dead pure custom-op call is kept",
    contract.WRONG_OUTPUT: "returned values differ ({})",
    contract.WRONG_MUTATION: "inputs written wrong ({})",
    contract.STALE_CACHE: "a warm compile cache serves code compiled before a change ({})",
}


def what(fam: BugClass) -> str:
    """What goes wrong in a bug of family ``fam``, in words."""
    return _WHAT.get(fam.kind, fam.kind + " {}").format(fam.shown()).strip()


_SIZE_LINE = re.compile(r"^s\d+ = x\d+\.shape\[\d+\]$")
_CALL = re.compile(r"([A-Za-z_][\w.]*)\(")
#: where a corrupted value lands, by the kind that saw it
LANDS = {contract.WRONG_OUTPUT: "returned", contract.WRONG_MUTATION: "written to an input",
         contract.EFFECT_LOG: "seen by an effectful op"}


def pattern(entry) -> str:
    """The statements of an entry's program as a title quotes them: its body without
    the size reads and an empty return, custom ops by their short names, joined by
    ``; ``; where that is too long, the calls it makes, in order."""
    body = [line.strip() for line in codegen.source(entry.case.program).splitlines()[1:]]
    body = [line for line in body if line and not _SIZE_LINE.match(line) and line != "return ()"]
    text = "; ".join(line.replace("torch.ops.dcefuzz.", "") for line in body)
    if len(text) <= REPORT.pattern_chars:
        return text
    forms = list(dict.fromkeys(stmt.form for stmt in entry.case.program.body))
    mode = entry.case.program.mode
    extra = [w for w, on in (("with gradients", mode.grad), ("strided inputs", mode.strided),
                             ("aliased inputs", mode.aliases), ("a module's buffers", mode.module),
                             (mode.dtype, mode.dtype != "float32"), ("windows of one input", mode.windows)) if on]
    return ("calls " + ", ".join(forms) + (f" ({', '.join(extra)})" if extra else "")) if forms else ""


def what_in(fam: BugClass, kinds: Iterable[str]) -> str:
    """What goes wrong, where the corrupted values land when the family merges them."""
    if fam.kind == CORRUPTED:
        lands = [LANDS[k] for k in kinds if k in LANDS]
        return "wrong values " + " or ".join(lands) if lands else what(fam)
    return what(fam)


def title(fam: BugClass, culprit: Culprit | None, blame: str | None, shown: str = "",
          kinds: Iterable[str] = ()) -> str:
    """A one-line human title: the program's statements (``shown``: ``pattern``), what
    goes wrong, and where: the stage and the switch that removes it or the pass it
    needs."""
    what_goes_wrong = what_in(fam, kinds)
    if culprit is not None and culprit.cause in causes.BY_NAME:
        # one cause whatever it shows as: what went wrong in torch, then how it showed here
        what_goes_wrong = f"{causes.BY_NAME[culprit.cause].words} (here: {what_goes_wrong})"
    if shown and blame is not None and not blame.startswith(("process:", "cache:")):
        quoted = shown if shown.startswith("calls ") else f"`{shown}`"
        what_goes_wrong = f"{quoted}: {what_goes_wrong}"
    if blame is None and culprit is not None and culprit.stage is not None:
        return f"{what_goes_wrong} in {culprit.stage}"  # a crash with no frame of torch, placed by its stage
    if blame is None:
        return f"{what_goes_wrong} (not localised)"
    stage, _, inner = blame.partition(":")
    if stage == "process":
        return f"{what_goes_wrong}, in {inner}"
    if stage == "cache":
        return f"{what_goes_wrong}, from the {inner.replace('_', ' ')}"
    where = f"in {stage}"
    shapes = ", dynamic shapes only" if culprit is not None and culprit.dynamic_only else ""
    if culprit is not None and culprit.aliasing_changes:
        shapes += f", {aliasing.WORDS}"
    if culprit is not None and culprit.cause in causes.BY_NAME:
        return f"{what_goes_wrong}, first shown in {stage}{shapes}"
    if culprit is not None and inner and culprit.switches.get(inner) == "gone":
        return f"{what_goes_wrong} {where}, gone with {rules.words(inner)} off{shapes}"
    return f"{what_goes_wrong} {where}" + (f", needs {inner}" if inner else "") + shapes


@dataclass(frozen=True)
class Bug:
    """Entries of one root cause, smallest first."""

    id: str
    key: BugKey
    title: str
    family: BugClass
    blame: str | None
    culprit: Culprit | None
    kinds: tuple[str, ...]
    entries: tuple[str, ...]
    hits: int
    first_seen: str
    last_seen: str
    versions: Versions
    #: the targets its entries were found through (``fuzzer.judge.targets``): one bug
    #: whatever pipeline showed it, where its key says so
    targets: tuple[str, ...] = ()

    @property
    def smallest(self) -> str:
        return self.entries[0]

    @property
    def history(self) -> History:
        """Where it came in and went out, over the releases its repros ran under."""
        return history(self.versions)

    def to_json(self) -> dict:
        culprit = {"stage": None}
        if self.culprit is not None:
            full = self.culprit.to_json()
            culprit = {k: full[k] for k in ("stage", "blame", "dynamic_only", "aliasing_changes", "subsystem",
                                            "pass", "switches")
                       if k in full}
        elif self.blame is not None:
            culprit = {"stage": None, "blame": self.blame}
        return {"id": self.id, "title": self.title, "family": self.family.text, "kinds": list(self.kinds),
                "targets": list(self.targets), "entries": list(self.entries), "hits": self.hits, "smallest": self.smallest,
                "culprit": culprit, "first_seen": self.first_seen, "last_seen": self.last_seen,
                "versions": dict(self.versions), **self.history.to_json()}


def _versions(members) -> Versions:
    """Per torch version, what the members' repros did there: one that reproduces is
    enough; fixed only if every member that ran there is."""
    seen: dict[str, set[str]] = {}
    for e in members:
        seen.setdefault(e.torch_version, set()).add(REPRODUCES)
        for version, verdict in e.versions.items():
            seen.setdefault(version, set()).add(verdict)
    out = {}
    for version, verdicts in sorted(seen.items()):
        out[version] = REPRODUCES if REPRODUCES in verdicts else FIXED if verdicts == {FIXED} else ERROR
    return out


def group(entries: Iterable) -> list[Bug]:
    """The bugs of ``entries``, the most hit first."""
    by_key: dict[BugKey, list] = {}
    for e in entries:
        by_key.setdefault(key_of(e), []).append(e)
    bugs = []
    for key, members in by_key.items():
        members.sort(key=lambda e: (e.statements, e.id))
        lead = members[0]
        blame = blame_of(lead)
        fam = key.family  # a cause's key spans families: its lead's names what it showed as
        seen = tuple(k for k in contract.KINDS + contract.PROCESS_KINDS if any(e.kind == k for e in members))
        bugs.append(Bug(
            id=bug_id(key), key=key, title=title(family(lead.bug_class), lead.culprit, blame, pattern(lead), seen),
            family=fam,
            blame=blame, culprit=lead.culprit, kinds=seen,
            entries=tuple(e.id for e in members), hits=sum(e.hits for e in members),
            targets=tuple(sorted({e.target for e in members})),
            first_seen=min(e.found for e in members), last_seen=max(e.seen for e in members),
            versions=_versions(members)))
    bugs.sort(key=lambda b: (-b.hits, b.id))
    return bugs
