"""A campaign worker's work (``fuzzer.campaign.worker``): one program's report, what it
says before shrinking, our own errors reported never crashed on, and the heap frozen once;
run in this process, its trial and shrinks stood in."""

from types import SimpleNamespace

import pytest
from helpers import case, prog

from fuzzer.campaign import entries, worker
from fuzzer.campaign.config import Config
from fuzzer.campaign.messages import Done, Run, Triaging, Tried
from fuzzer.internal import INTERNAL_ERROR
from fuzzer.judge import contract
from fuzzer.judge.trial import Finding
from fuzzer.limits import PoolLimits

C = case(prog({"x0": ("s0",)}, [("e_log", ["x0"], None, {"site": 0})]))
LOG = contract.Divergence(contract.EFFECT_LOG, 0, "sequence", "x", ("missing",))


def _trial(findings=()):
    return SimpleNamespace(status="finding" if findings else "clean", findings=list(findings), flaky_kinds=[],
                           recompiles=1, untested=None, reached={})


@pytest.fixture
def stood_in(monkeypatch):
    """The trial and what follows it, stood in: every finding kept as found."""
    monkeypatch.setattr(entries, "counted_only", lambda *a, **k: None)
    monkeypatch.setattr(entries, "shrunk_entry", lambda f, seed, config, *a, **k: entries.found_entry(f, seed, config))
    monkeypatch.setattr(entries, "triaged", lambda e, *a, **k: e)
    monkeypatch.setattr(entries, "masked_entries", lambda *a, **k: [])
    monkeypatch.setattr(entries, "oracle_of", lambda *a: None)


def test_a_clean_program_reports_at_once_and_a_finding_says_so_before_its_shrink(stood_in, monkeypatch):
    config = Config(seed=1, device="cpu", corpus_dir="c")
    said = []
    monkeypatch.setattr(entries, "trial_of", lambda *a: _trial())
    clean = worker._program(said.append, 3, 99, config, None)
    assert clean.status == "clean" and clean.entries == [] and said == []
    monkeypatch.setattr(entries, "trial_of", lambda *a: _trial([Finding(contract.EFFECT_LOG, C, [LOG], "cpu",
                                                                         "inductor")]))
    found = worker._program(said.append, 3, 99, config, None)
    assert [type(m) for m in said] == [Tried, Triaging] and len(said[0].report.entries) == 1
    assert found.status == "finding" and len(found.entries) == 1 and found.trial_seconds <= found.seconds


def test_our_own_error_in_the_trial_is_an_internal_error_report(monkeypatch):
    monkeypatch.setattr(entries, "trial_of", lambda *a: 1 / 0)
    report = worker._program(lambda m: None, 0, 1, Config(seed=1, device="cpu", corpus_dir="c"), None)
    assert report.status == INTERNAL_ERROR and report.errors[0]["type"] == "ZeroDivisionError"


def test_the_worker_answers_every_program_and_freezes_its_heap_once(monkeypatch):
    frozen, said = [], []
    monkeypatch.setattr(worker, "freeze_heap", lambda: frozen.append(True))
    monkeypatch.setattr(worker, "_program", lambda send, index, *a: 1 / 0 if index == 1 else
                        worker.Report("clean", 0.1))
    w = worker.Worker(Config(seed=1, device="cpu", corpus_dir="c"), PoolLimits(freeze_after_programs=2))
    for index in range(3):
        w(Run(index, 7, None, {}), said.append)
    assert [type(m) for m in said] == [Done] * 3 and said[1].report.status == INTERNAL_ERROR
    assert frozen == [True]
