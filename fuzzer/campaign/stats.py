"""A campaign run's counts: what it ran, found, saved and could not test, on top of the
runs it resumes; its summary and its progress line."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from fuzzer.campaign.state import CampaignState, Withdrawal, untested_text, withdrawn_text
from fuzzer.corpus.entry import Entry
from fuzzer.internal import INTERNAL_ERROR
from fuzzer.judge.trial import FLAKY


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
    #: the same programs by ``(reason, cause)`` (``fuzzer.judge.observe.Gap``)
    causes: Counter = field(default_factory=Counter)
    #: programs stopped unfinished at the end of the time budget: not counted, so a
    #: resumed campaign runs them again
    stopped: int = 0
    #: ids of the bugs this run hit, and of those new to the corpus
    bugs: set[str] = field(default_factory=set)
    new_bugs: set[str] = field(default_factory=set)
    #: findings of a bug that already had its examples: counted, not saved
    counted: int = 0
    #: of those, the findings triaged with only the probes their key needs
    key_only: int = 0
    #: the corpus's bugs and entries, as of the last finding
    corpus_bugs: int = 0
    corpus_entries: int = 0
    #: dcefuzz's own errors (``fuzzer.internal``) in this run, by the stage that raised
    internal: Counter = field(default_factory=Counter)
    #: where their tracebacks are (the campaign folder's ``internal-errors.jsonl``)
    internal_log: str | None = None
    #: what the programs reached that the contract judges apart (``trial.reached``)
    reached: Counter = field(default_factory=Counter)
    #: seconds into this run at which each bug it hit was first hit
    bug_first: dict = field(default_factory=dict)
    #: casualties this run took out of the corpus, with why (``Session.withdraw``)
    withdrawn: list[Withdrawal] = field(default_factory=list)

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
            causes=b.causes + self.causes,
            features=dict(b.features), ops=dict(b.ops), internal=b.internal + self.internal,
            reached=b.reached + self.reached, feedback=b.feedback, targets=b.targets,
            withdrawn=b.withdrawn + self.withdrawn)

    @property
    def mostly_internal(self) -> bool:
        """More than half of this run's programs were dcefuzz's own errors: tested by nothing."""
        return self.statuses[INTERNAL_ERROR] * 2 > self.run_programs > 0

    @property
    def mostly_untested(self) -> bool:
        """More than half of this run's programs were not wholly compiled."""
        return sum(self.untested.values()) * 2 > self.run_programs > 0

    def summary(self) -> str:
        kinds = ", ".join(f"{k} {n}" for k, n in sorted(self.findings.items())) or "none"
        lines = [
            f"programs   {self.programs} in {self.seconds:.0f}s ({self.rate * 60:.1f}/min)"
            + (f", {self.statuses[INTERNAL_ERROR]} of them dcefuzz's own errors, tested by nothing (`internal`)"
               if self.statuses[INTERNAL_ERROR] else ""),
            f"findings   {kinds}",
            f"flaky      {self.statuses[FLAKY]}",
            f"invalid    {self.statuses['invalid']} (generator defects)",
            f"nondeterministic {self.statuses['nondeterministic']}",
            f"untested   {sum(self.untested.values())} (not wholly compiled, never counted clean"
            + (": " + untested_text(self.untested, self.causes) if self.untested else "")
            + ")",
            f"bugs       {len(self.bugs)} hit ({len(self.new_bugs)} new); the corpus holds "
            f"{self.corpus_bugs} bugs in {self.corpus_entries} entries (`dcefuzz bugs`)",
            f"saved      {len(self.saved)} new entries, {self.repeats} repeat hits of known signatures, "
            f"{self.counted} hits of bugs with their examples already ({self.key_only} triaged for "
            f"their key alone; {len(self.signatures)} signatures in all)",
            f"recompiles {self.recompiles} (dynamo, over every program's bindings)",
            f"reached    " + (", ".join(f"{k} {n}" for k, n in sorted(self.reached.items())) or "nothing judged apart"),
            f"stopped    {self.stopped} at the deadline (not counted: --resume runs them again)",
            f"withdrawn  {withdrawn_text(self.withdrawn)}",
            f"internal   {sum(self.internal.values())} (dcefuzz's own errors, never findings"
            + (": " + ", ".join(f"{k} {n}" for k, n in sorted(self.internal.items())) if self.internal else "")
            + (f"; tracebacks in {self.internal_log}" if self.internal_log and self.internal else "") + ")",
        ]
        if self.base.programs:
            total = self.to_state()
            lines.append(f"resumed    {total.programs} programs in all, next program index {total.next_index}")
        return "\n".join(lines)


def progress_line(stats: Stats, extra: str = "") -> str:
    kinds = ", ".join(f"{k} {n}" for k, n in sorted(stats.findings.items()))
    return (f"[{stats.seconds:6.0f}s] {stats.programs} programs, {stats.rate * 60:.1f}/min, "
            f"{sum(stats.findings.values())} findings" + (f" ({kinds})" if kinds else "")
            + f", {len(stats.bugs)} bugs, {len(stats.signatures)} signatures, {len(stats.saved)} saved, "
            f"{stats.recompiles} recompiles, {sum(stats.untested.values())} untested"
            + (f", {sum(stats.internal.values())} internal errors" if stats.internal else "")
            + extra)
