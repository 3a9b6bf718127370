"""A campaign: generate, try, shrink and save, program after program, within a budget.

Program ``i`` of a campaign with seed ``S`` is ``generate(program_seed(S, i))``: any
program can be regenerated from the seed and its index alone.  Each confirmed
finding is shrunk (unless disabled) and saved the moment it is ready, atomically,
one entry per signature, so stopping the campaign at any point loses nothing
already found.
"""

from __future__ import annotations

import os
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from fuzzer import corpus, faults, oracle
from fuzzer.generate import generate, program_seed
from fuzzer.limits import CAMPAIGN
from fuzzer.shrink import ShrinkBudget, shrink
from fuzzer.state import BadState, CampaignFolder, CampaignState, Shard
from fuzzer.trial import FLAKY, Finding, judge_fresh, run_trial


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
    #: (program index, seconds since start) of the first finding of each kind
    first: dict = field(default_factory=dict)
    #: findings refused by the campaign's filter, by kind
    ignored: Counter = field(default_factory=Counter)
    last_entry: corpus.Entry | None = None

    def __post_init__(self) -> None:
        self.next_index = self.base.next_index

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
            seed=b.seed, shard=b.shard, next_index=self.next_index,
            programs=b.programs + self.run_programs, seconds=b.seconds + self.seconds,
            findings=b.findings + self.findings, statuses=b.statuses + self.statuses,
            saved=b.saved + len(self.saved), repeats=b.repeats + self.repeats)

    def summary(self) -> str:
        kinds = ", ".join(f"{k} {n}" for k, n in sorted(self.findings.items())) or "none"
        lines = [
            f"programs   {self.programs} in {self.seconds:.0f}s ({self.rate * 60:.1f}/min)",
            f"findings   {kinds}",
            f"flaky      {self.statuses[FLAKY]}",
            f"invalid    {self.statuses['invalid']} (generator defects)",
            f"nondeterministic {self.statuses['nondeterministic']}",
            f"saved      {len(self.saved)} new entries, {self.repeats} repeat hits of known signatures",
        ]
        if self.base.programs:
            total = self.to_state()
            lines.append(f"resumed    {total.programs} programs in all, next program index {total.next_index}")
        return "\n".join(lines)


def entry_for(finding: Finding, seed: int | None, config: Config) -> corpus.Entry:
    """The corpus entry of a finding, shrunk first when the config says so."""
    case, divs, sig, record = finding.case, finding.divergences, finding.signature, None
    if config.shrink:
        result = shrink(case, finding.kind, divs, finding.device, finding.backend, config.shrink_budget)
        if result.confirmed:
            case, divs, sig, record = result.case, result.divergences, result.signature, result.record()
    return corpus.Entry(
        id=corpus.entry_id(finding.kind, sig),
        kind=finding.kind,
        signature=sig,
        seed=seed,
        device=finding.device,
        backend=finding.backend,
        torch_version=corpus.torch_version(),
        case=case,
        detail=[d.line() for d in divs],
        fault=config.fault,
        shrink=record,
    )


def _progress_line(stats: Stats) -> str:
    return (f"[{stats.seconds:6.0f}s] {stats.programs} programs, {stats.rate * 60:.1f}/min, "
            f"{sum(stats.findings.values())} findings, {len(stats.saved)} saved")


