"""The cache-pair trial kind (``fuzzer.cache.kind``): the findings it owns, programs of
its own drawing, and each question handed to the cache modules; pairs stood in."""

from types import SimpleNamespace

from fuzzer.cache import kind, trial
from fuzzer.cache.kind import KIND
from fuzzer.cache.variants import Variant
from fuzzer.campaign.config import Config
from fuzzer.judge import contract, kinds
from fuzzer.limits import CACHE

CONFIG = Config(seed=1, device="cpu", corpus_dir="c", trial=kind.NAME)


def test_it_owns_the_stale_cache_findings_and_plants_faults_in_its_sides():
    assert KIND.findings == (contract.STALE_CACHE,) and KIND.fault_in_sides
    assert kinds.of(contract.STALE_CACHE).name == kind.NAME
    assert KIND.shrink_budget(CONFIG) == CACHE.shrink


def test_a_case_is_its_own():
    assert KIND.case(4, CONFIG) == trial.cache_case(4)


def test_a_program_no_variant_applies_to_is_untested(monkeypatch):
    monkeypatch.setattr(trial, "variant_for", lambda case, pseed: None)
    result = KIND.trial(4, CONFIG)
    assert result.status == "untested" and result.verdict.untested[0].reason == "no-variant"


def test_the_oracle_and_culprit_run_the_entrys_own_variant(monkeypatch):
    variant = Variant("effect-added", "p_sin", "p_sin: ORDERED effect registered")
    seen = []
    monkeypatch.setattr(trial, "judge_pair", lambda case, v, *a, **k: seen.append(v) or "verdict")
    monkeypatch.setattr(kind.blame, "localise", lambda case, v, *a: seen.append(v) or "culprit")
    found = SimpleNamespace(variant=variant.to_json(), case="c", bug_class="b", backend="inductor")
    assert KIND.oracle(found, "cpu", "inductor")("c") == "verdict"
    assert KIND.culprit(found, "cpu", None) == "culprit"
    assert seen == [variant, variant]
