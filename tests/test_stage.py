"""The stage walk (``fuzzer.triage.stage``): the stages a finding is walked over, and
the first on which its bug shows; a stand-in probe, no compile."""

from fuzzer.judge import contract
from fuzzer.triage import stage
from fuzzer.triage.probe import Outcome


class Scripted:
    """A stand-in probe: each stage's outcome and what it saw there."""

    def __init__(self, outcomes, seen=None):
        self.outcomes, self.seen_at, self.asked, self.seen = outcomes, seen or {}, [], ()

    def outcome(self, backend):
        self.asked.append(backend)
        self.seen = self.seen_at.get(backend, ())
        return self.outcomes[backend]


def test_the_stages_are_those_up_to_the_backend_and_a_missed_dce_skips_eager():
    assert stage.stages_for(contract.WRONG_OUTPUT) == stage.STAGES
    assert stage.stages_for(contract.WRONG_OUTPUT, "aot_eager") == ("eager", "aot_eager")
    assert stage.stages_for(contract.MISSED_DCE) == ("aot_eager", "aot_eager_decomp_partition", "inductor")


def test_the_walk_stops_at_the_first_stage_that_shows_the_bug_and_keeps_what_others_showed():
    probe = Scripted({"eager": Outcome.GONE, "aot_eager": Outcome.CHANGED,
                      "aot_eager_decomp_partition": Outcome.STAYS, "inductor": Outcome.STAYS},
                     seen={"aot_eager": ("runtime-error",)})
    otherwise = {}
    assert stage.walk(probe, stage.STAGES, otherwise) == "aot_eager_decomp_partition"
    assert probe.asked == ["eager", "aot_eager", "aot_eager_decomp_partition"]
    assert otherwise == {"aot_eager": ("runtime-error",)}


def test_a_bug_no_stage_shows_has_no_stage():
    assert stage.walk(Scripted(dict.fromkeys(stage.STAGES, Outcome.GONE))) is None
