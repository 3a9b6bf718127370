"""A crash or timeout's stage (``fuzzer.triage.casualty``): each probe a fresh process
on one backend, its death read as the walk's outcome, within the budget; stand-in
processes, none started."""

from types import SimpleNamespace

import pytest

from fuzzer.judge import contract
from fuzzer.limits import OracleBudget, PoolLimits
from fuzzer.triage import casualty
from fuzzer.triage.probe import BudgetSpent, Outcome

ENTRY = SimpleNamespace(kind=contract.CRASH, bug_class="crash|process died: SIGSEGV", fault=None, case=None,
                        backend="inductor")


def _death(confirms=False, judged=False, kind=None, after_eager=True, status=None):
    return SimpleNamespace(confirms=lambda bug_class: confirms, judged=judged, kind=kind, after_eager=after_eager,
                           status=status,
                           divergence=lambda: contract.Divergence(kind, 0, "process", "process died: SIGBUS"))


@pytest.fixture
def deaths(monkeypatch):
    """Each judge's run ends in the next of ``ends`` (a list to fill); records the seconds each got."""
    ends, seconds = [], []

    class Judge:
        def __init__(self, device, backend, fault, limits, limit, stop, checked):
            seconds.append(limit)
            assert checked

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def run(self, case):
            return ends.pop(0)

    monkeypatch.setattr(casualty, "IsolatedJudge", Judge)
    return SimpleNamespace(ends=ends, seconds=seconds)


def test_only_deaths_on_a_debugging_stage_are_walked_from_outside():
    assert casualty.walks(contract.CRASH, "inductor") and casualty.walks(contract.TIMEOUT, "aot_eager")
    assert not casualty.walks(contract.WRONG_OUTPUT, "inductor") and not casualty.walks(contract.CRASH, "standin")


def test_a_death_is_read_as_the_walks_outcome(deaths):
    deaths.ends += [_death(confirms=True), _death(judged=True), _death(kind=contract.CRASH),
                    _death(kind=contract.CRASH, after_eager=False), _death(status="untested")]
    probe = casualty.DeathProbe(ENTRY, "cpu", OracleBudget(oracle_calls=9, seconds=1e9))
    assert probe.outcome("eager") is Outcome.STAYS and probe.seen == ()
    assert probe.outcome("eager") is Outcome.GONE
    assert probe.outcome("eager") is Outcome.CHANGED and probe.seen == ("crash|process died: SIGBUS",)
    assert probe.outcome("eager") is Outcome.CHANGED and probe.seen == (contract.INVALID,)
    assert probe.outcome("eager") is Outcome.CHANGED and probe.seen == ("untested",)
    assert probe.calls == 5


def test_the_budget_refuses_a_process_and_a_timeout_gets_its_candidate_limit(deaths):
    probe = casualty.DeathProbe(ENTRY, "cpu", OracleBudget(oracle_calls=0, seconds=1e9))
    with pytest.raises(BudgetSpent):
        probe.outcome("eager")
    assert probe.exhausted and deaths.seconds == []
    deaths.ends.append(_death(confirms=True))
    hang = SimpleNamespace(**{**vars(ENTRY), "kind": contract.TIMEOUT})
    casualty.DeathProbe(hang, "cpu", OracleBudget(oracle_calls=1, seconds=1e9)).outcome("eager")
    assert deaths.seconds == [PoolLimits().casualty_candidate_seconds]


def test_localise_walks_up_to_the_backend_it_was_found_on(deaths):
    deaths.ends += [_death(judged=True), _death(confirms=True)]
    culprit = casualty.localise(ENTRY, "cpu", OracleBudget(oracle_calls=9, seconds=1e9))
    assert culprit.stage == "aot_eager" and culprit.oracle_calls == 2 and culprit.kind == contract.CRASH
