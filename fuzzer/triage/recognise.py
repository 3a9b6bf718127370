"""A finding recognised as a known bug: the facts the bug's key reads, checked one by
one with the probes that answer them, before the finding is triaged or shrunk in full.

A bug's key (``fuzzer.corpus.bugs.key_of``, ``Culprit.key``) is built from a few
facts: the family of the bug class, the first stage that shows it, whether static
shapes show it too, for a failed lookup the locals that hold the missing key, and
inside Inductor the switch to blame with the rewriting switches whose throwing also
removes it.  A whole triage (``culprit.localise``) *discovers* those facts: it walks
every stage, throws every switch, pairs them and bisects.  To say that a finding is
a given known bug needs less: each fact the known bug's key names is *checked*, and
a probe whose answer the key cannot read is not made.  The answers are put in a
:class:`Culprit` and its key made by the same code as any culprit's, so a finding is
recognised only when the key its own probes give is, character for character, the
known one: recognition never guesses a fact, it only leaves out the probes that
cannot change the key.

Four shapes of key are checked so (:func:`shape_of`):

- a *stage* before Inductor that the bisector has no subsystems for (``eager``,
  ``aot_eager``), alone: the stage walk up to it, static shapes on it, for a wrong
  value whose inputs alias at some calls only the same inputs aliasing at every call
  and apart at every call (``fuzzer.triage.aliasing``) and, for a failed lookup, the lookup probe; no compile
  is Inductor's, so it is checked on the program as found, before any shrink
  (:attr:`Shape.STAGE`);
- a wrong value (or effect log, or kept call) on Inductor blamed on one *switch*,
  not the no-op removal (whose blame is refined by per-op rules that take a probe
  each): the stage walk, the blamed switch (gone), the switches after it (none gone:
  the blame is the last switch that removes the bug), the rewriting switches before
  it (the key names those that remove it too) and static shapes (:attr:`Shape.SWITCH`);
- an error first shown on Inductor: the stage walk, static shapes (and the lookup
  probe), then the bisection as a key-only triage makes it, its application
  bisected only for a pass's subsystem (``bisect.bisect(applications=False)``: a
  lowering's is never part of an error's key); no switch, since none is part of an error's
  blame (``Culprit.blame``) (:attr:`Shape.ERROR`);
- a wrong value that needs its inputs' aliasing to change between calls, wherever it
  shows (``aliasing.BLAME``): the stage walk up to the first stage that shows it, static
  shapes there and the two probes of ``fuzzer.triage.aliasing`` (:attr:`Shape.ALIASING`);
- a cause (``cause @ <name>``, ``fuzzer.triage.causes``), whatever the finding's family:
  the stage walk up to the first stage that shows it, then the cause's own probes, where
  it applies to the program (:attr:`Shape.CAUSE`).

A key that reads the program as well (``bugs.key_of``'s ``{does ...}`` and ``{buffers ...}``:
the forms, mode and buffers of a 1-minimal program) is checked on a program from which
nothing it names can be cut: each one-step simplification of the finding's forms and
mode (``fuzzer.reduce.cuts``) whose key would read otherwise is compiled once on the
key's stage, and one that still shows the bug means the finding's own 1-minimal program
reads otherwise: it is not recognised (:func:`minimal`).

What is left out, and why the key cannot change:

- the compile on the finding's own backend, the last step of the stage walk: the
  case was judged showing the bug there by a fresh compile already (the trial's
  confirmation, or the shrink's oracle on the candidate it kept), so the walk's
  answer there is known;
- the bisection of a stage it has no subsystems for (its answer is None without a
  compile), and of Inductor for a wrong value a switch is blamed for (the switch wins);
  the bisection of an error whose static shapes already disagree with the key;
- the switches before the blamed one that only move the computation
  (``switches.Role.MOVES``), and the pairs of switches, probed only where no switch
  alone removes the bug.

Any other key (a pair; a rule of the no-op removal; a stage before Inductor the
bisector has subsystems for) is not recognised here, and the finding goes the way it
went before.
A probe that disagrees ends the check of that key, so a finding of another bug of the
same family costs only the probes up to the first that tells them apart.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable

import torch

from fuzzer.judge import contract
from fuzzer.judge.contract import BugClass
from fuzzer.limits import TRIAGE, OracleBudget
from fuzzer.program.ir import Case
from fuzzer.triage import aliasing, bisect, causes, lookup, rules, stage, switches
from fuzzer.triage.culprit import Culprit
from fuzzer.triage.family import VALUE_KINDS, family
from fuzzer.triage.key import BugKey
from fuzzer.triage.probe import BudgetSpent, Outcome, Probe

#: the stage whose switches a checked key blames
INDUCTOR = "inductor"


class Shape(str, enum.Enum):
    """A key recognition can check, by what its blame names."""

    #: a stage before Inductor that the bisector has no subsystems for, alone
    STAGE = "stage"
    #: one switch of Inductor, for a finding that is not an error
    SWITCH = "switch"
    #: an error first shown on Inductor: the bisector's pass (or nothing)
    ERROR = "error"
    #: a wrong value that needs its inputs' aliasing to change between calls, wherever it
    #: shows (``fuzzer.triage.aliasing``)
    ALIASING = "aliasing"
    #: a cause the probes show, whatever it shows as (``fuzzer.triage.causes``)
    CAUSE = "cause"


def _blame(key: BugKey) -> tuple[str, str]:
    """The stage a key names, and what inside it ("": nothing)."""
    where, _, inner = key.blame.partition(" ")[0].partition(":")
    return where, inner


def shape_of(key: BugKey, kind: str, bug_class: BugClass, backend: str) -> Shape | None:
    """How a key of a finding of ``kind`` and ``bug_class`` (found on ``backend``) is
    checked, or None: a key of another family, or one recognition cannot check."""
    if kind in contract.PROCESS_KINDS:
        return None
    if key.family == causes.FAMILY and key.blame in causes.BY_NAME:
        return Shape.CAUSE
    if key.family != family(bug_class):
        return None
    if key.blame in (f"{aliasing.BLAME}{shapes}{aliasing.MARK}" for shapes in ("", DYNAMIC_ONLY)):
        return Shape.ALIASING if kind in VALUE_KINDS else None
    where, inner = _blame(key)
    if where not in stage.stages_for(kind, backend):
        return None
    if not inner and where != INDUCTOR and not bisect.bisects(where):
        return Shape.STAGE
    if (where == INDUCTOR and kind not in contract.ERROR_KINDS and inner in switches.BY_NAME
            and inner not in rules.REGISTRIES):
        return Shape.SWITCH
    if where == INDUCTOR and kind in contract.ERROR_KINDS and bisect.available():
        return Shape.ERROR
    return None  # a pair (``a+b``), a rule (``op[rule]``), a pass or subsystem of a wrong value


def checkable(kind: str, bug_class: BugClass, backend: str, keys: Iterable[BugKey],
              shapes: Iterable[Shape] = tuple(Shape)) -> list[BugKey]:
    """The keys among ``keys`` of one of ``shapes`` that a finding of ``kind`` and
    ``bug_class``, found on ``backend``, can be checked against."""
    wanted = set(shapes)
    return [key for key in keys if shape_of(key, kind, bug_class, backend) in wanted]


def recognise(entry, keys: Iterable[BugKey], key_of: Callable[..., BugKey], budget: OracleBudget = TRIAGE.budget,
              backend: str = INDUCTOR, shapes: Iterable[Shape] = tuple(Shape),
              cuts: Callable[[Case], Iterable[Case]] = lambda case: ()) -> Culprit | None:
    """The culprit whose key is one of ``keys`` (those of ``shapes``), checked on the case
    of ``entry``, a finding's (``fuzzer.corpus.entry.Entry``: its case, kind, bug class,
    device, and the spots where it showed its bug, where each probe must see it), found
    on ``backend`` (None: none is, or the probes could not say; the finding then goes its
    usual way).

    ``key_of`` makes the key of the finding with a culprit (``bugs.key_of`` of its
    entry with ``case``, or with the case given after the culprit), so the key compared
    is made as any entry's is.  ``cuts`` gives the one-step simplifications of a case
    (``fuzzer.reduce.cuts``): a key that reads the program (:func:`reads_program`) is the
    finding's only where no cut whose key would read otherwise still shows the bug
    (:func:`minimal`).  Each candidate key is checked in turn, the probes shared: a
    compile answers once.
    """
    probe = Probe(entry.case, entry.kind, entry.bug_class, entry.device, budget, entry.spots)
    checks = _Checks(entry, probe, backend, key_of, cuts)
    try:
        for key in checkable(entry.kind, entry.bug_class, backend, keys, shapes):
            culprit = checks.check(key)
            if culprit is not None:
                return culprit
    except BudgetSpent:
        return None
    return None


class _Checks:
    """The facts a finding's keys are checked against, each asked of the probes once
    however many keys read it: the answers of each compile, what each showed, whether
    the bug needs its inputs' aliasing to change, the cause each stage shows, the
    locals of a failed lookup, an error's bisection."""

    def __init__(self, entry, probe: Probe, backend: str, key_of: Callable[..., BugKey],
                 cuts: Callable[[Case], Iterable[Case]]) -> None:
        self.probe, self.backend, self.key_of, self.cuts = probe, backend, key_of, cuts
        self.case, self.kind, self.bug_class = entry.case, entry.kind, entry.bug_class
        self.answers: dict[tuple[str, str, bool], Outcome] = {}
        self.shown: dict[tuple[str, str, bool], tuple[str, ...]] = {}  # what each compile showed
        self.named: dict[str, tuple[str, ...]] = {}
        self.blamed: list[bisect.Bisection | None] = []  # an error's bisection, made once
        self.changes: dict[tuple[str, Outcome], str] = {}  # whether the bug needs its aliasing to change
        self.caused: dict[str, str] = {}  # the cause the probes show on a stage (``fuzzer.triage.causes``)
        self.possible = ("", self.case.program.mode.window_calls) if aliasing.asked(self.case, self.kind) else ("",)

    def outcome(self, where: str, name: str | None = None, dynamic: bool = True) -> Outcome:
        """The answer on ``where`` with switch ``name`` thrown (None: none), asked once."""
        asked = (where, name or "", dynamic)
        if asked not in self.answers:
            patch = switches.BY_NAME[name].patch if name else None
            self.answers[asked] = self.probe.outcome(where, patch, dynamic=dynamic)
            self.shown[asked] = self.probe.seen
        return self.answers[asked]

    def check(self, key: BugKey) -> Culprit | None:
        """The culprit that makes the finding a case of ``key``, or None."""
        shape = shape_of(key, self.kind, self.bug_class, self.backend)
        if shape is Shape.CAUSE:
            culprit = _by_cause(key.blame, self.case, self.kind, self.backend, self.outcome, self.probe, self.shown)
            return culprit if culprit is not None and self.key_of(culprit) == key else None
        placed = self._placed(key, shape)
        if placed is None:
            return None
        where, found = placed
        static = self.outcome(where, dynamic=False)
        dynamic_only = {Outcome.GONE: True, Outcome.STAYS: False}.get(static)
        if shape is Shape.ERROR and key.blame.endswith(DYNAMIC_ONLY) is not bool(dynamic_only):
            return None  # the shapes disagree: no bisection can make the key
        if (where, static) not in self.changes:
            self.changes[(where, static)] = aliasing.needed(self.probe, where, static is Outcome.STAYS)
        if where not in self.caused:  # a cause the probes show would be the key instead
            self.caused[where] = "" if self.changes[(where, static)] else causes.shown(self.probe, where)
        if self.caused[where]:
            return None
        culprit = self._culprit(where, found, dynamic_only, self.changes[(where, static)], shape)
        if self.key_of(culprit) == key and minimal(key, culprit, self.case, self.key_of, self.cuts(self.case),
                                                   self.probe):
            return culprit
        return None

    def _placed(self, key: BugKey, shape: Shape) -> tuple[str, dict[str, str]] | None:
        """The stage ``key`` is checked on and, for a switch's key, the switches' answers
        that make its blame; None where the probes cannot make the key there (the first
        stage that shows the bug is another, a later switch removes it)."""
        where, inner = _blame(key)
        if shape is Shape.ALIASING:
            if not aliasing.asked(self.case, self.kind):
                return None
            where = next(name for name in stage.stages_for(self.kind, self.backend)
                         if name == self.backend or self.outcome(name) is Outcome.STAYS)
        if not _reachable(key, where, self.kind, self.bug_class, self.key_of, self.possible):
            return None
        if not _first_stage(where, self.kind, self.backend, self.outcome):
            return None
        found: dict[str, str] | None = {}
        if shape is Shape.SWITCH:
            found = _switches_for(inner, self.outcome)
        return None if found is None else (where, found)

    def _culprit(self, where: str, found: dict[str, str], dynamic_only: bool | None, changes: str,
                 shape: Shape) -> Culprit:
        """The culprit the probes' answers make on ``where``: a failed lookup's locals
        and an error's bisection asked where its key needs them."""
        if self.kind in contract.ERROR_KINDS and lookup.missed(self.bug_class) and where not in self.named:
            self.named[where] = lookup.probe_lookup(self.probe, where)
        bisection = None
        if shape is Shape.ERROR:
            if not self.blamed:
                self.blamed.append(bisect.bisect(self.probe, INDUCTOR, applications=False))
            bisection = self.blamed[0]
        return Culprit(stage=where, kind=self.kind, switches=found, dynamic_only=dynamic_only,
                       aliasing_changes=changes,
                       subsystem=bisection.subsystem if bisection else None,
                       pass_name=bisection.application if bisection else None,
                       oracle_calls=self.probe.calls, seconds=self.probe.seconds,
                       torch_version=torch.__version__, key_only=True, named_by=self.named.get(where, ()),
                       otherwise=_otherwise(where, self.kind, self.backend, self.shown))