def run_campaign(config: Config, budget: Budget, log: Callable[[str], None] | None = None,
                 accept: Callable[[Finding], bool] | None = None, stop_after_saving: bool = False,
                 shard: Shard = Shard(), folder: CampaignFolder | None = None,
                 resume: bool = False, progress: Callable[[str], None] | None = None) -> Stats:
    """Fuzz until the budget is spent (or, with ``stop_after_saving``, a finding is saved).

    ``accept`` filters findings before the costly part: a finding it refuses is
    counted in ``stats.ignored`` and neither shrunk nor saved.  With a ``folder`` the
    campaign's state is saved there every progress interval and at the end (also on
    Ctrl-C), with one stats line each time; ``resume`` continues the stream from the
    saved state.  The budget counts this run only.  ``log`` gets events (a new
    entry), ``progress`` the periodic status line (default: ``log``).
    """
    log = log or (lambda line: print(line, file=sys.stderr, flush=True))
    progress = progress or log
    state = CampaignState(seed=config.seed, shard=shard)
    if resume:
        if folder is None:
            raise BadState("resume needs a campaign folder")
        state = folder.load()
        if (state.seed, state.shard) != (config.seed, shard):
            raise BadState(f"{folder.path} holds seed {state.seed} shard {state.shard}, "
                           f"not seed {config.seed} shard {shard}")
    stats = Stats(base=state)
    start = time.perf_counter()
    last_report = start

    def checkpoint() -> None:
        stats.seconds = time.perf_counter() - start
        if folder is not None:
            snapshot = stats.to_state()
            folder.save(snapshot)
            folder.log_stats(snapshot)

    indices = shard.indices(state.next_index)
    with faults.planted(config.fault):
        try:
            while not budget.spent(time.perf_counter() - start, stats.run_programs):
                index = next(indices)
                pseed = program_seed(config.seed, index)
                result = run_trial(generate(pseed), config.device, config.backend)
                stats.count(result.status)
                stop = False
                for finding in result.findings:
                    if accept is not None and not accept(finding):
                        stats.ignored[finding.kind] += 1
                        continue
                    stats.findings[finding.kind] += 1
                    stats.first.setdefault(finding.kind, (index, time.perf_counter() - start))
                    entry = entry_for(finding, pseed, config)
                    path, new = corpus.save(entry, config.corpus_dir)
                    if new:
                        stats.saved.append(str(path))
                        log(f"[{time.perf_counter() - start:6.0f}s] program {index}: new {finding.kind} "
                            f"({entry.statements} statements) -> {path}")
                    else:
                        stats.repeats += 1
                    stats.last_entry = entry
                    stop |= stop_after_saving
                stats.next_index = index + shard.count
                now = time.perf_counter()
                if now - last_report >= CAMPAIGN.progress_every_s:
                    last_report = now
                    checkpoint()
                    progress(_progress_line(stats))
                if stop:
                    break
        except KeyboardInterrupt:
            log("interrupted: stopped after the last completed program")
        finally:
            checkpoint()
    return stats


def reshrink(entry: corpus.Entry, path, device: str, budget: ShrinkBudget):
    """Shrink a saved entry again and replace it; None if it no longer reproduces.

    Returns (new path, statements before, statements after).  The new entry is
    written (atomically) before the old files go, so a crash leaves one or both.
    """
    with faults.planted(entry.fault):
        verdict = judge_fresh(entry.case, device, entry.backend)
        divs = verdict.of_kind(entry.kind) if verdict.status == oracle.OK else []
        if not divs:
            return None
        result = shrink(entry.case, entry.kind, divs, device, entry.backend, budget)
    if not result.confirmed:
        return None
    before = entry.statements
    new = corpus.Entry(
        id=corpus.entry_id(entry.kind, result.signature), kind=entry.kind, signature=result.signature,
        seed=entry.seed, device=device, backend=entry.backend, torch_version=corpus.torch_version(),
        case=result.case, detail=[d.line() for d in result.divergences], hits=entry.hits,
        fault=entry.fault, found=entry.found,
        shrink={**result.record(), "original_statements": (entry.shrink or {}).get(
            "original_statements", before)},
    )
    folder = os.path.dirname(os.path.abspath(path))
    if new.id == entry.id:
        new.hits = 0  # save() adds the hits of the entry already there
    new_path, _ = corpus.save(new, folder)
    if new.id != entry.id:
        for old in (path, os.path.splitext(path)[0] + corpus.SCRIPT_SUFFIX):
            if os.path.exists(old):
                os.unlink(old)
    return new_path, before, new.statements
