"""From a program to its findings' corpus entries, as a campaign's config says: the
program's case and trial (its trial kind's, ``fuzzer.judge.kinds``), each finding's
entry unshrunk, shrunk, triaged, or triaged first and only counted.  The in-process
loop (``fuzzer.campaign.session``) and the workers (``fuzzer.campaign.worker``) both
make entries here, so an entry is made one way."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Mapping

from fuzzer.campaign import masked as masking
from fuzzer.campaign.config import Config
from fuzzer.campaign.hints import hints_for
from fuzzer.corpus.bugs import BugKey
from fuzzer.corpus.bugs import key_of as bug_key
from fuzzer.corpus.bugs import separates
from fuzzer.corpus.entry import Entry, Origin
from fuzzer.internal import TRIAGE as TRIAGE_STAGE
from fuzzer.internal import InternalError
from fuzzer.judge import contract, kinds, targets
from fuzzer.judge.contract import Verdict
from fuzzer.judge.trial import Finding, TrialResult
from fuzzer.limits import TRIAGE
from fuzzer.program.ir import Case
from fuzzer.reduce.cuts import cuts
from fuzzer.reduce.shrinker import shrink
from fuzzer.triage import causes, within
from fuzzer.triage.culprit import triageable
from fuzzer.triage.family import family
from fuzzer.triage.probe import BudgetSpent, OutdatedClass, Outcome, Probe
from fuzzer.triage.recognise import Shape, checkable, minimal, reads_program, recognise


def case_of(pseed: int, config: Config) -> Case:
    """Program ``pseed`` as the config's trial kind draws it."""
    return kinds.get(config.trial).case(pseed, config)


def trial_of(pseed: int, config: Config) -> TrialResult:
    """Program ``pseed`` tried as the config's trial kind tries it."""
    return kinds.get(config.trial).trial(pseed, config)


def oracle_of(finding: Finding | Entry, config: Config) -> Callable[[Case], Verdict]:
    """What judges a candidate of ``finding`` afresh, as its trial kind does (a new
    compile here, or a new cache pair with the finding's variant)."""
    return kinds.oracle(finding, finding.device, finding.backend, config.fault, config.side_threads)


def found_entry(finding: Finding, seed: int | None, config: Config) -> Entry:
    """The corpus entry of a finding as the trial confirmed it, unshrunk."""
    return Entry.build(finding.kind, finding.case, finding.divergences, origin_of(finding, seed, config))


def origin_of(finding: Finding, seed: int | None, config: Config) -> Origin:
    """Where, how and when ``finding`` was made, as its entries keep it."""
    return Origin(seed=seed, device=finding.device, backend=finding.backend, fault=config.fault,
                  target=finding.target, variant=finding.variant)


def entry_for(finding: Finding, seed: int | None, config: Config,
              judge: Callable[[Case], Verdict] | None = None, seconds_left: float | None = None,
              errors: list[InternalError] | None = None, held: Mapping[BugKey, int] | None = None) -> Entry:
    """The corpus entry of a finding, shrunk (``held``: the bugs held, whose keys give
    the shrink its hints, ``hints_for``) then triaged as the config says (dcefuzz's own
    errors on the way are added to ``errors``)."""
    start = time.monotonic()
    entry = shrunk_entry(finding, seed, config, judge, seconds_left, errors, hints_for(finding, held or {}))
    return triaged(entry, config, None if seconds_left is None else seconds_left - (time.monotonic() - start),
                   errors)


def triaged(entry: Entry, config: Config, seconds_left: float | None = None,
            errors: list[InternalError] | None = None, key_only: bool = False) -> Entry:
    """``entry`` with its culprit, when the config asks for triage and time is left.

    Crashes and timeouts are not triaged in-process (a probe that kills the process
    would take the triage with it), nor findings of a backend that is not one of
    torch's debugging stages (``fuzzer.triage.stage.STAGES``: no stage walk leads to it).
    A triage that dcefuzz's own code breaks leaves the entry untriaged, the error in
    ``errors``.
    """
    budget = config.triage_budget.within(seconds_left)
    if not config.triage or not triageable(entry.kind, entry.backend) or budget.seconds <= 0:
        return entry
    try:
        entry.culprit = culprit_of(entry, entry.device, budget, config.fault, config.side_threads, key_only)
    except Exception as exc:  # noqa: BLE001 - our error: the entry is saved untriaged
        if errors is None:
            raise
        errors.append(InternalError.of(TRIAGE_STAGE, exc))
    return entry