def _by_cause(name: str, case: Case, kind: str, backend: str, outcome: Callable[..., Outcome], probe: Probe,
              shown: dict) -> Culprit | None:
    """The culprit of a finding whose bug is cause ``name`` by its probes, on the first stage
    that shows the bug (None: the cause does not apply there, or its probes do not show it)."""
    where = next(stage_name for stage_name in stage.stages_for(kind, backend)
                 if stage_name == backend or outcome(stage_name) is Outcome.STAYS)
    cause = causes.BY_NAME[name]
    if not cause.applies(case, kind, where) or not cause.shown(probe, where):
        return None
    return Culprit(stage=where, kind=kind, cause=name, oracle_calls=probe.calls, seconds=probe.seconds,
                   torch_version=torch.__version__, key_only=True, otherwise=_otherwise(where, kind, backend, shown))


#: where a key's part read off the program starts, its last (``bugs.key_of``: ``{does ...}``,
#: ``{buffers ...}``), after every part the probes answer
PROGRAM_PART = " {"
#: how a key says its bug needs dynamic shapes (``Culprit.key``)
DYNAMIC_ONLY = " [dynamic shapes only]"


def _otherwise(where: str, kind: str, backend: str,
               shown: dict[tuple[str, str, bool], tuple[str, ...]]) -> dict[str, tuple[str, ...]]:
    """The stages before ``where`` that were not clean, with what they showed, as the
    stage walk keeps them (``Culprit.otherwise``): a bug the known one masks there is
    still found (``fuzzer.campaign.masked``), not counted with it."""
    walked = stage.stages_for(kind, backend)
    return {name: shown[(name, "", True)] for name in walked[:walked.index(where)] if shown.get((name, "", True))}


