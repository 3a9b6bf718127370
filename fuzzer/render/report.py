"""A bug as the text of a PyTorch GitHub issue, ready to file.

A maintainer triaging an issue wants, in this order: what goes wrong, a repro
they can read at a glance and paste into a terminal, which releases have it, and
anything that narrows down where it lives.  So the report is the bug's title
phrased as an issue title (``[inductor] ... (reorder_for_peak_memory)``), the
brief repro of one entry inline (``fuzzer.render.brief``), what eager and
compiled did on that binding (the entry's detail lines), the culprit's evidence
(the first debugging backend that shows it, each switch thrown with the config
line that throws it, the bisector's pass), how many distinct programs hit it,
and the versions.  The full standalone script, which judges every recorded
binding with the fuzzer's own contract and exits 1 / 0 / 125 for ``git bisect
run``, is named as an attachment rather than pasted: it is some 400 lines.

A report says only what is true of its program.  How the program ran is its
target's (``Target.through``: ``torch.compile`` with the program's own
``dynamic``, an export and its ``.module()``, compiled autograd); what its custom ops
promise is said only of the ops it calls (``fuzzer.render.makeup``), and not at all
of a program that calls none; where no stage is named, it says why (not triaged, a
death, a target with nothing to walk).  What was read by hand of the bug's cause,
and the shortest hand script, come from its upstream records
(``fuzzer.corpus.upstream``: quoted from docs/bugs.md), under a heading of their own
so that nobody takes them for the fuzzer's evidence; a bug whose records hold neither
gets nothing of the kind.

The report is built from records only (the bug, its entry, its upstream records);
it runs nothing.  That the brief repro fails where the bug is, is checked by running
it, in the tests, for a bug of each kind of assertion and of each target other than
``torch.compile`` of the committed corpus.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from fuzzer.corpus import bugs
from fuzzer.corpus.bugs import Bug
from fuzzer.corpus.entry import Entry
from fuzzer.corpus.upstream import Reading
from fuzzer.judge import contract, kinds, targets
from fuzzer.judge.contract import BugClass
from fuzzer.judge.raised import SITE_PREFIX
from fuzzer.judge.targets.brief import Through
from fuzzer.limits import REPORT
from fuzzer.program import codegen, sizes
from fuzzer.render import brief, makeup
from fuzzer.render.evidence import culprit_lines, target_of
from fuzzer.triage import causes, within

#: the area tag of an issue title, by the first debugging backend that shows the bug (a
#: piece of a target's pipeline, ``fuzzer.triage.within``: :func:`area_of`)
AREA = {"eager": "dynamo", "aot_eager": "aotdispatch", "aot_eager_decomp_partition": "inductor",
        "inductor": "inductor"}
#: where a corrupted value lands, by the kind of entry that saw it
LANDS = {contract.EFFECT_LOG: "seen by an effectful op", contract.WRONG_MUTATION: "written to an input",
         contract.WRONG_OUTPUT: "returned"}
#: one sentence of what the compiled program does wrong, by the brief's check key
SAYS = {
    contract.WRONG_OUTPUT: "returns values that differ from eager's",
    contract.WRONG_MUTATION: "writes values into the program's inputs that differ from eager's",
    contract.EFFECT_LOG: "does not call the custom ops registered as ORDERED effects "
                         "(`register_effect(EffectType.ORDERED)`) exactly once each, in program order",
    BugClass(contract.EFFECT_LOG, (contract.DATA,)).text: "hands an ORDERED effectful custom op other data "
                                              "than eager does",
    contract.MISSED_DCE: "still runs a pure custom-op call whose result nothing uses",
    contract.COMPILE_ERROR: "fails to {verb}, though eager runs it",
    contract.RUNTIME_ERROR: "raises in {code}, though eager runs it",
    contract.CRASH: "kills the process, though eager runs it",
    contract.TIMEOUT: "hangs, though eager returns",
}
#: what each switch outcome means, for the table's legend

_LINE = re.compile(r"^\[(?P<kind>[\w-]+)\] binding (?P<binding>\d+), (?P<where>[^:]+): (?P<detail>.*)$")
_ORDERS = re.compile(r"\(eager \[(?P<eager>.*)\], compiled \[(?P<compiled>.*)\]\)$")


class NoSuchBug(LookupError):
    """A BUG argument that names no bug or entry of the corpus, or more than one bug."""


def pick(found: list[Bug], entries: list[Entry], name: str) -> tuple[Bug, Entry]:
    """The bug ``name`` names (a bug id, a unique prefix of one, or an entry id) and
    the entry to show: the one named, else the bug's smallest."""
    by_id = {e.id: e for e in entries}
    if name in by_id:
        return next(b for b in found if name in b.entries), by_id[name]
    wanted = name if name.startswith("bug-") else "bug-" + name
    matches = [b for b in found if b.id.startswith(wanted)]
    if len(matches) > 1:
        raise NoSuchBug(f"{name!r} is ambiguous: it matches {', '.join(b.id for b in matches)}")
    if not matches:
        known = ", ".join(b.id for b in found) or "none"
        raise NoSuchBug(f"no bug or entry {name!r} here (bugs: {known})")
    return matches[0], by_id[matches[0].smallest]