def culprit_of(entry: Entry, device: str, budget, fault: str | None = None, threads: int | None = None,
               key_only: bool = False):
    """The culprit of ``entry``'s bug: through its own target where that is ``compile``,
    else through ``compile`` where its case shows the bug there too
    (:func:`shows_through_compile`), marked so (``Culprit.via``), else within its
    target's pipeline where that has pieces to walk (``fuzzer.triage.within``; None:
    nothing localises it)."""
    if entry.target == targets.DEFAULT:
        return kinds.of(entry.kind).culprit(entry, device, budget, fault, threads, key_only)
    if not shows_through_compile(entry, budget, device):
        return within.localise(entry, device, budget) if within.walks(entry.target) else None
    culprit = kinds.of(entry.kind).culprit(entry, device, budget, fault, threads, key_only)
    return dataclasses.replace(culprit, via=targets.DEFAULT) if culprit is not None else None


def shows_through_compile(entry: Entry, budget, device: str | None = None) -> bool:
    """Whether a finding of another target (``export``, ``aoti``, ``compiled-autograd``)
    shows its bug through ``compile`` too, one fresh compile of its case: then it is
    localised there, with torch's debugging backends and switches, and keyed as that bug,
    one bug whatever target found it (``bugs.Bug.targets`` lists them).  A program
    kind's only: a cache pair's or a death's case is not run so.  Where ``compile``
    raises an error its class names otherwise (an ``export`` or ``aoti`` entry saved
    before their errors were placed by torch's frame, classed by its message, which
    reads as an older dcefuzz's), compile does not show *this* class: the finding stays
    its target's own, never merged with a bug of another class."""
    if kinds.of(entry.kind).name != kinds.PROGRAM or entry.kind in contract.PROCESS_KINDS:
        return False
    probe = Probe(entry.case, entry.kind, entry.bug_class, device or entry.device, budget, entry.spots)
    try:
        return probe.outcome(entry.backend) is Outcome.STAYS
    except OutdatedClass:
        return False


def counted_only(finding: Finding, seed: int | None, config: Config, held: dict[BugKey, int],
                 seconds_left: float | None = None, errors: list[InternalError] | None = None,
                 judge: Callable[[Case], Verdict] | None = None) -> Entry | None:
    """A finding of a bug the corpus holds, classified cheaply: it would only be
    counted, or kept as another example of its bug, so it is not shrunk in full (None:
    any other finding).

    Most findings of a campaign are of bugs it has found before, and a full shrink
    (up to 150 fresh compiles) is wasted on one that will only be counted, or that
    shows where else a bug appears when its first example, shrunk in full, is its
    repro.  The culprit with the bug class is all a bug's key needs: so a finding
    whose family (``fuzzer.triage.family``) has a bug held (``held``:
    ``Examples.held``, and the bugs known upstream) is first recognised where its
    bug's key can be checked fact by fact (``fuzzer.triage.recognise``), on its case
    cut after the last binding its class reads (``own_bindings``): on the program as
    found where the key is a stage before Inductor (``AS_FOUND``) and the finding
    would only be counted; else it is shrunk a little (``TRIAGE.repeat_shrink_calls``
    candidates, judged by ``judge`` where given, else its oracle) and recognised on
    what that reached, and else triaged with only the probes its key needs
    (``localise(key_only=True)``; not where recognition checked every held bug of its
    family, whose keys that triage could then not match either).  It is shrunk in
    full (and triaged again in full) only if its bug is not held, or its key cannot
    tell causes apart (``bugs.separates``).  One smaller than the largest example of a
    bug with its examples takes that example's place as the short shrink left it
    (``Examples.save``), as the examples after the first are kept: a full shrink and
    triage of each such finding was the dearest program of a 15-minute campaign's
    known bugs (55 s of 117 compiles, ``benchmarks/timesplit.py``), and the first
    example, shrunk in full, stays the bug's repro.  Where nothing shrinks a finding a
    little (a cache pair), it is shrunk in full to be another example or to take one's
    place, as a new one is.  Why the short shrink: :func:`_shrunk_a_little`.
    """
    if not config.triage:
        return None
    finding = own_bindings(finding)
    entry = found_entry(finding, seed, config)
    # a finding only counted (a bug with its examples, or known upstream) may be told on
    # its program as found; one kept as another example (``held`` 0) is shrunk a little
    # first, so that the example saved is the smaller program, and where nothing shrinks
    # it a little (a pair, a backend of no stage) it is shrunk in full, as a new one is
    counted = {key: largest for key, largest in held.items() if largest or key in config.known}
    unshrunk = config.shrink and not _shrinks_a_little(finding)
    if unshrunk:
        held = counted
    if not _candidates(finding, entry, held):
        return None  # no held bug of its family, nor a cause that applies: it is shrunk whatever its culprit
    known = _recognised(finding, entry, config, counted, seconds_left, errors, AS_FOUND)
    if known is not None:
        return known  # checked on the program as found
    shrunk = _shrunk_a_little(finding, entry, seed, config, judge, seconds_left, errors, hints_for(finding, held))
    known = _recognised(finding, shrunk, config, held, seconds_left, errors,
                        tuple(Shape) if shrunk.case != entry.case else (Shape.SWITCH, Shape.ERROR))
    if known is not None:
        return known
    return _repeat_by_key(finding, shrunk, config, held, unshrunk, seconds_left, errors)


