"""Shrinking: reduce a finding to a 1-minimal case that still shows the same bug.

The compiler's own minifier shrinks FX graphs; this shrinks the user-level program,
keeping the custom-op declarations and the dynamic-shape setting that trigger the
bug, so the result is a repro a PyTorch developer can read in one glance.

The search is :class:`Shrinker`; the passes it runs are ``fuzzer.reduce.passes``, in
the order of ``passes.schedule.SCHEDULE``.  The result is renumbered (values, sites,
symbols) and confirmed after a fresh compile like any finding.  An ``OracleBudget`` (``fuzzer.limits``)
bounds oracle calls and seconds; when it runs out, the best case so far is returned.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypedDict

from fuzzer.internal import SHRINK, InternalError
from fuzzer.judge import contract, spots
from fuzzer.judge.trial import Finding, judge_fresh
from fuzzer.limits import SHRINK as SHRINK_LIMITS
from fuzzer.limits import UNBOUNDED, OracleBudget
from fuzzer.program.ir import Case, InvalidProgram
from fuzzer.reduce import signature
from fuzzer.reduce.edits import canonical_case, remove_statements, with_program
from fuzzer.reduce.order import complexity
from fuzzer.reduce.passes.base import drive
from fuzzer.reduce.passes.schedule import PASSES, SCHEDULE


class _ShrinkRecord(TypedDict):
    original_statements: int
    statements: int
    oracle_calls: int
    seconds: float
    budget_exhausted: bool


class ShrinkRecord(_ShrinkRecord, total=False):
    """What an entry keeps of the shrink that made it (``Entry.shrink``, as its JSON
    holds it): the statements before (of the finding as first found, across re-shrinks)
    and after, the oracle calls and seconds spent, whether the budget ran out, and for
    a casualty's shrink how it was confirmed."""

    #: how a casualty's shrunk program was confirmed (``"fresh process"``)
    confirmed: str


@dataclass
class ShrinkResult:
    case: Case
    signature: signature.Signature
    divergences: list
    original_statements: int
    statements: int
    oracle_calls: int
    seconds: float
    exhausted: bool
    confirmed: bool
    #: dcefuzz's own errors met judging candidates
    errors: list = dataclasses.field(default_factory=list)

    def record(self) -> ShrinkRecord:
        return {"original_statements": self.original_statements, "statements": self.statements,
                "oracle_calls": self.oracle_calls, "seconds": round(self.seconds, 2),
                "budget_exhausted": self.exhausted}


class BudgetExhausted(Exception):
    pass


def case_key(case: Case) -> str:
    return hashlib.sha256(json.dumps(case.to_json(), sort_keys=True).encode()).hexdigest()


# ---------------------------------------------------------------- shrinker

