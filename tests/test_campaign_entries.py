"""A finding as the campaign saves it (``fuzzer.campaign.entries``): its case cut after the
last binding its class reads, its entry built unshrunk, triaged where the config asks and
torch's stages lead, and localised through ``compile`` or its own target; stand-ins for
the probes, no compile."""

from types import SimpleNamespace

import pytest
from helpers import case, prog

from fuzzer.campaign import entries
from fuzzer.campaign.config import Config
from fuzzer.corpus.entry import Origin
from fuzzer.internal import InternalError
from fuzzer.judge import contract
from fuzzer.judge.trial import Finding
from fuzzer.triage.culprit import Culprit

C = case(prog({"x0": ("s0",)}, [("e_log", ["x0"], None, {"site": 0})]), [{"s0": n} for n in (4, 7, 2, 9)])
CONFIG = Config(seed=1, device="cpu", corpus_dir="c")


def _log(binding):
    return contract.Divergence(contract.EFFECT_LOG, binding, "sequence", "x", ("missing",))


def _error(binding):
    return contract.Divergence(contract.COMPILE_ERROR, binding, "compile", "boom", ("raised X in torch.y:z",))


def test_a_case_is_cut_after_the_last_binding_its_class_reads():
    logged = entries.own_bindings(Finding(contract.EFFECT_LOG, C, [_log(0), _log(1)], "cpu", "inductor"))
    assert len(logged.case.bindings) == 2 and [d.binding for d in logged.divergences] == [0, 1]
    error = entries.own_bindings(Finding(contract.COMPILE_ERROR, C, [_error(1), _error(2)], "cpu", "inductor"))
    assert len(error.case.bindings) == 2 and [d.binding for d in error.divergences] == [1]
    last = Finding(contract.EFFECT_LOG, C, [_log(3)], "cpu", "inductor")
    assert entries.own_bindings(last) is last


def test_a_found_entry_is_the_findings_own_unshrunk():
    e = entries.found_entry(Finding(contract.EFFECT_LOG, C, [_log(0)], "cpu", "inductor", target="export"), 7,
                            Config(seed=1, device="cpu", corpus_dir="c", fault="effect-dce"))
    assert (e.seed, e.fault, e.target, e.shrink) == (7, "effect-dce", "export", None)


@pytest.fixture
def culprits(monkeypatch):
    asked = []
    monkeypatch.setattr(entries, "culprit_of", lambda entry, *a: asked.append(entry.id) or Culprit("inductor"))
    return asked


def _entry(kind=contract.EFFECT_LOG, backend="inductor"):
    divergence = _log(0) if kind == contract.EFFECT_LOG else contract.Divergence(kind, 0, "process", "died")
    return entries.Entry.build(kind, C, [divergence], Origin(seed=1, device="cpu", backend=backend))


def test_triage_runs_where_the_config_asks_and_a_stage_walk_leads(culprits):
    assert entries.triaged(_entry(), CONFIG).culprit == Culprit("inductor")
    assert entries.triaged(_entry(), Config(seed=1, device="cpu", corpus_dir="c", triage=False)).culprit is None
    assert entries.triaged(_entry(contract.CRASH), CONFIG).culprit is None
    assert entries.triaged(_entry(backend="dcefuzz_test_eager"), CONFIG).culprit is None
    assert entries.triaged(_entry(), CONFIG, seconds_left=0).culprit is None
    assert len(culprits) == 1


def test_a_triage_our_own_code_breaks_leaves_the_entry_untriaged_and_the_error_kept(monkeypatch):
    monkeypatch.setattr(entries, "culprit_of", lambda *a: 1 / 0)
    errors = []
    assert entries.triaged(_entry(), CONFIG, errors=errors).culprit is None
    assert isinstance(errors[0], InternalError) and errors[0].type == "ZeroDivisionError"
    with pytest.raises(ZeroDivisionError):
        entries.triaged(_entry(), CONFIG)


def test_another_targets_finding_is_localised_through_compile_where_it_shows_there(monkeypatch):
    kind = SimpleNamespace(name="program", culprit=lambda *a: Culprit("inductor"))
    monkeypatch.setattr(entries.kinds, "of", lambda finding_kind: kind)
    e = _entry()
    e.target = "export"
    monkeypatch.setattr(entries, "shows_through_compile", lambda *a: True)
    assert entries.culprit_of(e, "cpu", None).via == "compile"
    monkeypatch.setattr(entries, "shows_through_compile", lambda *a: False)
    monkeypatch.setattr(entries.within, "walks", lambda target: False)
    assert entries.culprit_of(e, "cpu", None) is None
    e.target = "compile"
    assert entries.culprit_of(e, "cpu", None).via == ""