def _repeat_by_key(finding: Finding, entry: Entry, config: Config, held: dict[BugKey, int], unshrunk: bool,
                   seconds_left: float | None, errors: list[InternalError] | None) -> Entry | None:
    """``entry`` (``finding``'s, as the short shrink left it) triaged for its key alone, where
    recognition could not tell it: a repeat where that key is a held one that tells causes
    apart, read off what its 1-minimal program would be; else None (not where recognition
    checked every held bug of its family, nor where ``unshrunk``, nothing shrinking it a
    little, it is smaller than the held bug's largest example)."""
    if _all_checkable(finding, entry, held):
        return None  # a key-only triage could match none of them: recognition checked them all
    entry = triaged(entry, config, seconds_left, errors, key_only=True)
    key = bug_key(entry)
    if not separates(entry):
        return None  # its key cannot tell its bug from another: never taken for a repeat
    if key not in held or (unshrunk and entry.statements < held[key]):
        return None  # a finding nothing shrinks a little takes an example's place shrunk in full
    if not _read_off_minimal(entry, key, config, seconds_left, errors):
        return None  # its program does more than its bug needs: its own key may be another
    return entry


#: the keys recognition checks on a repeat's program as found, before any shrink: a
#: stage before Inductor (no compile of Inductor).  Not an error on Inductor: a probe
#: that shows it stops where it is raised, but that can be late in Inductor, and on a
#: whole program a campaign's repeats paid 2 s a probe (18 CPU s for one repeat, 13
#: probes) where the short shrink first had cost less (``benchmarks/timesplit.py``)
AS_FOUND = (Shape.STAGE,)


def own_bindings(finding: Finding) -> Finding:
    """``finding`` with its case cut after the last binding its bug class reads: the
    first that showed an error (an error is classed by its first divergence,
    ``contract.bug_class``), the last that showed any other kind.

    Bindings run in order through one compiled function, so what a binding shows
    depends only on the bindings before it (``fuzzer.judge.trial``, whose confirmation
    replays a case cut so): the cut case shows the divergences its class is made of,
    the same experiment without the later bindings' runs and recompiles.  A compile
    error raises again, a compile again, on every later binding, so a probe of the
    whole case compiles a program once a binding where the first compile says all."""
    if kinds.of(finding.kind).name != kinds.PROGRAM or finding.kind in contract.PROCESS_KINDS:
        return finding  # a cache pair's or a death's bindings are not run so
    seen = [d.binding for d in finding.divergences]
    if not seen:
        return finding
    last = min(seen) if finding.kind in contract.ERROR_KINDS else max(seen)
    if last + 1 >= len(finding.case.bindings):
        return finding
    case = dataclasses.replace(finding.case, bindings=finding.case.bindings[:last + 1])
    return dataclasses.replace(finding, case=case, divergences=[d for d in finding.divergences if d.binding <= last])


