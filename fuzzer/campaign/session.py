"""A campaign: generate, try, shrink and save, program after program, within a budget.

Program ``i`` of a campaign with seed ``S`` is ``generate(program_seed(S, i))``: any
program can be regenerated from the seed and its index alone.  Each confirmed
finding is shrunk (unless disabled) and saved the moment it is ready, atomically,
one entry per signature, so stopping the campaign at any point loses nothing
already found.
"""

from __future__ import annotations

import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from fuzzer import faults
from fuzzer.cache import blame
from fuzzer.cache import trial as cache_trial
from fuzzer.campaign.state import BadState, CampaignFolder, CampaignState, Shard
from fuzzer.corpus import store
from fuzzer.corpus.entry import BadEntry, Entry
from fuzzer.corpus.examples import Examples, Kept
from fuzzer.internal import INTERNAL_ERROR, InternalError
from fuzzer.internal import TRIAGE as TRIAGE_STAGE
from fuzzer.internal import TRIAL as TRIAL_STAGE
from fuzzer.judge import contract
from fuzzer.judge.contract import Verdict
from fuzzer.judge.trial import FLAKY, UNTESTED, Finding, TrialResult, run_trial
from fuzzer.limits import CACHE, CAMPAIGN, TRIAGE
from fuzzer.program.generate import BUILTIN, OpSet, generate, program_seed
from fuzzer.program.ir import Case
from fuzzer.reduce.shrinker import ShrinkBudget, shrink
from fuzzer.triage.bugs import key_of as bug_key
from fuzzer.triage.culprit import triageable
from fuzzer.triage.family import family
from fuzzer.triage.probe import TriageBudget


@dataclass
class Budget:
    """Stop after ``seconds`` or ``programs``, whichever comes first (None: no limit)."""

    seconds: float | None = None
    programs: int | None = None

    def spent(self, elapsed: float, done: int) -> bool:
        return ((self.seconds is not None and elapsed >= self.seconds)
                or (self.programs is not None and done >= self.programs))


@dataclass(frozen=True)
class Config:
    seed: int
    device: str
    corpus_dir: str
    backend: str = "inductor"
    shrink: bool = True
    shrink_budget: ShrinkBudget = ShrinkBudget()
    fault: str | None = None
    #: localise each finding once shrunk (``fuzzer.triage.culprit``)
    triage: bool = True
    triage_budget: TriageBudget = TriageBudget()
    #: example entries kept per bug; further findings of it only count
    examples_per_bug: int = TRIAGE.examples_per_bug
    #: run each program as a cache pair (``fuzzer.cache``) instead of a trial
    cache_pairs: bool = False
    #: torch threads of each cache-pair side (None: torch's default)
    side_threads: int | None = None
    #: (feature, weight) pairs the programs are drawn with (``fuzzer.program.features``)
    features: tuple = ()
    #: the custom ops programs may call: dcefuzz's own and the user's (``--ops``)
    ops: OpSet = BUILTIN
    #: the user ops' declaration findings (``fuzzer.user.audit``), counted once
    #: when the campaign starts
    declarations: int = 0

    @property
    def feature_table(self) -> dict[str, float]:
        return dict(self.features)

    @property
    def op_table(self) -> dict:
        """The ops as the campaign's state records them (empty: dcefuzz's own)."""
        if self.ops == BUILTIN:
            return {}
        return {"builtin": self.ops.builtin, "user": list(self.ops.user)}


