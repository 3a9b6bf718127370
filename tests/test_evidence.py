"""Where a bug lives, as its issue says it (``fuzzer.render.evidence``): the first stage
that shows it and the stages before that do not, what failed otherwise, its cause, a
switch that makes it go as its workaround, and why no stage is named; hand-built bugs
and culprits (the corpus's bugs are test_report.py's)."""

from helpers import key, klass

from fuzzer.corpus.bugs import Bug
from fuzzer.judge import contract, targets
from fuzzer.render import evidence
from fuzzer.triage import causes
from fuzzer.triage.culprit import Culprit

CAUSE = next(iter(causes.BY_NAME))


def _bug(culprit, kinds=(contract.EFFECT_LOG,), found_through=(targets.DEFAULT,), blame=None):
    return Bug(id="bug-0", key=key("effect-log|missing @ inductor"), title="a bug", family=klass("effect-log|missing"),
               blame=blame, culprit=culprit, kinds=kinds, entries=("effect-log-0",), hits=1, first_seen="",
               last_seen="", versions={}, targets=found_through)


def test_a_bug_is_of_the_one_target_its_entries_share_else_of_compile():
    assert evidence.target_of(_bug(None, found_through=("export", "export"))) == "export"
    assert evidence.target_of(_bug(None, found_through=("export", "aoti"))) == targets.DEFAULT


def test_the_stage_line_names_the_clean_stages_before_it_and_what_failed_otherwise_apart():
    lines = evidence.culprit_lines(_bug(Culprit("inductor", otherwise={"aot_eager": ("wrong-output",)})))
    assert lines[0] == ("- **Stage**: `inductor` is the first of torch's debugging backends that shows it "
                        "(`eager`, `aot_eager_decomp_partition` do not).")
    assert lines[1].startswith("- **Fails otherwise**: `aot_eager` shows `wrong-output` instead")
    assert evidence.culprit_lines(_bug(Culprit("aot_eager")))[0].endswith("that shows it (`eager` does not).")
    assert evidence.culprit_lines(_bug(Culprit("eager")))[0].endswith("that shows it.")


def test_a_cause_and_a_switch_that_makes_the_bug_go_are_said_with_the_setting_that_throws_it():
    culprit = Culprit("inductor", switches={"reorder_for_locality": "gone", "pattern_matcher": "stays"}, cause=CAUSE)
    lines = evidence.culprit_lines(_bug(culprit))
    assert f"(`{CAUSE}`: {causes.BY_NAME[CAUSE].probes})." in lines[1]
    assert "- **Workaround**: `torch._inductor.config.reorder_for_locality = False`." in lines
    assert "| reorder_for_locality | `torch._inductor.config.reorder_for_locality = False` | **gone** |" in lines
    assert "| pattern_matcher | `torch._inductor.config.pattern_matcher = False` | stays |" in lines


def test_where_no_stage_is_named_it_says_why():
    spent = evidence.culprit_lines(_bug(Culprit(None, budget_exhausted=True)))
    assert spent == ["Not localised: the fuzzer's triage ran out of budget before any stage showed the bug."]
    died = evidence.unplaced(_bug(None, kinds=(contract.CRASH,), blame="process:torch._inductor.scheduler:fuse"))
    assert died.endswith("the innermost frame of torch on its recorded stack is `torch._inductor.scheduler:fuse`.")
    walked = evidence.unplaced(_bug(Culprit(None), found_through=("export",)))
    assert walked.endswith("on the pieces of export's pipeline, each run alone.")