def _shrinks_a_little(finding: Finding) -> bool:
    """Whether a finding gets the short shrink before it is classified: of the plain
    trial (a cache pair's candidate costs two cold processes), on one of torch's stages."""
    return kinds.of(finding.kind).name == kinds.PROGRAM and triageable(finding.kind, finding.backend)


def _recognisable(finding: Finding) -> bool:
    """Whether a finding's repeats may be recognised (``fuzzer.triage.recognise``): of
    the plain trial, and on one of torch's stages."""
    return (kinds.of(finding.kind).name == kinds.PROGRAM and finding.target == targets.DEFAULT
            and triageable(finding.kind, finding.backend))


def _all_checkable(finding: Finding, entry: Entry, held: dict[BugKey, int]) -> bool:
    """Whether recognition checked every ``held`` bug of the finding's family: then a
    key-only triage, whose key is made from the same probes' answers, could match none
    that recognition did not."""
    if not _recognisable(finding):
        return False
    keys = _candidates(finding, entry, held)
    return len(checkable(finding.kind, entry.bug_class, finding.backend, keys)) == len(keys)


def _candidates(finding: Finding, entry: Entry, held) -> list[BugKey]:
    """The held keys ``finding`` may be: those of its family, and those of a cause that
    applies to its program (``fuzzer.triage.causes``: a cause's key spans families)."""
    fam = family(entry.bug_class)
    out = []
    for key in held:
        cause = causes.BY_NAME.get(key.blame) if key.family == causes.FAMILY else None
        if key.family == fam or (cause is not None and cause.applies(finding.case, finding.kind, finding.backend)):
            out.append(key)
    return out


def _recognised(finding: Finding, entry: Entry, config: Config, held: dict[BugKey, int],
                seconds_left: float | None, errors: list[InternalError] | None,
                shapes: tuple[Shape, ...]) -> Entry | None:
    """``entry`` with the culprit that makes it a repeat of one of the ``held`` bugs
    whose key is of ``shapes``, checked on its program
    (``fuzzer.triage.recognise``: the facts the bug's key reads, each with its probe);
    None where that cannot be told so (another shape of key, another trial kind, a
    probe that disagrees)."""
    budget = config.triage_budget.within(seconds_left)
    if not _recognisable(finding) or budget.seconds <= 0:
        return None
    keys = list(held)
    try:
        culprit = recognise(entry, keys,
                            lambda c, case=entry.case: bug_key(dataclasses.replace(entry, culprit=c, case=case)),
                            budget, finding.backend, shapes, cuts)
    except Exception as exc:  # noqa: BLE001 - our error: the finding goes its usual way
        if errors is None:
            raise
        errors.append(InternalError.of(TRIAGE_STAGE, exc))
        return None
    if culprit is None:
        return None
    known = dataclasses.replace(entry, culprit=culprit)
    return known if separates(known) and bug_key(known) in held else None


def _read_off_minimal(entry: Entry, key: BugKey, config: Config, seconds_left: float | None,
                      errors: list[InternalError] | None) -> bool:
    """Whether ``key``, made by a key-only triage of ``entry`` (not shrunk in full), reads
    what its 1-minimal program would where it reads the program (``recognise.minimal``:
    no cut whose key differs still shows the bug); the answer where time or our own code
    fails is no."""
    if not reads_program(key) or entry.culprit is None or entry.culprit.stage is None:
        return not reads_program(key)
    budget = config.triage_budget.within(seconds_left)
    probe = Probe(entry.case, entry.kind, entry.bug_class, entry.device, budget, entry.spots)
    try:
        return minimal(key, entry.culprit, entry.case,
                       lambda c, case: bug_key(dataclasses.replace(entry, culprit=c, case=case)), cuts(entry.case),
                       probe)
    except BudgetSpent:
        return False
    except Exception as exc:  # noqa: BLE001 - our error: the finding is shrunk in full, as a new one
        if errors is None:
            raise
        errors.append(InternalError.of(TRIAGE_STAGE, exc))
        return False


