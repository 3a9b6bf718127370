"""The plain trial kind (``fuzzer.trials.program``): its cases drawn as the campaign's
target draws them, its scripts and briefs the render modules', and a death's culprit
walked from outside; no compile."""

from helpers import case, divergence_on, prog

from fuzzer.campaign.config import Config
from fuzzer.corpus.entry import Entry, Origin
from fuzzer.judge import contract, kinds, targets
from fuzzer.program.generate import generate
from fuzzer.render import brief, repro
from fuzzer.trials import program
from fuzzer.trials.program import KIND


def _entry(kind=contract.EFFECT_LOG):
    c = case(prog({"x0": ("s0",)}, [("e_log", ["x0"], None, {"site": 0})]))
    divergence = divergence_on(0) if kind == contract.EFFECT_LOG else contract.Divergence(kind, 0, "process", "x")
    return Entry.build(kind, c, [divergence], Origin(seed=1, device="cpu", backend="inductor"))


def test_it_is_the_plain_kind_that_owns_no_finding_of_its_own():
    assert KIND.name == kinds.PROGRAM and KIND.findings == () and not KIND.fault_in_sides
    assert kinds.get(kinds.PROGRAM).name == KIND.name


def test_a_case_is_drawn_as_the_programs_target_draws_it():
    config = Config(seed=1, device="cpu", corpus_dir="c", targets=("compile", "func-grad"))
    for pseed in (11, 12, 13):
        target = targets.of_program("compile,func-grad", pseed)
        assert KIND.case(pseed, config) == generate(pseed, features=targets.drawn_for(target, {}))


def test_scripts_and_briefs_are_the_render_modules_and_a_death_is_walked_from_outside(monkeypatch):
    e = _entry()
    assert KIND.script(e) == repro.render(e) and KIND.brief(e) == brief.render(e) and KIND.issue(None, e) is None
    walked = []
    monkeypatch.setattr(program.casualty, "localise", lambda entry, device, budget: walked.append("outside"))
    monkeypatch.setattr(program, "localise", lambda *a: walked.append("in process"))
    KIND.culprit(_entry(contract.CRASH), "cpu", None)
    KIND.culprit(e, "cpu", None)
    assert walked == ["outside", "in process"]
    assert KIND.shrink_budget(Config(seed=1, device="cpu", corpus_dir="c")) == Config.shrink_budget
