"""A campaign: generate, try and save, program after program, within a budget.

Program ``i`` of a campaign with seed ``S`` is ``generate(program_seed(S, i))``: any
program can be regenerated from the seed and its index alone.  Findings are saved
the moment they are confirmed (atomically, one entry per signature), so stopping
the campaign at any point loses nothing already found.
"""

from __future__ import annotations

import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from fuzzer import corpus
from fuzzer.generate import generate, program_seed
from fuzzer.limits import CAMPAIGN
from fuzzer.trial import FINDING, FLAKY, Finding, run_trial


@dataclass
class Budget:
    """Stop after ``seconds`` or ``programs``, whichever comes first (None: no limit)."""

    seconds: float | None = None
    programs: int | None = None

    def spent(self, elapsed: float, done: int) -> bool:
        return ((self.seconds is not None and elapsed >= self.seconds)
                or (self.programs is not None and done >= self.programs))


@dataclass
class Stats:
    programs: int = 0
    seconds: float = 0.0
    findings: Counter = field(default_factory=Counter)
    statuses: Counter = field(default_factory=Counter)
    saved: list[str] = field(default_factory=list)
    repeats: int = 0

    @property
    def rate(self) -> float:
        return self.programs / self.seconds if self.seconds else 0.0

    def summary(self) -> str:
        kinds = ", ".join(f"{k} {n}" for k, n in sorted(self.findings.items())) or "none"
        return "\n".join([
            f"programs   {self.programs} in {self.seconds:.0f}s ({self.rate * 60:.1f}/min)",
            f"findings   {kinds}",
            f"flaky      {self.statuses[FLAKY]}",
            f"invalid    {self.statuses['invalid']} (generator defects)",
            f"nondeterministic {self.statuses['nondeterministic']}",
            f"saved      {len(self.saved)} new entries, {self.repeats} repeat hits of known signatures",
        ])


def entry_for(finding: Finding, seed: int | None, fault: str | None = None) -> corpus.Entry:
    return corpus.Entry(
        id=corpus.entry_id(finding.kind, finding.signature),
        kind=finding.kind,
        signature=finding.signature,
        seed=seed,
        device=finding.device,
        backend=finding.backend,
        torch_version=corpus.torch_version(),
        case=finding.case,
        detail=[d.line() for d in finding.divergences],
        fault=fault,
    )


def run_campaign(seed: int, budget: Budget, device: str, corpus_dir: str,
                 backend: str = "inductor", log: Callable[[str], None] | None = None) -> Stats:
    log = log or (lambda line: print(line, file=sys.stderr, flush=True))
    stats = Stats()
    start = time.perf_counter()
    last_report = start
    index = 0
    try:
        while not budget.spent(time.perf_counter() - start, index):
            pseed = program_seed(seed, index)
            result = run_trial(generate(pseed), device, backend)
            stats.programs += 1
            stats.statuses[result.status] += 1
            for finding in result.findings:
                stats.findings[finding.kind] += 1
                path, new = corpus.save(entry_for(finding, pseed), corpus_dir)
                if new:
                    stats.saved.append(str(path))
                    log(f"[{time.perf_counter() - start:6.0f}s] program {index}: new {finding.kind} -> {path}")
                else:
                    stats.repeats += 1
            index += 1
            now = time.perf_counter()
            if now - last_report >= CAMPAIGN.progress_every_s:
                last_report = now
                stats.seconds = now - start
                found = sum(stats.findings.values())
                log(f"[{stats.seconds:6.0f}s] {stats.programs} programs, {stats.rate * 60:.1f}/min, "
                    f"{found} findings, {len(stats.saved)} saved")
    except KeyboardInterrupt:
        log("interrupted: stopping after the current program")
    stats.seconds = time.perf_counter() - start
    return stats
