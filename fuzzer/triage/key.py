"""A bug's key: its family and what in the compiler it is blamed on, as a record.

Made by ``fuzzer.corpus.bugs.key_of`` and checked by recognition
(``fuzzer.triage.recognise``), which reads its parts; its text is what a bug's id
hashes and a campaign's bug log keeps, never read back.
"""

from __future__ import annotations

from dataclasses import dataclass

from fuzzer.judge.identity import BugClass

#: what parts a key's family from its blame in its text
KEY_SEPARATOR = " @ "


@dataclass(frozen=True)
class BugKey:
    """What a bug is: its family (``fuzzer.triage.family``; for a cause the probes showed,
    ``causes.FAMILY``) and what in the compiler it is blamed on (its stage, then what
    inside it, then what its program does or tells of its buffers, in words)."""

    family: BugClass
    blame: str

    @property
    def text(self) -> str:
        return f"{self.family.text}{KEY_SEPARATOR}{self.blame}"

    def __str__(self) -> str:
        return self.text