@dataclass
class Stats:
    """Counts of one campaign run, on top of those of the runs it resumes."""

    base: CampaignState
    run_programs: int = 0
    seconds: float = 0.0
    findings: Counter = field(default_factory=Counter)
    statuses: Counter = field(default_factory=Counter)
    saved: list[str] = field(default_factory=list)
    repeats: int = 0
    next_index: int = 0
    done_above: list[int] = field(default_factory=list)
    #: (program index, seconds since start) of the first finding of each kind
    first: dict = field(default_factory=dict)
    #: findings refused by the campaign's filter, by kind
    ignored: Counter = field(default_factory=Counter)
    last_entry: Entry | None = None
    #: dynamo recompilations over this run's programs
    recompiles: int = 0
    #: ids of the entries this run found (new or repeated): its unique signatures
    signatures: set[str] = field(default_factory=set)
    #: programs not wholly compiled and with no finding, by the first reason
    untested: Counter = field(default_factory=Counter)
    #: programs stopped unfinished at the end of the time budget: not counted, so a
    #: resumed campaign runs them again
    stopped: int = 0
    #: ids of the bugs this run hit, and of those new to the corpus
    bugs: set[str] = field(default_factory=set)
    new_bugs: set[str] = field(default_factory=set)
    #: findings of a bug that already had its examples: counted, not saved
    counted: int = 0
    #: the corpus's bugs and entries, as of the last finding
    corpus_bugs: int = 0
    corpus_entries: int = 0
    #: dcefuzz's own errors (``fuzzer.internal``) in this run, by the stage that raised
    internal: Counter = field(default_factory=Counter)
    #: where their tracebacks are (the campaign folder's ``internal-errors.jsonl``)
    internal_log: str | None = None
    #: what the programs reached that the contract judges apart (``trial.reached``)
    reached: Counter = field(default_factory=Counter)

    def __post_init__(self) -> None:
        self.next_index = self.base.next_index
        self.done_above = list(self.base.done_above)

    def count(self, status: str) -> None:
        self.run_programs += 1
        self.statuses[status] += 1

    @property
    def programs(self) -> int:
        return self.run_programs

    @property
    def rate(self) -> float:
        return self.run_programs / self.seconds if self.seconds else 0.0

    def to_state(self) -> CampaignState:
        """The state to save: the base plus this run."""
        b = self.base
        return CampaignState(
            seed=b.seed, shard=b.shard, next_index=self.next_index, done_above=list(self.done_above),
            programs=b.programs + self.run_programs, seconds=b.seconds + self.seconds,
            findings=b.findings + self.findings, statuses=b.statuses + self.statuses,
            saved=b.saved + len(self.saved), repeats=b.repeats + self.repeats,
            recompiles=b.recompiles + self.recompiles, untested=b.untested + self.untested,
            features=dict(b.features), ops=dict(b.ops), internal=b.internal + self.internal,
            reached=b.reached + self.reached)

    @property
    def mostly_untested(self) -> bool:
        """More than half of this run's programs were not wholly compiled."""
        return sum(self.untested.values()) * 2 > self.run_programs > 0

    def summary(self) -> str:
        kinds = ", ".join(f"{k} {n}" for k, n in sorted(self.findings.items())) or "none"
        lines = [
            f"programs   {self.programs} in {self.seconds:.0f}s ({self.rate * 60:.1f}/min)",
            f"findings   {kinds}",
            f"flaky      {self.statuses[FLAKY]}",
            f"invalid    {self.statuses['invalid']} (generator defects)",
            f"nondeterministic {self.statuses['nondeterministic']}",
            f"untested   {sum(self.untested.values())} (not wholly compiled, never counted clean"
            + (": " + ", ".join(f"{r} {n}" for r, n in sorted(self.untested.items())) if self.untested else "")
            + ")",
            f"bugs       {len(self.bugs)} hit ({len(self.new_bugs)} new); the corpus holds "
            f"{self.corpus_bugs} bugs in {self.corpus_entries} entries (`dcefuzz bugs`)",
            f"saved      {len(self.saved)} new entries, {self.repeats} repeat hits of known signatures, "
            f"{self.counted} hits of bugs with their examples already ({len(self.signatures)} signatures in all)",
            f"recompiles {self.recompiles} (dynamo, over every program's bindings)",
            f"reached    " + (", ".join(f"{k} {n}" for k, n in sorted(self.reached.items())) or "nothing judged apart"),
            f"stopped    {self.stopped} at the deadline (not counted: --resume runs them again)",
            f"internal   {sum(self.internal.values())} (dcefuzz's own errors, never findings"
            + (": " + ", ".join(f"{k} {n}" for k, n in sorted(self.internal.items())) if self.internal else "")
            + (f"; tracebacks in {self.internal_log}" if self.internal_log and self.internal else "") + ")",
        ]
        if self.base.programs:
            total = self.to_state()
            lines.append(f"resumed    {total.programs} programs in all, next program index {total.next_index}")
        return "\n".join(lines)


