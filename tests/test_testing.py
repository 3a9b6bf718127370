"""The property-test helper (``fuzzer.testing``): a broken contract raised with its repro,
a case that says nothing rejected or raised as such, a performance finding counted only
when asked; trial results stood in, no compile."""

from types import SimpleNamespace

import pytest
from helpers import case, divergence_on, prog

from fuzzer import testing
from fuzzer.judge import contract, trial
from fuzzer.judge.observe import Gap
from fuzzer.judge.trial import Finding

C = case(prog({"x0": ("s0",)}, [("e_log", ["x0"], None, {"site": 0})]))
DCE = contract.Divergence(contract.MISSED_DCE, 0, "call", "ran", ("plain",))


def _result(monkeypatch, status, findings=(), reason="", untested=()):
    verdict = contract.Verdict(contract.OK, reason=reason, untested=list(untested))
    monkeypatch.setattr(trial, "run_trial", lambda *a: SimpleNamespace(status=status, findings=list(findings),
                                                                         verdict=verdict, flaky_kinds=[]))


def test_a_clean_case_passes_and_a_broken_contract_is_raised_with_its_repro(monkeypatch):
    _result(monkeypatch, "clean")
    assert testing.assert_contract(C) is None
    _result(monkeypatch, "finding", [Finding(contract.EFFECT_LOG, C, [divergence_on(0)], "cpu", "inductor")])
    with pytest.raises(testing.ContractViolation, match="broke the contract: effect-log") as broken:
        testing.assert_contract(C)
    assert broken.value.entry.kind == contract.EFFECT_LOG and "def program(" in broken.value.brief
    assert broken.value.repro.startswith('"""dcefuzz finding')


def test_a_missed_dce_counts_only_when_performance_is_asked(monkeypatch):
    _result(monkeypatch, "finding", [Finding(contract.MISSED_DCE, C, [DCE], "cpu", "inductor")])
    assert testing.assert_contract(C) is None
    with pytest.raises(testing.ContractViolation, match="missed-dce"):
        testing.assert_contract(C, performance=True)


def test_a_case_that_says_nothing_is_no_pass_outside_hypothesis(monkeypatch):
    _result(monkeypatch, "untested", untested=[Gap("graph-break", "a break\nmore")])
    with pytest.raises(testing.CannotJudge, match="untested") as said:
        testing.assert_contract(C)
    assert said.value.reason == "graph-break: a break" and not isinstance(said.value, AssertionError)
    _result(monkeypatch, "invalid", reason="eager raised")
    with pytest.raises(testing.CannotJudge, match="eager raised"):
        testing.assert_contract(C)