def _inner(bug: Bug) -> str:
    return bug.blame.partition(":")[2] if bug.blame else ""


def raised_words(rest: str) -> str:
    """An error class in a title's words: ``raised KeyError in torch._inductor:f`` is
    ``KeyError in f`` (with its message, where the class keeps one)."""
    if not rest.startswith(SITE_PREFIX):
        return rest
    head, _, message = rest[len(SITE_PREFIX):].partition(": ")
    error, _, where = head.partition(" in ")
    return f"{error} in {where.partition(':')[2] or where}" + (f": {message}" if message else "")


def area_of(stage: str | None, target: str) -> str:
    """The area tag of an issue's title: the first debugging backend's that shows the bug
    (:data:`AREA`), or the area of the piece of a target's pipeline that does (the
    ``Target.area`` of the piece its ``blame`` names: export's pieces ``export``, compiled
    autograd's ``compiled autograd``), else the area of the target that found it."""
    if stage in AREA:
        return AREA[stage]
    piece = within.blamed(stage)
    return targets.get(piece if piece is not None else target).area


def _through(bug: Bug) -> Through:
    """How the bug's programs ran: their target's, where all of its entries were found
    through one target, else ``torch.compile``'s (one bug of several targets shows
    through ``compile`` too: ``campaign.entries.shows_through_compile``)."""
    return targets.get(target_of(bug)).through


def subject(bug: Bug) -> str:
    """What goes wrong, in the words of an issue title: for a bug whose cause the probes
    showed (``fuzzer.triage.causes``), that cause, whatever it shows as."""
    if bug.culprit is not None and bug.culprit.cause in causes.BY_NAME:
        return causes.BY_NAME[bug.culprit.cause].title
    family = bug.family
    kind, rest = family.kind, ",".join(family.symptoms)
    if kind == bugs.CORRUPTED:
        return "wrong values " + " or ".join(LANDS[k] for k in bug.kinds if k in LANDS)
    if kind == contract.EFFECT_LOG:
        return f"ORDERED effectful custom-op calls {rest.replace(',', ', ')}"
    if kind == contract.COMPILE_ERROR:
        return f"{_through(bug).raiser} raises {raised_words(rest).rstrip(': ')}"
    if kind == contract.RUNTIME_ERROR:
        code = "the exported module" if _through(bug).other == "exported" else "compiled code"
        return f"{code} raises {raised_words(rest).rstrip(': ')}"
    return bugs.what(bug.family)


@dataclass(frozen=True)
class Stance:
    """What PyTorch's maintainers have said of a whole class of bug, with the threads
    they said it in: a triager weighs a report against it before the program, so the
    report says it rather than leave it to be found."""

    #: one paragraph of markdown, naming the threads as ``owner/repo#number``
    text: str
    #: the threads, ``owner/repo#number``
    refs: tuple[str, ...]


@dataclass(frozen=True)
class Issue:
    """What an issue says that depends on how its program was tried: a plain trial's
    words (:func:`plain_issue`), or a trial kind's own (``TrialKind.issue``: a cache
    pair's bug is about two processes and a declaration that changed)."""

    #: the title, without its leading ``# ``
    title: str
    #: the first paragraph: what the program does wrong, and under what
    opening: str
    #: the lines under "Where it goes wrong"
    evidence: tuple[str, ...]
    #: what the attached full script does, as the end of a sentence
    runs: str
    #: what maintainers have said of bugs like this one, where they have
    stance: Stance | None = None


