"""Replaying an entry (``fuzzer.replay.rerun``): reproduces only if a fresh compile shows
it again, flaky if it does not, an error where nothing could be judged; a stand-in
oracle and stand-in deaths, no compile."""

from types import SimpleNamespace

import pytest
from helpers import case, divergence_on, klass, prog

from fuzzer.corpus import store
from fuzzer.corpus.entry import Entry, Origin
from fuzzer.isolation.deaths import Death
from fuzzer.judge import contract
from fuzzer.replay import rerun

C = case(prog({"x0": ("s0",)}, [("e_log", ["x0"], None, {"site": 0})]))
SHOWS = contract.Verdict(contract.OK, [divergence_on(0)])
CLEAN = contract.Verdict(contract.OK)


@pytest.fixture
def saved(tmp_path):
    e = Entry.build(contract.EFFECT_LOG, C, [divergence_on(0)], Origin(seed=1, device="cpu", backend="inductor"))
    path, _ = store.save(e, tmp_path)
    return path


def _verdicts(monkeypatch, *verdicts):
    given = iter(verdicts)
    monkeypatch.setattr(rerun.kinds, "oracle", lambda entry, dev, backend: lambda c: next(given))


@pytest.mark.parametrize("verdicts, outcome, detail", [
    ((SHOWS, SHOWS), rerun.REPRODUCES, divergence_on(0).line()),
    ((SHOWS, CLEAN), rerun.FIXED, "did not recur after a fresh compile (flaky)"),
    ((CLEAN,), rerun.FIXED, "no divergence of this kind"),
    ((SHOWS, contract.Verdict(contract.INVALID, reason="eager raised")), rerun.ERROR, "reproduced, then"),
])
def test_a_replay_reproduces_only_when_a_fresh_compile_shows_it_again(saved, monkeypatch, verdicts, outcome, detail):
    _verdicts(monkeypatch, *verdicts)
    result = rerun.replay_entry(saved)
    assert result.outcome == outcome and result.detail.startswith(detail)


def test_an_entry_that_cannot_be_read_or_run_here_is_an_error(saved, tmp_path):
    bad = tmp_path / "broken.json"
    bad.write_text("{}")
    assert rerun.replay_entry(bad).outcome == rerun.ERROR
    away = rerun.replay_entry(saved, device="cuda:7")
    assert away.outcome == rerun.ERROR and not away.judged and "cannot run on cuda:7" in away.detail


def test_a_crash_gets_several_fresh_processes_one_dying_so_is_enough():
    died = Death(contract.CRASH, "process died: SIGSEGV")
    survived = Death(None, "ran to completion (ok)", status=contract.OK)
    entry = SimpleNamespace(bug_class=klass("crash|process died: SIGSEGV"))
    runs = [rerun._death_read(entry, d) for d in (survived, died)]
    assert [r.outcome for r in runs] == [rerun.FIXED, rerun.REPRODUCES]
    assert rerun.combined(runs).outcome == rerun.REPRODUCES
    other = rerun._death_read(entry, Death(contract.CRASH, "process died: SIGBUS"))
    assert other.outcome == rerun.ERROR and other.detail.startswith("another death")
    assert rerun.combined([other, runs[0]]).outcome == rerun.FIXED and rerun.combined([other]) is other
    assert rerun.tries(contract.CRASH) > 1 and rerun.tries(contract.TIMEOUT) == 1
