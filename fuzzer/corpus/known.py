"""The bugs of a corpus that its upstream.json links to a public issue: a campaign
given it (``--known-upstream``) only counts their findings, never shrinks them in full.

A bug whose key cannot tell causes apart (``bugs.separates``) is left out: through it
every later finding under that key would be "known", a new cause among them.
"""

from __future__ import annotations

from dataclasses import dataclass

from fuzzer.corpus import bugs, upstream
from fuzzer.corpus.store import load_all
from fuzzer.triage.key import BugKey


@dataclass(frozen=True)
class Known:
    """The keys a campaign counts, and how many linked keys were left out as vague."""

    keys: tuple[BugKey, ...]
    vague: int


def known_keys(folder: str) -> Known:
    """The known bugs of ``folder`` (raises ``upstream.UpstreamError`` for a bad or
    missing upstream.json)."""
    known = upstream.load(folder)
    if not known.records:
        raise upstream.UpstreamError(f"{folder} has no {upstream.FILE}")
    entries, _ = load_all([folder])
    linked = [e for e in entries if any(r.known for r in known.of([e.id]))]
    vague = {bugs.key_of(e) for e in linked if not bugs.separates(e)}
    return Known(tuple(sorted({bugs.key_of(e) for e in linked} - vague, key=lambda key: key.text)), len(vague))
