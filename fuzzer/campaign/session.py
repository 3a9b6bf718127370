"""A campaign: generate, try, shrink and save, program after program, within a budget.

Program ``i`` of a campaign with seed ``S`` is ``generate(program_seed(S, i))``, or
with ``--avoid-held`` the first of its redraws that holds no held bug's example
(``fuzzer.campaign.avoidance``): any program can be regenerated from the seed, its
index and the examples the campaign started with.  Each confirmed
finding is shrunk (unless disabled) and saved the moment it is ready, atomically,
one entry per signature, so stopping the campaign at any point loses nothing
already found.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from fuzzer import faults
from fuzzer.campaign import avoidance
from fuzzer.campaign.avoidance import Drawn
from fuzzer.campaign.config import Budget, Config
from fuzzer.campaign.entries import case_of, counted_only, entry_for, masked_entries, trial_of
from fuzzer.campaign.state import UNCONFIRMED_FOLDER, BadState, CampaignFolder, CampaignState, Shard, Withdrawal
from fuzzer.campaign.stats import Stats, progress_line
from fuzzer.corpus import store
from fuzzer.corpus.bugs import key_of as bug_key
from fuzzer.corpus.entry import BadEntry, Entry
from fuzzer.corpus.examples import Examples, Kept, Saved
from fuzzer.internal import INTERNAL_ERROR, InternalError
from fuzzer.internal import TRIAL as TRIAL_STAGE
from fuzzer.judge.observe import Gap
from fuzzer.judge.trial import Finding
from fuzzer.limits import CAMPAIGN
from fuzzer.program.generate import program_seed

#: what became of a finding when it is a new entry of the corpus
FRESH = (Kept.NEW, Kept.REPLACED)


@dataclass(frozen=True)
class Timing:
    """What one program cost where it ran: its trial (run, judge, confirm) and what came
    after it (the shrink, recognition and triage of its findings).  The program log's
    ``seconds`` runs from handing the program out to counting it, waits included; these
    are the worker's own clock, so what a finding costs beyond its trial is read per
    program (``benchmarks/throughput.py``, ``benchmarks/timesplit.py``), not as a
    difference of two whole runs."""

    trial: float
    after_trial: float

    @classmethod
    def of(cls, trial: float | None, total: float) -> Timing | None:
        return None if trial is None else cls(trial, max(0.0, total - trial))


@dataclass(frozen=True)
class Finished:
    """A program over, as the campaign takes it (``Session.finished``)."""

    index: int
    status: str
    entries: tuple[Entry, ...] = ()
    recompiles: int = 0
    #: the first way an untested program was not wholly compiled or judged
    untested: Gap | None = None
    #: dcefuzz's own errors met on the way (``fuzzer.internal``)
    errors: tuple[InternalError, ...] = ()
    #: what the program reached (``trial.reached``)
    reached: Mapping[str, object] = field(default_factory=dict)
    #: what it cost its worker, the trial apart (None: not measured, a program cut short)
    timing: Timing | None = None


class Session:
    """The bookkeeping one campaign run shares between its engines.

    Counts, saving entries, the stream of program indices (sharded, resumed, never
    repeating a program already done), and the periodic checkpoint: state file,
    stats line, progress line.  The in-process loop below and the worker pool
    (``fuzzer.campaign.pool``) drive it the same way.

    ``shard`` is the part of the program stream it runs; with a ``folder`` its state
    is saved there, and ``resume`` continues the stream from the state saved.  The
    budget counts this run only.  ``log`` gets events (a new entry), ``progress`` the
    periodic status line (default: ``log``).
    """

    def __init__(self, config: Config, budget: Budget, shard: Shard = Shard(),
                 folder: CampaignFolder | None = None, resume: bool = False,
                 log: Callable[[str], None] | None = None,
                 progress: Callable[[str], None] | None = None):
        self.config, self.budget, self.shard, self.folder = config, budget, shard, folder
        self.log = log or (lambda line: print(line, file=sys.stderr, flush=True))
        self.progress = progress or self.log
        state = CampaignState(seed=config.seed, shard=shard, features=config.feature_table,
                              ops=config.op_table, targets=config.targets)
        if resume:
            if folder is None:
                raise BadState("resume needs a campaign folder")
            state = folder.resume(state)
        elif folder is not None:
            folder.check_unused()
        self.stats = Stats(base=state)
        if config.declarations and not resume:
            self.stats.findings["declaration"] += config.declarations
        self.examples = Examples(config.corpus_dir, config.examples_per_bug)
        self.stats.corpus_bugs, self.stats.corpus_entries = self.examples.bugs, self.examples.entries
        #: the held bugs' examples a program is drawn again for holding (``--avoid-held``)
        self.avoidance = avoidance.start(config, set(self.held()), folder and folder.path, resume, self.log)
        # the watermark is always one of this shard's own indices
        self.stats.next_index = next(shard.indices(state.next_index))
        self.done = set(state.done_above)
        self.pending = self._fresh_indices(self.stats.next_index)
        # one clock for the budget, the pool's deadlines and its workers': monotonic
        self.start = time.monotonic()
        self.last_report = self.start
        #: each program in flight: when it was handed out and how it was made
        self.issued: dict[int, tuple[float, Drawn]] = {}

    def _fresh_indices(self, start: int):
        for i in self.shard.indices(start):
            if i not in self.done:
                yield i

    def elapsed(self) -> float:
        return time.monotonic() - self.start

    def held(self) -> dict[str, int]:
        """The bugs whose findings are classified cheaply (``entries.counted_only``):
        those of the corpus (``Examples.held``: the size of the largest example of a
        bug with its examples, else 0), and those known upstream (``Config.known``, 0)."""
        return {**self.examples.held(), **{key: 0 for key in self.config.known}}

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

    def next_program(self) -> Drawn:
        """What the next program is: its index and seed (and the draws set aside for it)."""
        index = next(self.pending)
        pseed = program_seed(self.config.seed, index)
        drawn = Drawn(index, pseed) if self.avoidance is None else self.avoidance.draw(
            self.config.seed, index, pseed, lambda seed: case_of(seed, self.config).program)
        self.issued[index] = (self.elapsed(), drawn)
        return drawn

    def _seed_of(self, index: int) -> int:
        """The seed of program ``index``'s draw that ran (its stream's own where it was
        handed out before a resume)."""
        issued = self.issued.get(index)
        return issued[1].seed if issued is not None else program_seed(self.config.seed, index)

    def internal_error(self, index: int | None, error: InternalError) -> None:
        """Count one of dcefuzz's own errors met on program ``index`` (None: on no one
        program, as in shrinking a casualty), and keep its traceback in the campaign
        folder: our bug, never a finding."""
        self.stats.internal[error.stage] += 1
        where = ""
        if self.folder is not None:
            seed = None if index is None else self._seed_of(index)
            self.stats.internal_log = str(self.folder.log_internal(index, seed, error))
            where = f" (traceback in {self.stats.internal_log})"
        on, lost = "" if index is None else f"program {index}: ", "; the device is lost" if error.device_lost else ""
        self.log(f"[{self.elapsed():6.0f}s] {on}dcefuzz's own error, not a finding: {error.line()}{where}{lost}")

    def finished(self, program: Finished) -> list[str | None]:
        """Take a finished program, the one way a program's end reaches the campaign:
        count it, save its entries (dedup by signature), log it, and move the watermark
        past it.

        Returns, per entry, the path of a new entry, or None for a repeat hit.
        """
        self._count(program)
        saved = [self._save(program.index, entry) for entry in program.entries]
        self.stats.corpus_bugs, self.stats.corpus_entries = self.examples.bugs, self.examples.entries
        compiles = compiles_of(program.recompiles, program.entries)
        self._log_program(program.index, program.status, [[s.bug, s.kept.value] for s in saved],
                          compiles, program.untested, program.timing)
        self._move_watermark(program.index)
        return [str(s.path) if s.kept in FRESH else None for s in saved]

    def _count(self, program: Finished) -> None:
        """Count the program: its status, its compiles, why it went untested, what it
        reached, and dcefuzz's own errors met on it."""
        for error in program.errors:
            self.internal_error(program.index, error)
        self.stats.reached.update(program.reached)
        self.stats.count(program.status)
        self.stats.recompiles += program.recompiles
        if program.untested is not None:
            self.stats.untested[program.untested.reason] += 1
            self.stats.causes[program.untested.reason, program.untested.cause] += 1

    def _save(self, index: int, entry: Entry) -> Saved:
        """Save one finding of program ``index`` (``Examples.save``: one entry per
        signature, a few per bug) and count what became of it."""
        stats = self.stats
        stats.findings[entry.kind] += 1
        stats.first.setdefault(entry.kind, (index, self.elapsed()))
        saved = self.examples.save(entry)
        stats.signatures.add(entry.id)
        if saved.bug not in stats.bugs:
            stats.bug_first[saved.bug] = self.elapsed()
            if self.folder is not None:
                self.folder.log_bug(self.elapsed(), index, saved.bug, bug_key(entry).text, entry.kind, saved.new_bug)
        stats.bugs.add(saved.bug)
        if saved.new_bug:
            stats.new_bugs.add(saved.bug)
        if saved.removed is not None and str(saved.removed) in stats.saved:
            stats.saved.remove(str(saved.removed))
        if saved.kept in FRESH:
            stats.saved.append(str(saved.path))
            self.log(f"[{self.elapsed():6.0f}s] program {index}: "
                     + ("new bug " if saved.new_bug else "") + f"{saved.bug}, {saved.kept.value} "
                     f"{entry.kind} ({entry.statements} statements) -> {saved.path}")
        elif saved.kept is Kept.COUNTED:
            stats.counted += 1
            stats.key_only += bool(entry.culprit and entry.culprit.key_only)
        else:
            stats.repeats += 1
        stats.last_entry = entry
        return saved

    def _move_watermark(self, index: int) -> None:
        """Mark program ``index`` done; the watermark: every index of this shard below it is done."""
        self.done.add(index)
        mark = self.stats.next_index
        while mark in self.done:
            self.done.discard(mark)
            mark += self.shard.count
        self.stats.next_index = mark
        self.stats.done_above = sorted(self.done)

    def _log_program(self, index: int, status: str, bugs: list[list], compiles: int,
                     untested: Gap | None = None, timing: Timing | None = None) -> None:
        """One line in the folder's ``programs.jsonl``: the program's index and the seed
        of the draw that ran, the draws set aside for its index and the held bugs each
        held (``draws``, ``avoided``: ``--avoid-held``), its seconds from being handed
        out to being counted (trial, shrink, triage: what it cost the campaign) and its
        compiles (``compiles_of``), its status and each finding's bug with what became of
        it (``Kept``), why an untested one was (its first :class:`Gap`: reason, cause,
        message), and its :class:`Timing` (``trial``, ``after_trial``) where it was measured."""
        seed = self._seed_of(index)
        issued = self.issued.pop(index, None)
        if self.folder is None:
            return
        line = {"index": index, "seed": seed, "status": status,
                "done": round(self.elapsed(), 2), "bugs": bugs, "compiles": compiles}
        if untested is not None:
            line["untested"] = untested.to_json()
        if timing is not None:
            line.update(trial=round(timing.trial, 2), after_trial=round(timing.after_trial, 2))
        if issued is not None:  # a program of the run before a resume has none
            start, drawn = issued
            line["seconds"] = round(self.elapsed() - start, 2)
            if drawn.avoided:
                line.update(draws=drawn.draws, avoided=[list(bugs) for bugs in drawn.avoided])
        self.folder.log_program(line)

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

    def withdraw(self, entry: Entry, path: str, why: str) -> None:
        """Take a saved casualty out of the corpus: it did not die again in a fresh
        process (``reduce.casualty.dies_again``), so the program is a suspect, not a
        finding.  Its files go to the campaign folder's ``unconfirmed/`` (or the
        corpus's, with no campaign folder), it leaves the findings' counts, and it is
        kept with ``why`` (:class:`Withdrawal`: state, summary, stats, site, log)."""
        folder = self.folder.unconfirmed if self.folder is not None else Path(self.config.corpus_dir) / UNCONFIRMED_FOLDER
        moved = store.move(path, folder)
        self.stats.withdrawn.append(Withdrawal(entry.id, entry.kind, entry.bug_class, why, str(moved)))
        self.examples.forget(entry.id)
        self.stats.signatures.discard(entry.id)
        if str(path) in self.stats.saved:
            self.stats.saved.remove(str(path))
        if self.stats.findings[entry.kind] > 0:
            self.stats.findings[entry.kind] -= 1  # not a finding after all
        self.log(f"[{self.elapsed():6.0f}s] {entry.kind} {entry.id} withdrawn: {why} -> {moved}")

    def tick(self, extra: str = "", details: Callable[[], dict] | None = None) -> None:
        """Every progress interval: checkpoint (with ``details()`` in the stats line), report."""
        now = time.monotonic()
        if now - self.last_report >= CAMPAIGN.progress_every_s:
            self.last_report = now
            self.checkpoint(details() if details else None)
            self.progress(progress_line(self.stats, extra))

    def checkpoint(self, details: dict | None = None) -> None:
        self.stats.seconds = self.elapsed()
        if self.folder is not None:
            snapshot = self.stats.to_state()
            self.folder.save(snapshot)
            self.folder.log_stats(snapshot, bugs=self.stats.corpus_bugs, entries=self.stats.corpus_entries,
                                  run_bugs=len(self.stats.bugs), **(details or {}))