def case_of(pseed: int, config: Config) -> Case:
    """Program ``pseed`` as the config draws it (a cache pair's are its own)."""
    if config.cache_pairs:
        return cache_trial.cache_case(pseed)
    return generate(pseed, features=config.feature_table, ops=config.ops)


def trial_of(pseed: int, config: Config) -> TrialResult:
    """Program ``pseed`` tried as the config says: a trial, or a cache pair."""
    if config.cache_pairs:
        case = case_of(pseed, config)
        variant = cache_trial.variant_for(case, pseed)
        if variant is None:
            return TrialResult(UNTESTED, Verdict(contract.OK, untested=[("no-variant", "no variant applies")]))
        return cache_trial.run_cache_trial(case, variant, config.device, config.backend, fault=config.fault,
                                           threads=config.side_threads)
    return run_trial(case_of(pseed, config), config.device, config.backend)


def oracle_of(finding: Finding | Entry, config: Config) -> Callable[[Case], Verdict]:
    """What judges a candidate of ``finding`` afresh: a new compile, or for a
    stale-cache finding a new pair with the finding's variant."""
    return cache_trial.fresh_judge(finding, finding.device, finding.backend, config.fault, config.side_threads)


def found_entry(finding: Finding, seed: int | None, config: Config) -> Entry:
    """The corpus entry of a finding as the trial confirmed it, unshrunk."""
    return Entry.build(finding.kind, finding.case, finding.divergences, seed=seed, device=finding.device,
                       backend=finding.backend, fault=config.fault, variant=finding.variant)


def entry_for(finding: Finding, seed: int | None, config: Config,
              judge: Callable[[Case], Verdict] | None = None, seconds_left: float | None = None,
              errors: list[InternalError] | None = None) -> Entry:
    """The corpus entry of a finding, shrunk then triaged as the config says (dcefuzz's
    own errors on the way are added to ``errors``)."""
    start = time.monotonic()
    entry = shrunk_entry(finding, seed, config, judge, seconds_left, errors)
    return triaged(entry, config, None if seconds_left is None else seconds_left - (time.monotonic() - start),
                   errors)


def triaged(entry: Entry, config: Config, seconds_left: float | None = None,
            errors: list[InternalError] | None = None) -> Entry:
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
        entry.culprit = blame.culprit_of(entry, entry.device, budget, config.fault, config.side_threads)
    except Exception as exc:  # noqa: BLE001 - our error: the entry is saved untriaged
        if errors is None:
            raise
        errors.append(InternalError.of(TRIAGE_STAGE, exc))
    return entry


def counted_only(finding: Finding, seed: int | None, config: Config, full: dict[str, int],
                 seconds_left: float | None = None, errors: list[InternalError] | None = None) -> Entry | None:
    """A stale-cache finding of a bug that has its examples already, triaged as found:
    it would only be counted, so it is not shrunk (None: any other finding).

    A stale-cache finding's culprit costs one pair while its shrink costs a dozen,
    and the culprit with the bug class is all its bug's key needs: so it is triaged
    first, and shrunk only if its bug still wants examples or it is smaller than the
    largest one (``full``: ``Examples.full``).
    """
    if finding.kind != contract.STALE_CACHE or not config.triage:
        return None
    entry = found_entry(finding, seed, config)
    if not any(key.startswith(family(entry.bug_class) + " @ ") for key in full):
        return None  # no full bug of its family: it is shrunk whatever its culprit
    entry = triaged(entry, config, seconds_left, errors)
    key = bug_key(entry)
    return entry if key in full and entry.statements >= full[key] else None


