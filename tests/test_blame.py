"""A stale cache's culprit (``fuzzer.cache.blame``): the pair run with the FX graph cache
alone, and the cache blamed by what it shows; pairs stood in, no process."""

import pytest
from helpers import klass

from fuzzer.cache import blame
from fuzzer.cache.variants import Variant
from fuzzer.judge import contract
from fuzzer.limits import OracleBudget

VARIANT = Variant("mutates-fixed", "m_addto", "m_addto: mutates_args () -> ('a',)")
FOUND = klass("stale-cache|mutates-fixed,values,wrong-output")


def _stale(*symptoms):
    return contract.Verdict(contract.OK, [contract.Divergence(contract.STALE_CACHE, 0, "output 0", "x", symptoms)])


@pytest.mark.parametrize("verdict, stage, subsystem, outcome", [
    (_stale("mutates-fixed", "wrong-mutation", "values"), "cache", "fx_graph_cache", "stays"),  # the same family
    (contract.Verdict(contract.OK), "cache", "aot_autograd_cache", "gone"),
    (contract.Verdict(contract.INVALID), None, None, "changed"),
])
def test_the_fx_graph_cache_alone_tells_which_cache_to_blame(monkeypatch, verdict, stage, subsystem, outcome):
    asked = []
    monkeypatch.setattr(blame.trial, "judge_pair", lambda *a, caches, **k: asked.append(caches) or verdict)
    culprit = blame.localise(None, VARIANT, FOUND, "cpu")
    assert asked == [(blame.INNER,)]
    assert (culprit.stage, culprit.subsystem, culprit.switches) == (stage, subsystem, {"fx_graph only": outcome})
    assert culprit.pass_name == VARIANT.label and culprit.kind == contract.STALE_CACHE and culprit.oracle_calls == 1


def test_no_budget_asks_nothing(monkeypatch):
    monkeypatch.setattr(blame.trial, "judge_pair", lambda *a, **k: pytest.fail("a pair was run"))
    culprit = blame.localise(None, VARIANT, FOUND, "cpu", OracleBudget(oracle_calls=0, seconds=60))
    assert culprit.budget_exhausted and culprit.stage is None and culprit.oracle_calls == 0
