"""One triage's budgeted access to the oracle: does this finding's bug still show?

Every question triage asks (on this backend? with this switch? with these passes
of Inductor's disabled?) is the same: compile the finding's case afresh, with the
on-disk caches off, judge it, and see whether the same bug shows again: a bug class
of the same *family* (``fuzzer.triage.family``).  It is gone when nothing of its
family is left: no divergence at all, or only the rest of what the finding already
showed besides it.

A class today's contract no longer makes (an entry saved by an older dcefuzz, whose
error is classed by its message where torch's raising frame now classes it) would
never show again, and every probe would answer "changed": the triage would end "not
localised" with nothing to say why.  A probe that sees the entry's bug under today's
class (its legacy class is the entry's) raises :class:`OutdatedClass` instead, at
the first compile, and the caller says to run ``dcefuzz reclass``.
:class:`Probe` asks it, counts the calls and the seconds, and refuses to start a
call once the budget is spent (:class:`BudgetSpent`), so a triage never runs past
its limit by more than one compile.
"""

from __future__ import annotations

import contextlib
import enum
import time
from collections.abc import Callable
from dataclasses import dataclass

from fuzzer.judge import contract, targets
from fuzzer.judge.contract import BugClass
from fuzzer.judge.legacy import legacy_class, renamed, unnamed_raiser
from fuzzer.judge.spots import keeps
from fuzzer.judge.trial import judge_fresh
from fuzzer.limits import TRIAGE, OracleBudget
from fuzzer.program.ir import Case
from fuzzer.triage.family import family, leftover


class Outcome(str, enum.Enum):
    """What one probe saw."""

    #: the same bug (a bug class of its family) again
    STAYS = "stays"
    #: nothing of the bug's family left: the probed change removes the bug
    GONE = "gone"
    #: something else broke (another bug class, an error, an invalid case): the
    #: change neither shows nor clears this bug
    CHANGED = "changed"


class BudgetSpent(Exception):
    """The triage's budget is spent: no further oracle call is made."""


class OutdatedClass(Exception):
    """The finding's bug class is an older dcefuzz's: the case shows its bug under
    ``today``, a class of another family, which probes for ``saved`` never match."""

    def __init__(self, saved: BugClass, today: BugClass):
        super().__init__(f"its bug class is out of date: saved as {saved.text!r}, today's contract classes "
                         f"what it shows as {today.text!r}; run `dcefuzz reclass` on it first")
        self.saved, self.today = saved, today


class Probe:
    """Asks whether ``case`` still shows ``bug_class`` of ``kind``, within ``budget``, where
    the finding showed it (``spots``, ``fuzzer.judge.spots``; None: anywhere, for an entry
    that does not record them).

    The class alone would take another bug of it in the same program for this one: a
    stage that shows the class at another returned value, input or call is no stage of
    this bug, and a switch that removes this one while another of the class shows is not
    said to leave it.  A compile that shows the class elsewhere only is ``CHANGED``."""

    def __init__(self, case: Case, kind: str, bug_class: BugClass, device: str,
                 budget: OracleBudget = TRIAGE.budget, spots: frozenset | None = None):
        self.case, self.kind, self.bug_class, self.device = case, kind, bug_class, device
        self.budget = budget
        self.spots = spots
        self.calls = 0
        self.start = time.perf_counter()
        self.exhausted = False
        #: what the last compile showed: its divergences' kinds, or its status where
        #: it could not be judged (read by the stage walk, for a stage that fails
        #: otherwise)
        self.seen: tuple[str, ...] = ()
        #: (backend, dynamic) -> the bindings at which a compile of the finding's own case
        #: there recompiled (``Verdict.recompiled``; read by ``fuzzer.triage.aliasing``)
        self.recompiled: dict[tuple[str, bool], tuple[int, ...]] = {}

    @property
    def seconds(self) -> float:
        return time.perf_counter() - self.start

    def check(self) -> None:
        """Raise :class:`BudgetSpent` if no further call may start."""
        if self.calls >= self.budget.oracle_calls or self.seconds >= self.budget.seconds:
            self.exhausted = True
            raise BudgetSpent()

    def outcome(self, backend: str, config: dict | None = None, dynamic: bool = True,
                within: Callable[[], contextlib.AbstractContextManager] | None = None,
                target: str = targets.DEFAULT, case: Case | None = None) -> Outcome:
        """Compile afresh on ``backend`` with Inductor's ``config`` patched in (and, unless
        ``dynamic``, with static shapes; inside ``within()``, where given: a patch of
        torch that no config names, such as a rule taken out of a pass), through
        ``target`` (or a piece of one, ``targets.PIECES``); what shows.  ``case``: a
        variant of the finding's case to compile in its place (``fuzzer.triage.aliasing``:
        its inputs aliasing at every call), the bug still the finding's."""
        self.check()
        self.calls += 1
        with _inductor_config(config), (within() if within is not None else contextlib.nullcontext()):
            verdict = judge_fresh(case or self.case, self.device, backend, dynamic=dynamic, target=target)
        self.seen = tuple(sorted({d.kind for d in verdict.divergences})) if verdict.status == contract.OK \
            else (verdict.status,)
        if case is None and config is None and within is None and target == targets.DEFAULT:
            self.recompiled[(backend, dynamic)] = verdict.recompiled
        if verdict.status != contract.OK:
            return Outcome.CHANGED
        divs = verdict.of_kind(self.kind)
        seen = contract.bug_class(self.kind, divs)
        if seen and family(seen) == family(self.bug_class):
            here = self.spots is None or keeps(self.spots, case or self.case, divs)
            return Outcome.STAYS if here else Outcome.CHANGED
        if seen and (family(legacy_class(self.kind, divs)) == family(self.bug_class)
                     or unnamed_raiser(self.kind, divs) == self.bug_class
                     or family(seen) == family(renamed(self.bug_class))):
            raise OutdatedClass(self.bug_class, seen)
        if any(d.kind in contract.CORRECTNESS_KINDS and d.kind != self.kind for d in verdict.divergences):
            return Outcome.CHANGED
        if not seen or leftover(self.bug_class, seen):
            return Outcome.GONE
        return Outcome.CHANGED

    def shows(self, backend: str, config: dict | None = None) -> bool:
        return self.outcome(backend, config) is Outcome.STAYS


def _inductor_config(patch: dict | None):
    if not patch:
        return contextlib.nullcontext()
    from torch._inductor import config

    return config.patch(patch)