def shrunk_entry(finding: Finding, seed: int | None, config: Config,
                 judge: Callable[[Case], Verdict] | None = None, seconds_left: float | None = None,
                 errors: list[InternalError] | None = None) -> Entry:
    """The corpus entry of a finding, shrunk first when the config says so.

    ``judge`` replaces the shrinker's oracle (a campaign worker's announces each
    candidate to the parent before running it).  ``seconds_left`` is the campaign's
    time left (None: no time budget): the shrink gets no more, and none at all when
    it is spent, so the finding is saved as the trial confirmed it.
    """
    budget = (ShrinkBudget(CACHE.shrink_calls, CACHE.shrink_seconds) if finding.kind == contract.STALE_CACHE
              else config.shrink_budget)
    budget = budget.within(seconds_left)
    if not config.shrink or budget.seconds <= 0:
        return found_entry(finding, seed, config)
    result = shrink(finding.case, finding.kind, finding.divergences, finding.device, finding.backend,
                    budget, judge=judge or oracle_of(finding, config))
    if errors is not None:
        errors += result.errors
    if not result.confirmed:
        return found_entry(finding, seed, config)
    return Entry.build(finding.kind, result.case, result.divergences, seed=seed, device=finding.device,
                       backend=finding.backend, fault=config.fault, shrink=result.record(),
                       variant=finding.variant)


def _progress_line(stats: Stats, extra: str = "") -> str:
    kinds = ", ".join(f"{k} {n}" for k, n in sorted(stats.findings.items()))
    return (f"[{stats.seconds:6.0f}s] {stats.programs} programs, {stats.rate * 60:.1f}/min, "
            f"{sum(stats.findings.values())} findings" + (f" ({kinds})" if kinds else "")
            + f", {len(stats.bugs)} bugs, {len(stats.signatures)} signatures, {len(stats.saved)} saved, "
            f"{stats.recompiles} recompiles, {sum(stats.untested.values())} untested"
            + (f", {sum(stats.internal.values())} internal errors" if stats.internal else "") + extra)


