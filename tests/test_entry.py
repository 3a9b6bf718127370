"""A corpus entry (``fuzzer.corpus.entry``): the one place that builds it, its id, its
hits and its JSON; hand-written cases, no compile."""

import pytest
from helpers import case, divergence_on, prog

from fuzzer.corpus.entry import BadEntry, Entry, Origin, entry_id
from fuzzer.judge import contract
from fuzzer.limits import CORPUS
from fuzzer.reduce import signature

C = case(prog({"x0": ("s0",)}, [("p_sin", ["x0"], "v0", {"site": 0}), ("e_log", ["v0"], None, {"site": 1})]))


def _entry(c=C, notes=(), **origin):
    """An entry of ``c`` found as ``origin`` says (seed 3 on cpu through inductor unless
    it says otherwise)."""
    found = Origin(**{"seed": 3, "device": "cpu", "backend": "inductor", **origin})
    return Entry.build(contract.EFFECT_LOG, c, [divergence_on(0)], found, notes=notes)


SIG = signature.Signature(contract.BugClass(contract.EFFECT_LOG, ("reordered",)), "x0[s0]; return ()")


def test_the_id_is_the_kind_and_a_hash_of_the_signature_and_a_targets_name():
    other = signature.Signature(SIG.bug_class, "x0[s0,s1]; return ()")
    assert entry_id("effect-log", SIG) == entry_id("effect-log", signature.Signature.parse(SIG.text))
    assert entry_id("effect-log", SIG).startswith("effect-log-") and len(entry_id("effect-log", SIG)) == 23
    assert entry_id("effect-log", SIG) != entry_id("effect-log", other)
    assert entry_id("effect-log", SIG, "export") != entry_id("effect-log", SIG)


def test_build_derives_the_signature_id_and_detail_from_the_divergences():
    e = _entry(notes=["a note"], threads=2)
    assert e.signature == signature.of(contract.EFFECT_LOG, C, [divergence_on(0)])
    assert e.id == entry_id(contract.EFFECT_LOG, e.signature)
    assert e.detail == [divergence_on(0).line(), "a note"] and e.threads == 2
    assert e.bug_class == contract.bug_class(contract.EFFECT_LOG, [divergence_on(0)])
    assert e.statements == 2 and e.seen == ""


def test_reduced_keeps_what_the_entry_was_found_with_on_the_smaller_case():
    e = _entry(fault="f", hits=4, found="2026-01-01T00:00:00+00:00", threads=1, target="export")
    smaller = case(prog({"x0": ("s0",)}, [("e_log", ["x0"], None, {"site": 0})]))
    r = e.reduced(smaller, [divergence_on(0)], {"statements": 1})
    assert (r.seed, r.fault, r.hits, r.found, r.threads, r.target) == (3, "f", 4, e.found, 1, "export")
    assert r.statements == 1 and r.shrink == {"statements": 1} and r.id != e.id


def test_hits_count_on_and_keep_only_the_newest_times():
    e = _entry()
    e.hit("2026-01-02", 2, ["2026-01-01"])
    assert e.hits == 3 and e.last_seen == "2026-01-02" and e.seen == "2026-01-02"
    assert e.hit_times == ["2026-01-01", "2026-01-02", "2026-01-02"]
    e.hit("2027", CORPUS.hit_times_kept + 5)
    assert len(e.hit_times) == CORPUS.hit_times_kept and e.hit_times[-1] == "2027"


def test_the_json_round_trips_and_a_bad_one_is_named():
    e = _entry(target="export")
    back = Entry.from_json(e.to_json())
    assert back.to_json() == e.to_json() and back.spots == e.spots
    data = e.to_json()
    with pytest.raises(BadEntry, match="missing fields"):
        Entry.from_json({k: v for k, v in data.items() if k != "detail"})
    with pytest.raises(BadEntry, match="schema"):
        Entry.from_json({**data, "schema": 99})
    with pytest.raises(BadEntry, match="invalid program"):
        Entry.from_json({**data, "bindings": [{"s0": 3, "s9": 1}]})
