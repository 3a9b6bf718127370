"""Self-test: does dcefuzz catch each planted bug class on this torch, and how fast?

For each fault of the catalogue, a short seeded campaign runs with the fault
planted until it has ``SELFTEST.findings_per_fault`` findings of the kind the fault
should cause, or its time is up.  Each finding is shrunk and triaged as in any
campaign, and the table says how many bugs they group into: one fault is one root
cause, so anything but 1 is triage splitting a bug.  A finding counts as detecting the fault only if it goes away when the fault
is lifted: a divergence that persists without the fault is a bug of torch itself
(this torch has some), so it is saved but does not count, and the search goes on.
A fault whose internals this torch lacks is reported as not applicable.  A fault
of the compile caches' key is sought with cache pairs (``fuzzer.cache``), the
only runs that can see it; a fault confined to one feature's path
(``fuzzer.faults.scoped``) with programs drawn with that feature.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from fuzzer import faults
from fuzzer.campaign.config import Budget, Config
from fuzzer.campaign.entries import oracle_of
from fuzzer.campaign.session import Session, run_campaign
from fuzzer.judge import contract, kinds
from fuzzer.limits import SELFTEST


@dataclass
class Row:
    fault: str
    bug_class: str
    expected_kind: str
    applicable: bool
    detected: bool = False
    programs: int | None = None
    seconds: float | None = None
    kind: str | None = None
    statements: int | None = None
    entry: str | None = None
    torch_bugs: int = 0
    note: str = ""
    #: the findings of the fault, and the distinct bugs they group into
    findings: int = 0
    bugs: int = 0

    def cells(self) -> list[str]:
        if not self.applicable:
            return [self.fault, self.bug_class, "n/a", "", "", "", "", "", "", self.note]
        return [self.fault, self.bug_class, "yes" if self.detected else "NO",
                "" if self.programs is None else str(self.programs),
                "" if self.seconds is None else f"{self.seconds:.1f}",
                self.kind or "", "" if self.statements is None else str(self.statements),
                str(self.findings), str(self.bugs) if self.findings else "", self.note]


HEADER = ["fault", "class", "detected", "programs", "seconds", "kind", "statements", "findings", "bugs",
          "note"]


def table(rows: list[Row]) -> str:
    cells = [HEADER] + [r.cells() for r in rows]
    widths = [max(len(c[i]) for c in cells) for i in range(len(HEADER))]
    lines = ["  ".join(c[i].ljust(widths[i]) for i in range(len(HEADER))).rstrip() for c in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def check_fault(name: str, seconds: float, seed: int, device: str, corpus_dir: str,
                log=None, target: str | None = None) -> Row:
    fault = faults.get(name)
    row = Row(fault.name, fault.bug_class, fault.expected_kind, applicable=True)
    reason = fault.unavailable()
    if reason is not None:
        row.applicable, row.note = False, reason
        return row

    def caused_by_fault(finding) -> bool:
        """The fault's kind, and gone once the fault is lifted (else torch's own bug)."""
        if finding.kind != fault.expected_kind:
            return False
        with faults.suspended():
            without = oracle_of(finding, dataclasses.replace(config, fault=None))(finding.case)
        if without.status == contract.OK and without.of_kind(finding.kind):
            row.torch_bugs += 1
            return False
        return True

    # a fault of the cache key shows on cache pairs only, and its sides carry it
    config = Config(seed=seed, device=device, corpus_dir=corpus_dir, fault=name,
                    trial=kinds.of(fault.expected_kind).name, features=fault.features,
                    targets=(target or fault.pipelines[0],))
    stats = run_campaign(Session(config, Budget(seconds=seconds), log=log or (lambda line: None)),
                         accept=caused_by_fault, stop_after_findings=SELFTEST.findings_per_fault)
    row.programs = stats.programs
    row.findings, row.bugs = sum(stats.findings.values()), len(stats.bugs)
    if stats.last_entry is not None:
        entry = stats.last_entry
        row.detected = True
        row.programs, row.seconds = stats.first[entry.kind]
        row.programs += 1
        row.kind, row.statements, row.entry = entry.kind, entry.statements, entry.id
    else:
        row.seconds = stats.seconds
    if row.torch_bugs:
        row.note = f"{row.torch_bugs} finding(s) of this kind persisted without the fault (torch bugs)"
    return row


def budget_of(name: str, seconds: float | None = None) -> float:
    """The campaign time a fault gets: ``seconds`` when given, else the fault's own."""
    return faults.get(name).seconds if seconds is None else seconds


def run_selftest(names: list[str], seconds: float | None, seed: int, device: str, corpus_dir: str,
                 log=None, target: str | None = None) -> list[Row]:
    """Check each fault, each within ``seconds`` or, when None, the budget it carries, its campaign
    run through ``target`` (None: the first of its ``pipelines``)."""
    return [check_fault(n, budget_of(n, seconds), seed, device, corpus_dir, log, target) for n in names]
