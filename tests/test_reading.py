"""The ladder a replay reads a verdict by (``fuzzer.judge.reading``): each rung on a
hand-built verdict, and a death read the same way."""

import pytest

from fuzzer.judge import contract
from fuzzer.judge.observe import Gap
from fuzzer.judge.reading import Reading, read_death, read_verdict

LOG = contract.Divergence(contract.EFFECT_LOG, 0, "sequence", "x", ("missing",))
WANTED = contract.bug_class(contract.EFFECT_LOG, [LOG])
RAISED = contract.Divergence(contract.RUNTIME_ERROR, 0, "run", "boom", ("raised X in torch.y:z",))


@pytest.mark.parametrize("verdict, reading", [
    (contract.Verdict(contract.INVALID, reason="eager raised"), Reading.NOT_JUDGED),
    (contract.Verdict(contract.OK, [LOG]), Reading.REPRODUCES),
    (contract.Verdict(contract.OK, [contract.Divergence(contract.EFFECT_LOG, 0, "sequence", "x", ("extra",))]),
     Reading.ANOTHER_BUG),
    (contract.Verdict(contract.OK, [RAISED]), Reading.RAISED),
    (contract.Verdict(contract.OK, untested=[Gap("graph-break", "Graph break\nmore")]), Reading.UNTESTED),
    (contract.Verdict(contract.OK), Reading.ABSENT),
])
def test_each_rung_of_the_ladder(verdict, reading):
    assert read_verdict(contract.EFFECT_LOG, WANTED, verdict).reading is reading


def test_a_rung_says_what_it_is_about_and_only_some_judge():
    assert read_verdict(contract.EFFECT_LOG, WANTED, contract.Verdict(contract.OK, [RAISED])).reason == \
        "runtime-error|raised X in torch.y:z"
    untested = read_verdict(contract.EFFECT_LOG, WANTED,
                            contract.Verdict(contract.OK, untested=[Gap("graph-break", "Graph break\nmore")]))
    assert untested.reason == "graph-break: Graph break" and not untested.judged
    assert read_verdict(contract.EFFECT_LOG, WANTED, contract.Verdict(contract.OK)).judged


@pytest.mark.parametrize("seen, eager_done, judged, reading", [
    ("crash|process died: SIGSEGV", False, False, Reading.NOT_JUDGED),
    ("crash|process died: SIGSEGV", True, False, Reading.REPRODUCES),
    ("crash|process died: heap corruption", True, False, Reading.REPRODUCES),  # a corrupted heap dies so
    ("crash|process died: SIGBUS", True, False, Reading.ANOTHER_BUG),
    (None, True, False, Reading.UNTESTED),
    (None, True, True, Reading.ABSENT),
])
def test_a_death_is_read_by_the_same_rungs(seen, eager_done, judged, reading):
    assert read_death("crash|process died: SIGSEGV", seen, eager_done, judged).reading is reading