def _shrunk_a_little(finding: Finding, entry: Entry, seed: int | None, config: Config,
                     judge: Callable[[Case], Verdict] | None, seconds_left: float | None,
                     errors: list[InternalError] | None, hints: tuple[Case, ...] = ()) -> Entry:
    """``entry`` after ``TRIAGE.repeat_shrink_calls`` shrink candidates at most, ``hints``
    first (itself where the config does not shrink, its kind is not the plain trial's, it
    is not triageable, or nothing smaller showed the bug).

    The short shrink pays twice.  A key-only triage is 3 to 23 compiles, and each
    compiles the program it is given: of the unshrunk one, about 1.5 s each.  And a
    bug's key is made from a shrunk program when the bug is first found; the same
    probes on the unshrunk program can answer otherwise (a compile error that is
    dynamic-shapes-only once the rest of the program is gone), and such a repeat
    then paid a full shrink as if it were a new bug.  Only findings of the plain
    trial are shrunk first (a cache pair's candidate costs two cold processes), and
    only where the config shrinks at all."""
    if not (config.shrink and _shrinks_a_little(finding)):
        return entry
    full = kinds.of(finding.kind).shrink_budget(config).within(seconds_left)
    budget = dataclasses.replace(full, oracle_calls=min(full.oracle_calls, TRIAGE.repeat_shrink_calls))
    if budget.seconds <= 0:
        return entry
    result = shrink(finding, budget, judge=judge or oracle_of(finding, config), confirm=False, hints=hints)
    if errors is not None:
        errors += result.errors
    if result.case == finding.case:
        return entry
    return Entry.build(finding.kind, result.case, result.divergences, origin_of(finding, seed, config),
                       shrink=result.record())


def shrunk_entry(finding: Finding, seed: int | None, config: Config,
                 judge: Callable[[Case], Verdict] | None = None, seconds_left: float | None = None,
                 errors: list[InternalError] | None = None, hints: tuple[Case, ...] = ()) -> Entry:
    """The corpus entry of a finding, shrunk first when the config says so (``hints``
    first: ``hints_for``).

    ``judge`` replaces the shrinker's oracle (a campaign worker's announces each
    candidate to the parent before running it).  ``seconds_left`` is the campaign's
    time left (None: no time budget): the shrink gets no more, and none at all when
    it is spent, so the finding is saved as the trial confirmed it.
    """
    budget = kinds.of(finding.kind).shrink_budget(config).within(seconds_left)
    if not config.shrink or budget.seconds <= 0:
        return found_entry(finding, seed, config)
    result = shrink(finding, budget, judge=judge or oracle_of(finding, config), hints=hints)
    if errors is not None:
        errors += result.errors
    if not result.confirmed:
        return found_entry(finding, seed, config)
    return Entry.build(finding.kind, result.case, result.divergences, origin_of(finding, seed, config),
                       shrink=result.record())


def masked_entries(entries: list[Entry], seed: int | None, config: Config, held: dict[BugKey, int],
                   seconds_left: Callable[[], float | None] = lambda: None,
                   errors: list[InternalError] | None = None,
                   judge_for: Callable[[Finding], Callable[[Case], Verdict]] | None = None) -> list[Entry]:
    """The entries of the bugs that ``entries``' bugs mask in their program
    (``fuzzer.campaign.masked``): each found on the stage its triage saw it on, then
    counted or shrunk and triaged as any finding is.  ``judge_for`` gives a finding's
    shrink its judge (a worker's announces each candidate); ``seconds_left`` is asked
    afresh before each.  A new bug behind a known one is yielded, not counted with it."""
    if not config.triage:
        return []
    out = []
    for entry in entries:
        try:
            found = masking.masked(entry, config.backend)
        except Exception as exc:  # noqa: BLE001 - our error: the entry stands, nothing more is found
            if errors is None:
                raise
            errors.append(InternalError.of(TRIAGE_STAGE, exc))
            continue
        for finding in found:
            judge = judge_for(finding) if judge_for is not None else None
            out.append(counted_only(finding, seed, config, held, seconds_left(), errors, judge)
                       or entry_for(finding, seed, config, judge, seconds_left(), errors, held))
    return out
