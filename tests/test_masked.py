"""Bugs a finding's bug masks (``fuzzer.campaign.masked``): the stage its triage saw fail
otherwise, and the other families found there; a stand-in trial, no compile."""

from types import SimpleNamespace

from helpers import case, klass, prog

from fuzzer.campaign import masked
from fuzzer.judge import contract
from fuzzer.triage.culprit import Culprit

C = case(prog({"x0": ("s0",)}, [("p_sin", ["x0"], "v0", {"site": 0})], outputs=["v0"]))
WRONG = contract.Divergence(contract.WRONG_OUTPUT, 0, "output 0", "x", ("values",))
LOG = contract.Divergence(contract.EFFECT_LOG, 0, "sequence", "x", ("missing",))


def _entry(otherwise, kind=contract.COMPILE_ERROR, backend="inductor", stage="inductor"):
    return SimpleNamespace(kind=kind, backend=backend, device="cpu", case=C, bug_class=klass("compile-error|raised X"),
                           culprit=Culprit(stage, kind=kind, otherwise=otherwise))


def test_the_masked_stage_is_the_first_that_showed_another_kind_of_finding():
    e = _entry({"eager": ("invalid",), "aot_eager": ("wrong-output",), "aot_eager_decomp_partition": ("effect-log",)})
    assert masked.masked_stage(e) == "aot_eager"
    assert masked.masked_stage(_entry({"eager": ("untested",)})) is None
    assert masked.masked_stage(_entry({"aot_eager": ("wrong-output",)}, stage=None)) is None


def test_the_findings_of_other_families_on_that_stage_are_returned(monkeypatch):
    tried = []

    def run_trial(c, device, backend):
        tried.append(backend)
        return SimpleNamespace(findings=[SimpleNamespace(kind=contract.WRONG_OUTPUT, divergences=[WRONG]),
                                         SimpleNamespace(kind=contract.COMPILE_ERROR, divergences=[
                                             contract.Divergence(contract.COMPILE_ERROR, 0, "c", "X", ("raised X",))]),
                                         SimpleNamespace(kind=contract.EFFECT_LOG, divergences=[LOG])])

    monkeypatch.setattr(masked, "run_trial", run_trial)
    found = masked.masked(_entry({"aot_eager": ("wrong-output",)}), "inductor")
    assert tried == ["aot_eager"] and [f.kind for f in found] == [contract.WRONG_OUTPUT, contract.EFFECT_LOG]


def test_only_the_campaigns_own_backend_and_a_single_compiles_kinds_are_asked(monkeypatch):
    monkeypatch.setattr(masked, "run_trial", lambda *a: (_ for _ in ()).throw(AssertionError("tried")))
    otherwise = {"aot_eager": ("wrong-output",)}
    assert masked.masked(_entry(otherwise, backend="aot_eager"), "inductor") == []
    assert masked.masked(_entry(otherwise, kind=contract.CRASH), "inductor") == []
    assert masked.masked(_entry({}), "inductor") == []