def compiles_of(recompiles: int, entries: list[Entry]) -> int:
    """The compiles a program cost: its trial's (the first and the recompiles its
    bindings made) and each finding's shrink and triage, as their records count them.
    A machine-independent cost: a campaign steers by it where seconds would make its
    programs depend on the machine's speed."""
    return (1 + recompiles + sum(int((e.shrink or {}).get("oracle_calls", 0)) for e in entries)
            + sum(e.culprit.oracle_calls for e in entries if e.culprit is not None))


def run_campaign(session: Session, accept: Callable[[Finding], bool] | None = None,
                 stop_after_findings: int | None = None) -> Stats:
    """Fuzz in this process until the session's budget is spent (or, with
    ``stop_after_findings``, that many findings are saved or counted).

    The time budget is checked between programs, and each finding's shrink gets at
    most the time left; a program that has started cannot be interrupted here (no
    process watches it), so a campaign may end past its time by one program and the
    confirmation of a shrink.  The worker pool (``fuzzer.campaign.pool``) ends on time.

    ``accept`` filters findings before the costly part: a finding it refuses is
    counted in ``stats.ignored`` and neither shrunk nor saved.  With a folder the
    campaign's state is saved there every progress interval and at the end (also on
    Ctrl-C), with one stats line each time (``Session``).
    """
    config = session.config
    stats = session.stats
    with faults.planted(config.fault):
        try:
            while not session.spent():
                drawn = session.next_program()
                index, pseed = drawn.index, drawn.seed
                start = time.perf_counter()
                try:
                    result = trial_of(pseed, config)
                except Exception as exc:  # noqa: BLE001 - dcefuzz's own error, never a finding
                    session.finished(Finished(index, INTERNAL_ERROR, errors=((e := InternalError.of(TRIAL_STAGE, exc)),)))
                    session.tick()
                    if e.device_lost:  # a sticky CUDA error: every later program would raise it (logged)
                        break
                    continue
                tried = time.perf_counter() - start
                entries, errors = [], []
                for finding in result.findings:
                    if accept is not None and not accept(finding):
                        stats.ignored[finding.kind] += 1
                        continue
                    entries.append(counted_only(finding, pseed, config, session.held(),
                                                session.seconds_left(), errors)
                                   or entry_for(finding, pseed, config, seconds_left=session.seconds_left(),
                                                errors=errors, held=session.held()))
                # another bug the program holds, which a found one masks
                entries += masked_entries(entries, pseed, config, session.held(), session.seconds_left, errors)
                session.finished(Finished(index, result.status, tuple(entries), result.recompiles,
                                          result.untested, tuple(errors), result.reached,
                                          Timing.of(tried, time.perf_counter() - start)))
                session.tick()
                if stop_after_findings is not None and sum(stats.findings.values()) >= stop_after_findings:
                    break
        except KeyboardInterrupt:
            session.log("interrupted: stopped after the last completed program")
        finally:
            session.checkpoint()
    return stats