def _reachable(key: BugKey, where: str, kind: str, bug_class: BugClass, key_of: Callable[[Culprit], BugKey],
               changes: Iterable[str]) -> bool:
    """Whether some answer of the probes could make ``key``, a key that names ``where``
    alone: there, only static shapes, whether the bug needs its inputs' aliasing to
    change (one of ``changes``) and a failed lookup's locals (not guessed here) are
    asked, so a key that none of their answers makes (a wrong value keyed by what
    its 1-minimal program does, which the finding's program does more of) is passed
    over without a compile; so is a switch's key whose buffers, read off the program,
    are not the finding's."""
    inner = _blame(key)[1]
    if inner in switches.BY_NAME and reads_program(key):
        # what the program tells of its buffers (``bugs.buffers_told``) reads no probe
        guessed = key_of(Culprit(stage=where, kind=kind, switches={inner: Outcome.GONE.value})).blame
        return guessed[guessed.rfind(PROGRAM_PART):] == key.blame[key.blame.rfind(PROGRAM_PART):]
    if inner or lookup.missed(bug_class):
        return True  # a switch's key reads the probes' answers throughout
    return any(key_of(Culprit(stage=where, kind=kind, dynamic_only=shapes, aliasing_changes=change)) == key
               for shapes in (True, False) for change in changes)


