"""The plain trial kind: a program compiled once in this process and judged against
eager (``fuzzer.judge.trial``), shrunk by fresh compiles here, its repro script and
brief written by ``fuzzer.render``, its culprit found by ``fuzzer.triage``.

Registered as the trial kind ``program`` (``fuzzer.judge.kinds``) through this
package's entry points; every finding that no other kind owns is its.
"""

from __future__ import annotations

from fuzzer.judge import targets
from fuzzer.judge.kinds import PROGRAM
from fuzzer.judge.trial import judge_fresh, run_trial
from fuzzer.program.generate import generate
from fuzzer.render import brief, repro
from fuzzer.judge.contract import PROCESS_KINDS
from fuzzer.triage import casualty
from fuzzer.triage.culprit import localise


class ProgramTrials:
    """A program, its bindings run in order through one compile of the campaign's target
    (``torch.compile`` unless ``--target`` names another: ``fuzzer.judge.targets``; of
    several, the one its seed picks: ``Config.target_of``)."""

    name = PROGRAM
    findings: tuple[str, ...] = ()
    fault_in_sides = False

    def case(self, program_seed: int, config):
        target = config.target_of(program_seed)
        return generate(program_seed, features=targets.drawn_for(target, config.feature_table), ops=config.ops)

    def trial(self, program_seed: int, config):
        return run_trial(self.case(program_seed, config), config.device, config.backend,
                         target=config.target_of(program_seed))

    def oracle(self, found, device: str, backend: str, fault: str | None = None, threads: int | None = None):
        # a fresh compile in this process, under whatever fault this process planted
        target = getattr(found, "target", targets.DEFAULT)
        return lambda case: judge_fresh(case, device, backend, target=target)

    def shrink_budget(self, config):
        return config.shrink_budget

    def script(self, entry) -> str:
        return repro.render(entry)

    def brief(self, entry) -> str:
        return brief.render(entry)

    def culprit(self, entry, device: str, budget, fault: str | None = None, threads: int | None = None,
                key_only: bool = False):
        if entry.kind in PROCESS_KINDS:  # its probes may die: each in a process of its own
            return casualty.localise(entry, device, budget)
        return localise(entry.case, entry.kind, entry.bug_class, device, budget, entry.backend, key_only,
                        entry.spots)

    def issue(self, bug, entry):
        return None  # the plain words of ``fuzzer.render.report``


KIND = ProgramTrials()
