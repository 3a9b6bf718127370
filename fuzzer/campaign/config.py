"""What a campaign runs: its settings (``Config``), and when it stops (``Budget``)."""

from __future__ import annotations

from dataclasses import dataclass

from fuzzer.judge import kinds, targets
from fuzzer.limits import SHRINK, TRIAGE, OracleBudget
from fuzzer.program.generate import BUILTIN, OpSet
from fuzzer.triage.key import BugKey


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
    shrink_budget: OracleBudget = SHRINK.budget
    fault: str | None = None
    #: localise each finding once shrunk (``fuzzer.triage.culprit``)
    triage: bool = True
    triage_budget: OracleBudget = TRIAGE.budget
    #: example entries kept per bug; further findings of it only count
    examples_per_bug: int = TRIAGE.examples_per_bug
    #: how each program is tried: the name of a trial kind (``fuzzer.judge.kinds``:
    #: ``program``, or ``cache-pair`` for ``--cache-pairs``)
    trial: str = kinds.PROGRAM
    #: the pipelines the programs are compiled and run through (``fuzzer.judge.targets``,
    #: ``--target``): one, or several spread over the programs by seed (:meth:`target_of`)
    targets: tuple[str, ...] = (targets.DEFAULT,)
    #: torch threads of each cache-pair side (None: torch's default)
    side_threads: int | None = None
    #: (feature, weight) pairs the programs are drawn with (``fuzzer.program.features``)
    features: tuple = ()
    #: the custom ops programs may call: dcefuzz's own and the user's (``--ops``)
    ops: OpSet = BUILTIN
    #: the user ops' declaration findings (``fuzzer.user.audit``), counted once
    #: when the campaign starts
    declarations: int = 0
    #: keys of the bugs known upstream (``fuzzer.corpus.upstream``, ``--known-upstream``):
    #: their findings are classified, to be recognised, and counted, never shrunk in full
    known: tuple[BugKey, ...] = ()
    #: the folder the keys known upstream came from (``--known-upstream``)
    known_dir: str | None = None
    #: draw again a program that holds an example of a bug held when the campaign
    #: started (``fuzzer.campaign.avoidance``, ``--avoid-held``)
    avoid_held: bool = False

    @property
    def feature_table(self) -> dict[str, float]:
        return dict(self.features)

    def target_of(self, program_seed: int) -> str:
        """The target program ``program_seed`` runs through: one of :attr:`targets`,
        picked by its seed (``targets.of_program``, which reads them as ``targets.spread``
        writes them)."""
        return targets.of_program(",".join(self.targets), program_seed)

    @property
    def op_table(self) -> dict:
        """The ops as the campaign's state records them (empty: dcefuzz's own)."""
        if self.ops == BUILTIN:
            return {}
        return {"builtin": self.ops.builtin, "user": list(self.ops.user)}
