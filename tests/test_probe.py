"""One triage probe (``fuzzer.triage.probe``): the same bug class must show where the
finding showed it; a stand-in compile, no Inductor."""

import pytest
from helpers import case, klass, prog

from fuzzer.judge import contract
from fuzzer.judge.contract import INPUT, Divergence, Place
from fuzzer.judge.spots import WRITTEN, Spot
from fuzzer.triage import probe as probing
from fuzzer.triage.probe import Outcome, Probe

CASE = case(prog({"x0": ("s0",), "x1": ("s0",)}, [("m_scale", ["x0"], None, {"site": 0})]))
CLASS = klass("wrong-mutation|values")


def _written(name):
    return Divergence(contract.WRONG_MUTATION, 0, f"input {name}", "", ("values",), (Place(INPUT, name),))


@pytest.fixture
def shows(monkeypatch):
    """The stand-in compile shows what the test sets."""
    seen: list = []
    monkeypatch.setattr(probing, "judge_fresh", lambda *a, **k: contract.Verdict(contract.OK, list(seen)))
    return seen


@pytest.mark.parametrize("spots, where, outcome", [
    (frozenset({Spot(WRITTEN, "x0")}), "x0", Outcome.STAYS),      # where the finding showed it
    (frozenset({Spot(WRITTEN, "x0")}), "x1", Outcome.CHANGED),    # the class, elsewhere: another bug
    (None, "x1", Outcome.STAYS),                                  # an entry that records no spots
])
def test_a_probe_sees_the_bug_only_where_the_finding_showed_it(shows, spots, where, outcome):
    shows.append(_written(where))
    assert Probe(CASE, contract.WRONG_MUTATION, CLASS, "cpu", spots=spots).outcome("aot_eager") is outcome


def test_nothing_of_the_class_left_is_gone(shows):
    assert Probe(CASE, contract.WRONG_MUTATION, CLASS, "cpu", spots=frozenset({Spot(WRITTEN, "x0")})).outcome(
        "aot_eager") is Outcome.GONE
