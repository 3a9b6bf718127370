"""Shrinking a saved entry again (``fuzzer.replay.reshrink``): the smaller entry takes
the old one's place with its hits, the same id counts none twice, another target's stays
beside it, and one that no longer reproduces is left alone; a stand-in oracle."""

from types import SimpleNamespace

import pytest
from helpers import case, divergence_on, prog, stays_while

from fuzzer.corpus import store
from fuzzer.corpus.entry import Entry, Origin
from fuzzer.judge import contract
from fuzzer.limits import UNBOUNDED
from fuzzer.replay import reshrink

BODY = [("p_sin", ["x0"], "v0", {"site": 0}), ("e_log", ["x0"], None, {"site": 1}), ("clone", ["x0"], "v1", {})]


def _has_log(c):
    return any(s.form == "e_log" for s in c.program.body)


@pytest.fixture
def saved(tmp_path, monkeypatch):
    e = Entry.build(contract.EFFECT_LOG, case(prog({"x0": ("s0",)}, BODY)), [divergence_on(0)],
                    Origin(seed=1, device="cpu", backend="inductor", hits=3))
    path, _ = store.save(e, tmp_path)
    return store.load(path), path


def _oracle(monkeypatch, rule):
    """The entry's kind, judging by ``rule`` (its scripts still written as the kind's)."""
    real = reshrink.kinds.of(contract.EFFECT_LOG)
    kind = SimpleNamespace(oracle=lambda entry, device, backend, fault: stays_while(rule), fault_in_sides=False,
                           script=real.script)
    monkeypatch.setattr(reshrink.kinds, "of", lambda finding_kind: kind)


def test_the_smaller_entry_takes_the_old_ones_place_and_its_hits(saved, monkeypatch):
    entry, path = saved
    _oracle(monkeypatch, _has_log)
    new_path, before, after = reshrink.reshrink(entry, path, "cpu", UNBOUNDED)
    assert (before, after) == (3, 1) and not path.exists()
    new = store.load(new_path)
    assert new.hits == 3 and new.shrink["original_statements"] == 3 and new.statements == 1


def test_an_entry_that_no_longer_reproduces_is_left_alone(saved, monkeypatch):
    entry, path = saved
    _oracle(monkeypatch, lambda c: False)
    assert reshrink.reshrink(entry, path, "cpu", UNBOUNDED) is None and path.exists()


def test_the_same_id_adds_no_hits_and_another_targets_entry_stays_beside(saved):
    entry, path = saved
    same = Entry.from_json(entry.to_json())
    reshrink.put_in_place(entry, path, same)
    assert store.load(path).hits == 3
    other = Entry.from_json({**entry.to_json(), "target": "export"})
    other.id = "effect-log-0000000export"
    other_path = reshrink.put_in_place(entry, path, other)
    assert path.exists() and other_path.exists() and other_path != path
