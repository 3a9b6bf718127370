"""Is this finding that known bug?  Asked of a finding at a fraction of a triage's cost.

A finding of a bug whose examples are full is only counted (``campaign.entries``),
but which bug it is takes its culprit, and an unshrunk Inductor finding's culprit
costs some twenty fresh compiles and often the whole triage budget (every switch,
pairs of them, the bisector: 30 s a repeat measured on torch 2.13 CPU, where a new
finding, triaged shrunk, cost 15).  Most findings of a campaign are of bugs it
knows, so the question to ask is not "where is this bug?" but "is it that one?",
and the probes that define a known bug's key answer it in two to five compiles:

* the *stage*: the known key's stage shows the bug and no stage before it does
  (the stage walk's own question; the finding's own backend is not compiled again,
  its trial has just shown the bug there);
* *dynamic shapes only*: static shapes on that stage remove the bug exactly when
  the key says so;
* the *switches* the key names (the blamed one, a pair, and the others its wrong
  result is also gone with): each removes the bug.

A claim whose key names a pass the bisector found is not recognised here (one
bisection is most of a triage); its findings are triaged in full.  What the probes
do not ask is whether a switch the key does not name would remove the bug too, or
whether the bisector would now name a pass: a finding that differs from the known
bug only there is counted as it.  So that such a bug cannot hide behind a known one
for a whole campaign, one finding in :data:`fuzzer.limits.TriageLimits.recheck_one_in`
is triaged in full whatever it matches (``rechecked``, drawn from its program seed,
so the choice is the same on every run).
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterable
from dataclasses import dataclass

import torch

from fuzzer.judge import contract
from fuzzer.limits import TRIAGE
from fuzzer.program.generate import derive_seed
from fuzzer.program.ir import Case
from fuzzer.triage import switches
from fuzzer.triage.culprit import Culprit
from fuzzer.triage.family import family
from fuzzer.triage.probe import BudgetSpent, Outcome, Probe, TriageBudget
from fuzzer.triage.stage import STAGES

#: how a bug key joins a family to its culprit's key (``fuzzer.corpus.bugs.key_of``)
KEY_JOIN = " @ "
_DYNAMIC = " [dynamic shapes only]"
_ALSO = re.compile(r" \(also gone with (?P<names>.+) off\)$")


@dataclass(frozen=True)
class Claim:
    """What a known bug's key says of its culprit, in the terms probes can check."""

    key: str
    stage: str
    #: the switch (or ``a+b`` pair) its blame names, None where it names none
    switch: str | None
    #: the other switches whose throwing also removes its wrong result
    also: tuple[str, ...]
    dynamic_only: bool

    @property
    def gone(self) -> tuple[str, ...]:
        """Every switch (or pair) the key says removes the bug."""
        return self.also + ((self.switch,) if self.switch else ())


def claim_of(key: str) -> Claim | None:
    """The checkable claim of a bug key (None: the key names a pass the bisector found,
    an unknown switch or stage, or no culprit at all)."""
    _, joined, blame = key.rpartition(KEY_JOIN)
    if not joined:
        return None
    dynamic_only = blame.endswith(_DYNAMIC)
    blame = blame.removesuffix(_DYNAMIC)
    also: tuple[str, ...] = ()
    if (match := _ALSO.search(blame)) is not None:
        also, blame = tuple(match["names"].split(", ")), blame[:match.start()]
    stage, _, named = blame.partition(":")
    if stage not in STAGES:
        return None
    known = switches.BY_NAME
    if named and not all(part in known for part in named.split(switches.PAIR)):
        return None  # a bisected pass or subsystem: only a bisection says it again
    if not all(name in known for name in also):
        return None
    return Claim(key, stage, named or None, also, dynamic_only)


def candidates(bug_class: str, keys: Iterable[str]) -> list[Claim]:
    """The checkable claims of the known bugs of ``bug_class``'s family."""
    prefix = family(bug_class) + KEY_JOIN
    return [c for k in keys if k.startswith(prefix) and (c := claim_of(k)) is not None]


def rechecked(program_seed: int | None) -> bool:
    """Whether the finding of this program is triaged in full whatever it matches."""
    if program_seed is None:
        return True
    return derive_seed("recheck", program_seed) % TRIAGE.recheck_one_in == 0


class _Asked:
    """One finding's probes, each asked once however many claims need it."""

    def __init__(self, probe: Probe):
        self.probe, self.seen = probe, {}

    def outcome(self, backend: str, switch: str | None = None, dynamic: bool = True) -> Outcome:
        key = (backend, switch, dynamic)
        if key not in self.seen:
            patch = switches.patch_of(switch) if switch else None
            self.seen[key] = self.probe.outcome(backend, patch, dynamic=dynamic)
        return self.seen[key]


def _holds(asked: _Asked, claim: Claim, backend: str) -> bool:
    """Whether every probe that defines ``claim``'s key answers as it says."""
    earlier = STAGES[:STAGES.index(claim.stage)]
    if any(asked.outcome(s) is Outcome.STAYS for s in earlier):
        return False
    if claim.stage != backend and asked.outcome(claim.stage) is not Outcome.STAYS:
        return False
    if (asked.outcome(claim.stage, dynamic=False) is Outcome.GONE) != claim.dynamic_only:
        return False
    return all(asked.outcome(claim.stage, name) is Outcome.GONE for name in claim.gone)


def culprit_of(claim: Claim, kind: str, calls: int, seconds: float) -> Culprit:
    """The culprit a finding that matches ``claim`` is counted with: its key is the
    claim's (the switches it names, gone; static shapes probed as it says)."""
    return Culprit(stage=claim.stage, kind=kind, switches={name: Outcome.GONE.value for name in claim.gone},
                   dynamic_only=claim.dynamic_only, oracle_calls=calls, seconds=seconds,
                   torch_version=torch.__version__, recognised=True)


def recognise(case: Case, kind: str, bug_class: str, device: str, keys: Iterable[str],
              budget: TriageBudget = TriageBudget(), backend: str = "inductor") -> Culprit | None:
    """The culprit of the known bug (one of ``keys``) that ``case``'s finding is, if its
    defining probes all say so (None: no claim holds, none can be checked, or the
    budget ran out)."""
    if kind in contract.PROCESS_KINDS or backend not in STAGES:
        return None
    claims = [c for c in candidates(bug_class, keys) if STAGES.index(c.stage) <= STAGES.index(backend)]
    if not claims:
        return None
    start = time.perf_counter()
    asked = _Asked(Probe(case, kind, bug_class, device, budget))
    for claim in claims:
        try:
            holds = _holds(asked, claim, backend)
        except BudgetSpent:
            return None
        if holds:
            culprit = culprit_of(claim, kind, asked.probe.calls, time.perf_counter() - start)
            # the key is re-derived by the one rule that derives keys, never assumed
            return culprit if family(bug_class) + KEY_JOIN + str(culprit.key) == claim.key else None
    return None