def issue_title(bug: Bug) -> str:
    """``[area] what goes wrong under dynamic shapes (switch or pass)``; a bug that
    static shapes show too is not said to be one of dynamic shapes."""
    stage = bug.culprit.stage if bug.culprit is not None else None
    area = area_of(stage, target_of(bug))
    inner = _inner(bug)
    shapes = ("" if bug.culprit is not None and bug.culprit.dynamic_only is False
              else " under dynamic shapes")
    return f"[{area}] {subject(bug)}{shapes}" + (f" ({inner})" if inner else "")


def says(entry: Entry) -> str:
    """One sentence of what the compiled program does wrong."""
    exported = targets.get(entry.target).through.other == "exported"
    code, verb = ("the exported module", "export") if exported else ("compiled code", "compile")
    return SAYS.get(brief.check_key(entry), "differs from eager").format(code=code, verb=verb)


def plain_issue(bug: Bug, entry: Entry) -> Issue:
    """An issue's words for a program run once through its target and judged against
    eager: how it ran (``through``), what it does wrong, and what its custom ops
    promise, each said only of what the program has (``makeup``)."""
    way, made = targets.get(entry.target).through, makeup.Makeup.of(entry.case.program)
    how = way.opening.format(args=codegen.compile_args(entry.case.program), backend=entry.backend,
                             device=entry.device)
    honest = makeup.honesty(made)
    opening = f"{how[0].upper()}{how[1:]}, the program below {says(entry)}." + (f" {honest}" if honest else "")
    runs = (f"runs eager and {way.other} over every recorded size binding, judges them with the fuzzer's "
            f"contract ({makeup.judged(made)})")
    return Issue(issue_title(bug), opening, tuple(culprit_lines(bug)), runs)


def issue_of(bug: Bug, entry: Entry) -> Issue:
    """The words of ``bug``'s issue, as the trial kind of its entry has them."""
    return kinds.of(entry.kind).issue(bug, entry) or plain_issue(bug, entry)


@dataclass(frozen=True)
class Said:
    """One detail line of an entry, read back into its parts (``Divergence.line``)."""

    binding: int
    where: str
    detail: str

    @classmethod
    def read(cls, line: str) -> Said | None:
        m = _LINE.match(line)
        return cls(int(m["binding"]), m["where"], m["detail"]) if m else None


def _code(text: str) -> str:
    return f"`` {text} ``" if "`" in text else f"`{text}`"


def happens(entry: Entry) -> list[str]:
    """Bullets: what eager did and what compiled did, on the brief's binding."""
    index = brief.binding_index(entry)
    said = [s for s in map(Said.read, entry.detail) if s is not None and s.binding == index]
    if entry.kind in contract.ERROR_KINDS:
        what = brief.without_site(said[0].detail if said else entry.detail[0])
        other = targets.get(entry.target).through.other
        return ["eager: runs", f"{other}: {brief.check_of(entry).failure or _code(what)}"
                if entry.kind in contract.PROCESS_KINDS else f"{other}: raises {_code(what)}"]
    out = []
    for s in said[:REPORT.detail_lines]:
        orders = _ORDERS.search(s.detail)
        if s.where == "sequence" and orders:
            out += [f"eager calls the effectful ops in the order `{orders['eager']}`",
                    f"{targets.get(entry.target).through.other} calls them in the order `{orders['compiled']}`"]
        else:
            out.append(f"{s.where}: {s.detail}")
    return out or list(entry.detail[:REPORT.detail_lines])


def _versions(bug: Bug) -> list[str]:
    by_verdict: dict[str, list[str]] = {}
    for version, verdict in bug.versions.items():
        by_verdict.setdefault(verdict, []).append(version)
    words = {bugs.REPRODUCES: "Reproduces on", bugs.FIXED: "Fixed on", bugs.ERROR: "Could not be judged on"}
    return [f"- {words.get(v, v)}: {', '.join(versions)}" for v, versions in by_verdict.items()]


def found_by(bug: Bug, entry: Entry, full_script: str, runs: str) -> str:
    """Where the bug came from, how common it is, and what the attachment is."""
    others = len(bug.entries) - 1
    shown = "the smallest" if entry.id == bug.smallest else entry.id
    if others:
        hits = (f"{others} other distinct minimal programs hit the same culprit "
                f"({bug.hits} hits in all); the one above is {shown}.")
    else:
        hits = f"One program hit it ({bug.hits} {'hit' if bug.hits == 1 else 'hits'})."
    return ("Found by dcefuzz, a differential fuzzer for custom ops under `torch.compile`. " + hits
            + f" The full standalone script is attached (`{full_script}`, torch only): it {runs} and "
            "exits 1 when the bug reproduces, 0 when it does not, so it works with `git bisect run`.")