class Session:
    """The bookkeeping one campaign run shares between its engines.

    Counts, saving entries, the stream of program indices (sharded, resumed, never
    repeating a program already done), and the periodic checkpoint: state file,
    stats line, progress line.  The in-process loop below and the worker pool
    (``fuzzer.campaign.pool``) drive it the same way.
    """

    def __init__(self, config: Config, budget: Budget, shard: Shard = Shard(),
                 folder: CampaignFolder | None = None, resume: bool = False,
                 log: Callable[[str], None] | None = None,
                 progress: Callable[[str], None] | None = None):
        self.config, self.budget, self.shard, self.folder = config, budget, shard, folder
        self.log = log or (lambda line: print(line, file=sys.stderr, flush=True))
        self.progress = progress or self.log
        state = CampaignState(seed=config.seed, shard=shard, features=config.feature_table,
                              ops=config.op_table)
        if resume:
            if folder is None:
                raise BadState("resume needs a campaign folder")
            state = folder.load()
            if (state.seed, state.shard) != (config.seed, shard):
                raise BadState(f"{folder.path} holds seed {state.seed} shard {state.shard}, "
                               f"not seed {config.seed} shard {shard}")
            if state.features != config.feature_table:
                raise BadState(f"{folder.path} drew its programs with features {state.features or 'none'}, "
                               f"not {config.feature_table or 'none'}: resume with the same --features")
            if state.ops != config.op_table:
                raise BadState(f"{folder.path} drew its programs with ops {state.ops or 'dcefuzz'}, "
                               f"not {config.op_table or 'dcefuzz'}: resume with the same --ops")
        elif folder is not None:
            folder.check_unused()
        self.stats = Stats(base=state)
        if config.declarations and not resume:
            self.stats.findings["declaration"] += config.declarations
        self.examples = Examples(config.corpus_dir, config.examples_per_bug)
        self.stats.corpus_bugs, self.stats.corpus_entries = self.examples.bugs, self.examples.entries
        # the watermark is always one of this shard's own indices
        self.stats.next_index = next(shard.indices(state.next_index))
        self.done = set(state.done_above)
        self.pending = self._fresh_indices(self.stats.next_index)
        # one clock for the budget, the pool's deadlines and its workers': monotonic
        self.start = time.monotonic()
        self.last_report = self.start

    def _fresh_indices(self, start: int):
        for i in self.shard.indices(start):
            if i not in self.done:
                yield i

    def elapsed(self) -> float:
        return time.monotonic() - self.start

    def spent(self, in_flight: int = 0) -> bool:
        return self.budget.spent(self.elapsed(), self.stats.run_programs + in_flight)

    def ends_at(self) -> float | None:
        """When the time budget is spent, on ``time.monotonic``'s clock (None: no time budget)."""
        return None if self.budget.seconds is None else self.start + self.budget.seconds

    def seconds_left(self) -> float | None:
        """Seconds to the end of the time budget, negative past it (None: no time budget)."""
        end = self.ends_at()
        return None if end is None else end - time.monotonic()

    def out_of_time(self) -> bool:
        """The time budget is spent: nothing may start, nothing running is waited for."""
        left = self.seconds_left()
        return left is not None and left <= 0

    def next_program(self) -> tuple[int, int]:
        index = next(self.pending)
        return index, program_seed(self.config.seed, index)

    def internal_error(self, index: int, error: InternalError) -> None:
        """Count one of dcefuzz's own errors met on program ``index``, and keep its
        traceback in the campaign folder: our bug, never a finding."""
        self.stats.internal[error.stage] += 1
        where = ""
        if self.folder is not None:
            self.stats.internal_log = str(self.folder.log_internal(index, program_seed(self.config.seed, index),
                                                                   error))
            where = f" (traceback in {self.stats.internal_log})"
        self.log(f"[{self.elapsed():6.0f}s] program {index}: dcefuzz's own error, not a finding: "
                 f"{error.line()}{where}")

    def finished(self, index: int, status: str, entries: list[Entry],
                 recompiles: int = 0, untested: str | None = None,
                 errors: list[InternalError] = (), reached: dict | None = None) -> list[str | None]:
        """Count a finished program and save its entries (dedup by signature).

        ``untested`` is the first reason an untested program was not wholly compiled;
        ``errors`` are dcefuzz's own errors met on the way (``fuzzer.internal``),
        ``reached`` what the program reached (``trial.reached``).
        Returns, per entry, the path of a new entry, or None for a repeat hit.
        """
        for error in errors:
            self.internal_error(index, error)
        self.stats.reached.update(reached or {})
        self.stats.count(status)
        self.stats.recompiles += recompiles
        if untested is not None:
            self.stats.untested[untested] += 1
        self.done.add(index)
        paths: list[str | None] = []
        for entry in entries:
            self.stats.findings[entry.kind] += 1
            self.stats.first.setdefault(entry.kind, (index, self.elapsed()))
            saved = self.examples.save(entry)
            path, new = saved.path, saved.kept in (Kept.NEW, Kept.REPLACED)
            self.stats.signatures.add(entry.id)
            self.stats.bugs.add(saved.bug)
            if saved.new_bug:
                self.stats.new_bugs.add(saved.bug)
            if saved.removed is not None and str(saved.removed) in self.stats.saved:
                self.stats.saved.remove(str(saved.removed))
            if new:
                self.stats.saved.append(str(path))
                self.log(f"[{self.elapsed():6.0f}s] program {index}: "
                         + ("new bug " if saved.new_bug else "") + f"{saved.bug}, {saved.kept.value} "
                         f"{entry.kind} ({entry.statements} statements) -> {path}")
            elif saved.kept is Kept.COUNTED:
                self.stats.counted += 1
            else:
                self.stats.repeats += 1
            paths.append(str(path) if new else None)
            self.stats.last_entry = entry
        self.stats.corpus_bugs, self.stats.corpus_entries = self.examples.bugs, self.examples.entries
        # the watermark: every index of this shard below it is done
        mark = self.stats.next_index
        while mark in self.done:
            self.done.discard(mark)
            mark += self.shard.count
        self.stats.next_index = mark
        self.stats.done_above = sorted(self.done)
        return paths

    def replace(self, old: Entry, path: str, new: Entry) -> str:
        """Put a reduced entry in place of the saved, unshrunk ``old`` at ``path``;
        returns the path of the entry that now stands for it.

        The new entry is written before the old files go (a crash in between leaves
        both, never neither) and takes the hits the old one has on disk by now.  If
        the reduced signature is already in the corpus, the finding becomes a repeat
        hit of that entry.
        """
        if new.id == old.id:
            return str(path)
        try:
            new.hits = store.load(path).hits
        except BadEntry:
            pass
        new_path, fresh = store.save(new, self.config.corpus_dir)
        store.remove(path)
        self.examples.forget(old.id)
        self.examples.note(new, new_path)
        self.stats.signatures.discard(old.id)
        self.stats.signatures.add(new.id)
        if str(path) in self.stats.saved:
            self.stats.saved.remove(str(path))
        if fresh:
            self.stats.saved.append(str(new_path))
            self.log(f"[{self.elapsed():6.0f}s] shrunk {new.kind} ({old.statements} -> "
                     f"{new.statements} statements) -> {new_path}")
        else:
            self.stats.repeats += 1
            self.log(f"[{self.elapsed():6.0f}s] shrunk {new.kind}: a repeat of {new_path}")
        return str(new_path)

    def tick(self, extra: str = "", details: Callable[[], dict] | None = None) -> None:
        """Every progress interval: checkpoint (with ``details()`` in the stats line), report."""
        now = time.monotonic()
        if now - self.last_report >= CAMPAIGN.progress_every_s:
            self.last_report = now
            self.checkpoint(details() if details else None)
            self.progress(_progress_line(self.stats, extra))

    def checkpoint(self, details: dict | None = None) -> None:
        self.stats.seconds = self.elapsed()
        if self.folder is not None:
            snapshot = self.stats.to_state()
            self.folder.save(snapshot)
            self.folder.log_stats(snapshot, bugs=self.stats.corpus_bugs, entries=self.stats.corpus_entries,
                                  **(details or {}))