def reads_program(key: BugKey) -> bool:
    """Whether ``key`` reads the program as well as the probes (:data:`PROGRAM_PART`)."""
    return PROGRAM_PART in key.blame


def minimal(key: BugKey, culprit: Culprit, case: Case, key_of: Callable[..., BugKey], cuts: Iterable[Case],
            probe: Probe) -> bool:
    """Whether ``key`` (``case``'s with ``culprit``), where it reads the program
    (``{does ...}``, ``{buffers ...}``), reads what the finding's 1-minimal program would:
    no cut of the program whose key reads otherwise still shows the bug on the culprit's
    stage.  Such a part names what the bug needs only on a 1-minimal program; on a larger
    one a finding of another bug whose program does more than it needs can read as a
    held one.  A key-only triage of a repeat asks the same (``campaign.entries``)."""
    if not reads_program(key):
        return True
    for cut in cuts:
        if key_of(culprit, cut) != key and probe.outcome(culprit.stage, case=cut) is Outcome.STAYS:
            return False
    return True


def _first_stage(where: str, kind: str, backend: str, outcome: Callable[..., Outcome]) -> bool:
    """Whether ``where`` is the first stage that shows the bug (as ``stage.walk`` says):
    no stage before it does, and it does (on the finding's own backend, known: the case
    was judged so already)."""
    walked = stage.stages_for(kind, backend)
    for name in walked[:walked.index(where)]:
        if outcome(name) is Outcome.STAYS:
            return False
    return where == backend or outcome(where) is Outcome.STAYS


def _switches_for(blamed: str, outcome: Callable[..., Outcome]) -> dict[str, str] | None:
    """The switches' outcomes that make ``blamed`` the blame, or None as soon as one
    says otherwise: ``blamed`` thrown removes the bug, no switch after it does, and
    each rewriting switch before it is asked (the key names those that remove it)."""
    order = [s.name for s in switches.available()]
    if blamed not in order:
        return None
    at = order.index(blamed)
    found = {blamed: outcome(INDUCTOR, blamed).value}
    if found[blamed] != Outcome.GONE.value:
        return None
    for name in order[at + 1:]:
        found[name] = outcome(INDUCTOR, name).value
        if found[name] == Outcome.GONE.value:
            return None  # a later switch removes it: the blame is that one
    for name in order[:at]:
        if switches.BY_NAME[name].role is switches.Role.REWRITES:
            found[name] = outcome(INDUCTOR, name).value
    return found
