"""Recognising a known bug in a finding by the probes that define its key
(``fuzzer.triage.recognise``), and a campaign classifying a repeat that way."""

from pathlib import Path

import pytest

from fuzzer.campaign import entries
from fuzzer.campaign.config import Config
from fuzzer.corpus.bugs import key_of
from fuzzer.corpus.store import load
from fuzzer.judge import contract
from fuzzer.judge.trial import Finding
from fuzzer.limits import TRIAGE
from fuzzer.triage.culprit import Culprit
from fuzzer.triage.recognise import Claim, candidates, claim_of, rechecked, recognise

CORPUS = Path(__file__).resolve().parent.parent / "corpus"
REORDER = "effect-log-915158cff0e3.json"  # blamed on the peak-memory reordering


def test_a_key_says_what_its_probes_can_check_or_nothing():
    assert claim_of("effect-log|reordered @ inductor:reorder_for_peak_memory") == Claim(
        "effect-log|reordered @ inductor:reorder_for_peak_memory", "inductor", "reorder_for_peak_memory", (), False)
    key = ("corrupted-value|values @ inductor:reinplace_inplaceable_ops (also gone with remove_noop_ops off)"
           " [dynamic shapes only]")
    claim = claim_of(key)
    assert (claim.switch, claim.also, claim.dynamic_only) == ("reinplace_inplaceable_ops", ("remove_noop_ops",), True)
    assert claim.gone == ("remove_noop_ops", "reinplace_inplaceable_ops")
    pair = claim_of("corrupted-value|values @ inductor:remove_noop_ops+reinplace_inplaceable_ops")
    assert pair.switch == "remove_noop_ops+reinplace_inplaceable_ops"
    assert claim_of("compile-error|AssertionError: @ eager [dynamic shapes only]").stage == "eager"
    # what only a bisection, or nothing, says again is not claimed
    assert claim_of("compile-error|AssertionError: @ inductor:decompose_auto_functionalized_v2_pass") is None
    assert claim_of("corrupted-value|values @ inductor:lowerings") is None
    assert claim_of("missed-dce @ entry:missed-dce-0123") is None
    assert claim_of("missed-dce @ cache:aot_autograd_cache") is None
    # only the finding's own family
    keys = ["effect-log|reordered @ eager", "effect-log|missing @ eager", "effect-log|reordered @ inductor:lowerings"]
    assert [c.key for c in candidates("effect-log|data,reordered", keys)] == ["effect-log|reordered @ eager"]


def test_one_finding_in_so_many_is_triaged_in_full_the_same_on_every_run():
    picked = [s for s in range(400) if rechecked(s)]
    assert picked == [s for s in range(400) if rechecked(s)]
    assert 400 / TRIAGE.recheck_one_in * 0.6 < len(picked) < 400 / TRIAGE.recheck_one_in * 1.4
    assert rechecked(None)  # a finding of no program seed: always in full


@pytest.mark.compile
def test_a_known_bugs_probes_recognise_its_finding_and_refuse_every_other_claim():
    entry = load(CORPUS / REORDER)
    key = key_of(entry)
    assert key == "effect-log|reordered @ inductor:reorder_for_peak_memory"
    wrong = ["effect-log|reordered @ eager",                                     # the stage
             "effect-log|reordered @ inductor:reinplace_inplaceable_ops",        # the switch
             "effect-log|reordered @ inductor:reorder_for_peak_memory [dynamic shapes only]",  # static shapes
             "effect-log|reordered @ inductor:reorder_for_peak_memory (also gone with fusion off)",
             "effect-log|missing @ inductor:reorder_for_peak_memory"]            # another family
    assert recognise(entry.case, entry.kind, entry.bug_class, "cpu", wrong) is None
    found = recognise(entry.case, entry.kind, entry.bug_class, "cpu", wrong + [key])
    assert found is not None and found.recognised and found.key == entry.culprit.key
    # eager, aot_eager, decompositions, static shapes, the two switches, fusion: each asked once
    assert found.oracle_calls <= 7 < entry.culprit.oracle_calls
    assert Culprit.from_json(found.to_json()).recognised  # and says so in its record


def test_a_repeat_is_counted_by_recognition_and_triaged_in_full_when_rechecked_or_unrecognised(monkeypatch,
                                                                                             tmp_path):
    entry = load(CORPUS / REORDER)
    key = key_of(entry)
    divs = [contract.Divergence(contract.EFFECT_LOG, 0, "effect log", "reordered", (contract.REORDERED,))]
    finding = Finding(entry.kind, entry.case, divs, "cpu", "inductor")
    config = Config(seed=0, device="cpu", corpus_dir=str(tmp_path))
    calls = []

    def recognised(e, config, keys, seconds_left=None, errors=None):
        calls.append("recognise")
        return entry.culprit if key in keys else None

    def triaged(e, config, seconds_left=None, errors=None):
        calls.append("triage")
        e.culprit = entry.culprit
        return e

    monkeypatch.setattr(entries, "recognised", recognised)
    monkeypatch.setattr(entries, "triaged", triaged)
    assert entries.found_entry(finding, 0, config).bug_class == entry.bug_class
    seed = next(s for s in range(100) if not rechecked(s))
    assert key_of(entries.counted_only(finding, seed, config, {key: 1})) == key
    assert calls == ["recognise"]  # recognised: no triage
    calls.clear()
    other = "effect-log|reordered @ eager"
    assert entries.counted_only(finding, seed, config, {other: 1}) is None
    assert calls == ["recognise", "triage"]  # no claim held: triaged in full, another bug
    calls.clear()
    again = next(s for s in range(100) if rechecked(s))
    assert key_of(entries.counted_only(finding, again, config, {key: 1})) == key
    assert calls == ["triage"]  # rechecked: triaged in full whatever it matches