def _public(known) -> list[str]:
    """What is already public (``fuzzer.corpus.upstream`` records), for the reader
    to check before filing: an issue already open is a comment, not a new issue."""
    if not known:
        return []
    links = [link for r in known for link in r.links]
    notes = [r.note for r in known if r.note]
    if not any(r.known for r in known):
        return ["", "### Already public", "",
                f"Nothing public about this cause (the tracker searched {max(r.searched for r in known)}).",
                *[f"- {link.line()}" for link in links], *[f"- {n}" for n in notes]]
    return ["", "### Already public", "", *[f"- {link.line()}" for link in links], *[f"- {n}" for n in notes]]


def _stance(stance: Stance | None) -> list[str]:
    if stance is None:
        return []
    return ["### What maintainers have said", "", stance.text, ""]


def _output_code(lines: list[str]) -> list[str]:
    if not lines:
        return []
    return ["", "Inductor's output code for the failing binding (the wrapper's `call`: each custom-op call "
            "with the lines around it, and the kernels):", "", "```python", *lines, "```"]


def _reading(reading: Reading) -> list[str]:
    """The cause as read by hand and the shortest hand script, where its records have
    them (``fuzzer.corpus.upstream``); nothing where they do not."""
    lines = []
    if reading.causes:
        lines += ["### The cause, as read", "",
                  "Read by hand, not measured by the fuzzer (its own evidence is above):", "",
                  *[line for cause in reading.causes for line in (cause, "")]]
    if reading.script:
        lines += [] if reading.causes else ["### A hand script", ""]
        lines += ["A hand script that shows it (written by hand, torch only):", "",
                  "```python", reading.script.rstrip("\n"), "```", ""]
    return lines


def _environment(text: str) -> list[str]:
    """``python -m torch.utils.collect_env`` of the machine that rendered the report,
    folded, as the issue template asks."""
    if not text:
        return []
    return ["", "<details><summary>collect_env (the machine this report was made on)</summary>", "",
            "```", text.rstrip(), "```", "", "</details>"]


def render(bug: Bug, entry: Entry, full_script: str, known=(), code: list[str] = (),
           environment: str = "") -> str:
    """The issue: a ``# title`` line, then the body; ``full_script`` is the name the
    attached full script goes by; ``known``, the bug's upstream records; ``code``,
    the lines of Inductor's output code that show it (``output_code``);
    ``environment``, torch's ``collect_env`` text."""
    binding = entry.case.bindings[brief.binding_index(entry)]
    sizes_of = ", ".join(f"{k}={v}" for k, v in binding.items())
    shapes = ", ".join(f"{i.name} {list(sizes.concrete(i.dims, binding))}" for i in entry.case.program.inputs)
    on = "; ".join(part for part in (sizes_of and f"sizes {sizes_of}", shapes and f"inputs {shapes}") if part)
    reproduces = ", ".join(v for v, verdict in bug.versions.items() if verdict == bugs.REPRODUCES)
    failure = brief.expected_failure(entry)
    issue = issue_of(bug, entry)
    fails = (f"On torch {reproduces or entry.torch_version} this fails with "
             f"{_code(failure) if failure.isidentifier() else failure}.")
    story = bug.history
    title, opening = issue.title, issue.opening
    if story.regression:
        title = f"[regression {story.introduced}] {title}"
        opening = (f"A regression: torch {story.before} runs this program right, {story.introduced} does not. "
                   + opening)
    lines = [
        f"# {title}", "",
        "### 🐛 Describe the bug", "",
        opening, "",
        "```python", kinds.brief(entry).rstrip("\n"), "```", "",
        fails, "",
        f"What eager and {targets.get(entry.target).through.other} do" + (f" ({on})" if on else "") + ":", "",
        *[f"- {line}" for line in happens(entry)], "",
        "### Where it goes wrong", "",
        *issue.evidence,
        *_output_code(list(code)), "",
        *_reading(Reading.of(known)),
        found_by(bug, entry, full_script, issue.runs), "",
        *_stance(issue.stance),
        "### Versions", "",
        *_versions(bug),
        f"- History: {story.line()}",
        *_environment(environment),
        *_public(known),
    ]
    return "\n".join(lines) + "\n"
