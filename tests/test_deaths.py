"""Deaths as verdicts (``fuzzer.isolation.deaths``): what a survivor's run says of a death
looked for, and which death confirms a crash; hand-built verdicts and deaths, no child."""

import pytest
from helpers import klass

from fuzzer.isolation import deaths
from fuzzer.isolation.deaths import Death
from fuzzer.judge import contract
from fuzzer.judge.observe import Gap

RAISED = contract.Divergence(contract.COMPILE_ERROR, 0, "compile", "boom", ("raised X in torch.y:z",))


@pytest.mark.parametrize("verdict, status", [
    (contract.Verdict(contract.OK), contract.OK),
    (contract.Verdict(contract.OK, [contract.Divergence(contract.WRONG_OUTPUT, 0, "o", "x", ("values",))]),
     contract.OK),
    (contract.Verdict(contract.INVALID), contract.INVALID),
    (contract.Verdict(contract.NONDETERMINISTIC), contract.NONDETERMINISTIC),
    (contract.Verdict(contract.OK, [RAISED]), deaths.RAISED),
    (contract.Verdict(contract.OK, untested=[Gap("graph-break")]), deaths.UNTESTED),
])
def test_a_survivor_says_how_far_its_run_got(verdict, status):
    assert deaths.survivor_status(verdict) == status


def test_a_death_after_eager_confirms_its_own_class_and_a_heap_corruptions():
    segv = Death(contract.CRASH, "process died: SIGSEGV")
    assert segv.confirms(klass("crash|process died: SIGSEGV"))
    assert segv.confirms(klass("crash|process died: heap corruption"))
    assert not segv.confirms(klass("crash|process died: SIGABRT"))
    assert not Death(contract.CRASH, "process died: SIGSEGV", after_eager=False).confirms(
        klass("crash|process died: SIGSEGV"))
    assert not Death(None, "ran to completion", status=contract.OK).confirms(klass("crash|process died: SIGSEGV"))


def test_only_a_survivor_judged_clean_by_our_code_is_judged():
    assert Death(None, "ran", status=contract.OK).judged
    assert not Death(None, "ran", status=deaths.UNTESTED).judged
    assert not Death(None, "ran", status=contract.OK, internal=True).judged
    assert Death(contract.TIMEOUT, "x").line() == "timeout: x" and Death(None, "ran").line() == "ran"
