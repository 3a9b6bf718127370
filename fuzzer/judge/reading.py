"""What one run's verdict says of a recorded bug: the ladder every replay reads by.

A replay in this process (``fuzzer.replay.rerun``) and a standalone repro script
(``fuzzer.render.driver``, which carries this module as text) ask the same question
of a verdict: does it show the entry's bug, is the bug gone, or can nothing be said?
Each rung is a way a verdict can fail to say "gone":

1. the verdict is not OK (eager raised, or disagreed with itself): not judged;
2. the kind diverges with the recorded class: it reproduces;
3. the kind diverges with another class (the same failure worded anew by another
   torch, or another bug): neither this bug nor fixed;
4. the compiled run raised another way (``contract.failed_otherwise``): that error
   may come first and hide the bug;
5. code that did not run compiled, or a binding the contract could not judge
   (``untested``): a bug that did not show there was not tested;
6. else the bug is absent: fixed.

A crash or timeout is never in a verdict (a death is seen from outside), so a
surviving child reads its run by the same ladder and says "absent" only at rung 6.
How the process itself ended is read by the same rungs (``read_death``): a death
before its eager runs were done is not judged; the recorded death reproduces (or one
it dies so by: a heap corruption's, ``fuzzer.judge.death.dies_so``); another death is
neither; a survivor that could not judge its run is untested; one that judged it whole
and clean says absent.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from fuzzer.judge.contract import OK, BugClass, Verdict, bug_class, failed_otherwise
from fuzzer.judge.death import dies_so


class Reading(enum.Enum):
    NOT_JUDGED = "not judged"
    REPRODUCES = "reproduces"
    ANOTHER_BUG = "another bug"
    RAISED = "raised another way"
    UNTESTED = "untested"
    ABSENT = "absent"


@dataclass(frozen=True)
class ReadVerdict:
    """A verdict read for one bug: the rung, and what it is about (the status's
    reason, the class seen, the first untested reason)."""

    reading: Reading
    reason: str = ""

    @property
    def judged(self) -> bool:
        """Whether the run said anything of the bug: not where eager failed, the
        compiled run raised another way, or it was not wholly compiled or judged."""
        return self.reading not in (Reading.NOT_JUDGED, Reading.RAISED, Reading.UNTESTED)


def read_verdict(kind: str, wanted: BugClass, verdict: Verdict) -> ReadVerdict:
    """The rung ``verdict`` stops at, looking for a bug of ``kind`` and class ``wanted``."""
    if verdict.status != OK:
        return ReadVerdict(Reading.NOT_JUDGED, f"{verdict.status}: {verdict.reason}")
    seen = bug_class(kind, verdict.of_kind(kind))
    if seen and seen == wanted:
        return ReadVerdict(Reading.REPRODUCES, seen.text)
    if seen:
        return ReadVerdict(Reading.ANOTHER_BUG, seen.text)
    other = failed_otherwise(kind, verdict.divergences)
    if other is not None:
        return ReadVerdict(Reading.RAISED, bug_class(other.kind, [other]).text)
    if verdict.untested:
        gap = verdict.untested[0]
        return ReadVerdict(Reading.UNTESTED, f"{gap.reason}: {gap.message.splitlines()[0] if gap.message else ''}")
    return ReadVerdict(Reading.ABSENT)


def read_death(wanted: str, seen: str | None, eager_done: bool, judged: bool) -> ReadVerdict:
    """The rung a crash or timeout entry's fresh process stops at, looking for the
    death ``wanted``: ``seen`` is how it died (None: it survived), ``eager_done``
    whether its eager runs were done by then, ``judged`` whether a survivor judged its
    run whole and clean (exit 0, ``ReadVerdict.judged``).  ``wanted`` and ``seen`` are
    both bug classes or both deaths' names; a death reproduces where it dies so
    (``death.dies_so``: the same, or one a corrupted heap is met by where either is a
    heap corruption)."""
    if seen is not None and not eager_done:
        return ReadVerdict(Reading.NOT_JUDGED, seen)
    if seen is not None:
        return ReadVerdict(Reading.REPRODUCES if dies_so(wanted, seen) else Reading.ANOTHER_BUG, seen)
    return ReadVerdict(Reading.ABSENT if judged else Reading.UNTESTED)