class Shrinker:
    """Reduce one finding; ``judge`` is injectable so tests can use a stand-in oracle.

    The shrinker holds the simplest case so far (``best``) and runs the passes of
    ``SCHEDULE`` over it, round after round, until a round takes nothing.  A pass only
    proposes candidates (``passes.base``); every rule it must keep is kept here, in
    :meth:`consider`, the one door through which a candidate becomes ``best``:

    - *Strictly simpler.*  A candidate is taken only if it is lower than ``best`` in
      ``order.complexity``, a well-founded order (statements, returned values, inputs,
      ranks, symbols, bindings, the mode, then simpler forms, operands defined earlier,
      simpler attributes, smaller sizes).  So no pass can undo another, the rounds
      cannot cycle, and the fixpoint is reached.
    - *Legal before judged.*  A candidate the IR refuses (``Case.validate``: an
      undefined operand, dims a form does not accept, a written operand sharing
      storage, a binding under a symbol's minimum) costs no oracle call.  Passes may
      therefore propose freely; they need not check dims themselves.
    - *The same bug.*  A candidate is taken only if it shows a divergence of the same
      kind and the same bug class (``contract.bug_class``) as the original: a step
      that slides to another bug (say, wrong output to compile error) is refused.
    - *Where it showed.*  And only if one of those divergences shows where one of the
      original's did (``fuzzer.judge.spots``: the same returned value, written input or
      call site): two bugs of one class in one program are two bugs, and a step that
      slides from the one found to the other is refused too.
    - *Nothing implicit.*  Every deletion is a candidate of its own: deleting a
      statement deletes only what reads its result, never a dead neighbour, because
      dead calls are often the trigger.
    - *Each verdict once.*  Verdicts are cached by the candidate's content hash, so a
      candidate two passes both propose is judged once.
    - *Bounded.*  An ``OracleBudget`` bounds oracle calls and seconds; when it runs out,
      the search stops where it is and ``best`` is the result.
    - *Our errors are not the bug.*  A candidate on which dcefuzz itself fails
      (``fuzzer.internal``) is refused and its error kept in ``errors``.

    ``hints`` are candidates considered before the first pass, through the same door
    (``fuzzer.campaign.hints``: a finding of a family whose held bugs' keys say what
    their 1-minimal programs do may jump to a program that does just that, and be
    shrunk on from there, a handful of candidates where the passes from the whole
    program take dozens).  A hint that is not simpler, or does not show the same bug
    class, is refused as any candidate is; the first taken ends them.  The result is
    still a fixpoint of every pass, so it is as minimal as without them.
    """

    def __init__(self, found: Finding, budget: OracleBudget | None = None,
                 judge: Callable[[Case], contract.Verdict] | None = None, hints: Sequence[Case] = ()):
        case, kind, divergences = found.case, found.kind, found.divergences
        self.kind = kind
        self.hints = tuple(hints)
        self.target = contract.bug_class(kind, divergences)
        self.budget = budget or SHRINK_LIMITS.budget
        self.judge = judge or (lambda c: judge_fresh(c, found.device, found.backend))
        self.best = case
        self.best_divs = list(divergences)
        #: where the original showed its bug: a candidate must show it at one of them
        self.own = spots.own_spots(case, divergences)
        self.cache: dict[str, list | None] = {case_key(case): list(divergences)}
        self.calls = 0
        self.start = time.perf_counter()
        self.exhausted = False
        #: dcefuzz's own errors while judging candidates (``fuzzer.internal``): such a
        #: candidate is rejected, never taken for the bug
        self.errors: list[InternalError] = []

    # -- the predicate ------------------------------------------------------
    def divergences_of(self, case: Case, where: frozenset | None = None) -> list | None:
        """The target kind's divergences if ``case`` shows the same bug (of the same
        class, at one of ``where``: the original's own, ``self.own``), else None."""
        key = case_key(case)
        if key in self.cache:
            return self.cache[key]
        try:
            case.validate()
        except InvalidProgram:
            self.cache[key] = None
            return None
        if self.calls >= self.budget.oracle_calls or time.perf_counter() - self.start >= self.budget.seconds:
            self.exhausted = True
            raise BudgetExhausted
        self.calls += 1
        try:
            verdict = self.judge(case)
        except Exception as exc:  # noqa: BLE001 - our error: the candidate says nothing of the bug
            self.errors.append(InternalError.of(SHRINK, exc))
            self.cache[key] = None
            return None
        divs = verdict.of_kind(self.kind) if verdict.status == contract.OK else []
        same = divs and contract.bug_class(self.kind, divs) == self.target
        result = divs if same and spots.keeps(self.own if where is None else where, case, divs) else None
        self.cache[key] = result
        return result

    def recheck(self, case: Case, where: frozenset | None = None) -> list | None:
        """A fresh oracle call, past the cache and the budget (for confirmation); ``where``:
        the original's own in ``case``'s names, where it renamed them."""
        self.cache.pop(case_key(case), None)
        saved, self.budget = self.budget, UNBOUNDED
        try:
            return self.divergences_of(case, where)
        finally:
            self.budget = saved

    def consider(self, case: Case) -> bool:
        """Adopt ``case`` if it is strictly simpler and still shows the bug."""
        if complexity(case) >= complexity(self.best):
            return False
        divs = self.divergences_of(case)
        if divs is None:
            return False
        self.best, self.best_divs = case, divs
        return True

    def run(self) -> Case:
        try:
            for hint in self.hints:
                if self.consider(hint):
                    break
            changed = True
            while changed:
                changed = False
                for name in SCHEDULE:
                    changed |= drive(PASSES[name], self.consider, self)
        except BudgetExhausted:
            pass
        return self.best


def shrink(found: Finding, budget: OracleBudget | None = None, judge=None, confirm: bool = True,
           hints: Sequence[Case] = ()) -> ShrinkResult:
    """Shrink the case of ``found`` (trying ``hints`` first, ``Shrinker``), renumber, and
    confirm the reduced case after a fresh compile: each candidate judged by ``judge``,
    else by a fresh compile on the finding's device and backend."""
    start = time.perf_counter()
    case, kind = found.case, found.kind
    shrinker = Shrinker(found, budget, judge, hints)
    best = shrinker.run()
    divs = shrinker.best_divs
    confirmed = not confirm
    if confirm:
        # outside the budget: the renumbered case must show the bug from a fresh compile;
        # if renumbering lost it (it should not), the unrenumbered one must
        renaming = signature.renaming(best.program)
        renamed = spots.renamed(shrinker.own, renaming.names, renaming.sites)
        for candidate, where in ((canonical_case(best), renamed), (best, shrinker.own)):
            again = shrinker.recheck(candidate, where)
            if again is not None:
                best, divs, confirmed = candidate, again, True
                break
    return ShrinkResult(
        case=best, signature=signature.of(kind, best, divs), divergences=divs,
        original_statements=len(case.program.body), statements=len(best.program.body),
        oracle_calls=shrinker.calls, seconds=time.perf_counter() - start,
        exhausted=shrinker.exhausted, confirmed=confirmed, errors=list(shrinker.errors),
    )
