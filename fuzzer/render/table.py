"""The bugs of a corpus as a markdown table: docs/bugs.md's, generated from the
entries and the upstream file so that the page cannot drift from the data.

One row per bug, most hit first: its id, its title, where triage put it, its entries,
one column per release its repros ran under (``by_release``: two builds of one
release are one column), where it came in and went out, and what is public
(``fuzzer.corpus.upstream``).  The prose around the table stays hand-written.
"""

from __future__ import annotations

from fuzzer.corpus import releases, upstream
from fuzzer.corpus.bugs import Bug
from fuzzer.triage import aliasing, rules


def culprit_words(bug: Bug) -> list[str]:
    """Where triage puts a bug, as short phrases: stage, blame, bisector, switches."""
    c = bug.culprit
    where = [f"stage {c.stage}"] if c is not None else []
    if c is not None and c.stage == "cache":  # a stale-cache bug: the cache and the variant
        return where + [f"cache {c.subsystem}", f"variant {c.pass_name}"] + [
            f"{probe}: {outcome}" for probe, outcome in c.switches.items()]
    if c is not None and bug.blame and ":" in bug.blame:
        where.append(f"blame {bug.blame.split(':', 1)[1]}")
    if c is not None and c.subsystem:
        where.append(f"bisector {c.subsystem}" + (f"/{c.pass_name}" if c.pass_name else ""))
    gone = [s for s, v in (c.switches if c else {}).items() if v == "gone"]
    if gone:
        where.append("gone with " + ", ".join(rules.words(s) for s in gone) + " off")
    if c is not None and c.named_by:
        where.append("missing key held by " + ", ".join(c.named_by))
    if c is not None and c.dynamic_only:
        where.append("dynamic shapes only")
    if c is not None and c.aliasing_changes:
        where.append(aliasing.WORDS)
    return where or [bug.blame or "not triaged"]


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _public(records) -> str:
    if not records:
        return "not looked up"
    note = "; ".join(r.note for r in records if r.note)
    same = [link for r in records for link in r.links if link.relation in upstream.KNOWN]
    near = [link for r in records for link in r.links if link.relation not in upstream.KNOWN]
    refs = ", ".join(link.label() for link in same)
    rest = ([note] if note else []) + (
        ["related: " + ", ".join(link.label(lead=False) for link in near)] if near else [])
    if same:
        return "; ".join([f"known: {refs}", *rest])
    return "**new**" + (": " + "; ".join(rest) if rest else "")


def markdown(bugs: list[Bug], known: upstream.Upstream) -> str:
    """The table, with a header row naming every release seen."""
    names = sorted({r for b in bugs for r, _ in releases.by_release(b.versions)}, key=releases.release)
    head = ["bug", "what", "culprit", "entries", *names, "history", "public"]
    lines = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    for b in bugs:
        verdicts = dict(releases.by_release(b.versions))
        row = [f"`{b.id}`", b.title, "; ".join(culprit_words(b)), str(len(b.entries)),
               *[verdicts.get(n, "") for n in names], b.history.line(), _public(known.of(b.entries))]
        lines.append("| " + " | ".join(_cell(c) for c in row) + " |")
    return "\n".join(lines) + "\n"