def run_campaign(config: Config, budget: Budget, log: Callable[[str], None] | None = None,
                 accept: Callable[[Finding], bool] | None = None, stop_after_findings: int | None = None,
                 shard: Shard = Shard(), folder: CampaignFolder | None = None,
                 resume: bool = False, progress: Callable[[str], None] | None = None) -> Stats:
    """Fuzz in this process until the budget is spent (or, with ``stop_after_findings``,
    that many findings are saved or counted).

    The time budget is checked between programs, and each finding's shrink gets at
    most the time left; a program that has started cannot be interrupted here (no
    process watches it), so a campaign may end past its time by one program and the
    confirmation of a shrink.  The worker pool (``fuzzer.campaign.pool``) ends on time.

    ``accept`` filters findings before the costly part: a finding it refuses is
    counted in ``stats.ignored`` and neither shrunk nor saved.  With a ``folder`` the
    campaign's state is saved there every progress interval and at the end (also on
    Ctrl-C), with one stats line each time; ``resume`` continues the stream from the
    saved state.  The budget counts this run only.  ``log`` gets events (a new
    entry), ``progress`` the periodic status line (default: ``log``).
    """
    session = Session(config, budget, shard, folder, resume, log, progress)
    stats = session.stats
    with faults.planted(config.fault):
        try:
            while not session.spent():
                index, pseed = session.next_program()
                try:
                    result = trial_of(pseed, config)
                except Exception as exc:  # noqa: BLE001 - dcefuzz's own error, never a finding
                    session.finished(index, INTERNAL_ERROR, [], errors=[InternalError.of(TRIAL_STAGE, exc)])
                    session.tick()
                    continue
                entries, errors = [], []
                for finding in result.findings:
                    if accept is not None and not accept(finding):
                        stats.ignored[finding.kind] += 1
                        continue
                    entries.append(counted_only(finding, pseed, config, session.examples.full(),
                                                session.seconds_left(), errors)
                                   or entry_for(finding, pseed, config, seconds_left=session.seconds_left(),
                                                errors=errors))
                session.finished(index, result.status, entries, result.recompiles,
                                 result.untested_reason, errors, result.reached)
                session.tick()
                if stop_after_findings is not None and sum(stats.findings.values()) >= stop_after_findings:
                    break
        except KeyboardInterrupt:
            session.log("interrupted: stopped after the last completed program")
        finally:
            session.checkpoint()
    return stats
