"""benchmarks/known.py: which public bugs a campaign rediscovered, matched by the key a
campaign logs (fabricated campaign folders and the committed records), and one
hand-written record tried here (one compile)."""

import importlib.util
import json
import sys
from pathlib import Path

import pytest

from fuzzer.campaign.state import CampaignFolder
from fuzzer.corpus import bugs
from fuzzer.corpus.store import load_all
from fuzzer.judge.contract import BugClass
from fuzzer.program.ir import Case

ROOT = Path(__file__).resolve().parent.parent


def _module():
    spec = importlib.util.spec_from_file_location("known_benchmark", ROOT / "benchmarks" / "known.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


known = _module()


def _bench(tmp_path, records):
    folder = tmp_path / "bench"
    folder.mkdir()
    for number, record in records.items():
        (folder / f"{number}.json").write_text(json.dumps(record))
    return known.load(folder)


def _record(key=None, expressible=True, area=""):
    observed = {"2.13.0+cpu": {"status": "finding", "key": key.text}} if key else {}
    return {"issue": "pytorch/pytorch#1", "symptom": "wrong-output", "form": "f", "expressible": expressible,
            **({"area": area} if area else {}),
            **({"entry": {"source": "hand-written", "case": {}, "observed": observed}} if expressible else
               {"needs": "a form"})}


KEY_A = bugs.BugKey(BugClass.parse("wrong-output|values"), "inductor:reinplace_inplaceable_ops")
KEY_B = bugs.BugKey(BugClass.parse("effect-log|reordered"), "inductor:reorder_for_peak_memory")


def _campaign(tmp_path, name, lines):
    folder = CampaignFolder(tmp_path / name)
    for seconds, program, key in lines:
        folder.log_bug(seconds, program, bugs.bug_id(key), key.text, "wrong-output", True)
    return folder.path


def test_a_bug_logged_under_an_entrys_key_is_rediscovered_at_its_first_hit(tmp_path):
    bench = _bench(tmp_path, {"10": _record(KEY_A), "11": _record(KEY_B), "12": _record(expressible=False)})
    one = _campaign(tmp_path, "one", [(30.0, 4, KEY_B), (95.0, 17, KEY_A)])
    two = _campaign(tmp_path, "two", [(12.0, 2, KEY_A)])
    found = known.rediscovered(bench, [one, two])
    assert set(found) == {"10", "11"}
    assert (found["10"].seconds, found["10"].program, found["10"].folder) == (12.0, 2, str(two))
    assert (found["11"].seconds, found["11"].program) == (30.0, 4)


def test_another_key_of_the_same_family_is_not_a_rediscovery(tmp_path):
    bench = _bench(tmp_path, {"10": _record(KEY_A)})
    other = bugs.BugKey(BugClass.parse("wrong-output|values"), "inductor:remove_noop_ops")
    assert known.rediscovered(bench, [_campaign(tmp_path, "c", [(5.0, 1, other)])]) == {}


def test_the_report_counts_expressible_bugs_and_rediscoveries(tmp_path):
    bench = _bench(tmp_path, {"10": _record(KEY_A), "11": _record(), "12": _record(expressible=False)})
    text = known.report(bench, [_campaign(tmp_path, "c", [(95.0, 17, KEY_A)])])
    assert text.splitlines()[0].startswith("3 public bugs; 2 expressible today (66 %), 1 of them with a key")
    assert "rediscovered 1 of 1" in text.splitlines()[0]
    assert "REDISCOVERED at 95 s, program 17" in text
    assert "not expressible (a form)" in text


def test_the_report_counts_the_aliasing_and_layout_rows_apart(tmp_path):
    bench = _bench(tmp_path, {"10": _record(KEY_A, area="aliasing"), "11": _record(area="layout"),
                              "12": _record(expressible=False, area="aliasing"), "13": _record(KEY_B)})
    text = known.report(bench, [_campaign(tmp_path, "c", [(95.0, 17, KEY_A), (99.0, 18, KEY_B)])])
    assert text.splitlines()[1] == ("aliasing and layout rows: 3 (2 aliasing, 1 layout); 2 expressible, "
                                    "1 with a key; rediscovered 1 of 1")


def test_a_campaign_without_a_bug_log_is_read_from_its_corpus(tmp_path):
    entry = load_all([str(ROOT / "corpus" / "wrong-mutation-3e93a770411a.json")])[0][0]
    corpus = tmp_path / "c" / "corpus"
    corpus.mkdir(parents=True)
    (corpus / f"{entry.id}.json").write_text(json.dumps(entry.to_json()))
    bench = _bench(tmp_path, {"10": _record(bugs.key_of(entry))})
    found = known.rediscovered(bench, [tmp_path / "c"])
    assert set(found) == {"10"} and found["10"].seconds is None


def test_the_committed_records_are_whole():
    bench = known.load()
    assert len(bench) >= 25
    assert len({k.issue for k in bench}) == len(bench)
    for k in bench:
        assert k.symptom in known.SYMPTOMS, k.issue
        assert k.issue == f"pytorch/pytorch#{k.number}"
        assert (k.case is not None) == k.expressible, k.issue
        assert k.expressible or k.needs, k.issue
        assert k.area in ("",) + known.AREAS, k.issue
        if k.case is not None:
            Case.from_json(k.case).validate()  # a program the generator's rules accept


@pytest.mark.parametrize("k", [k for k in known.load() if k.source.startswith("corpus:")], ids=lambda k: k.number)
def test_an_entry_from_the_corpus_carries_its_entrys_case_and_key(k):
    entry = load_all([str(ROOT / "corpus" / (k.source.split(":", 1)[1] + ".json"))])[0][0]
    assert k.case == entry.case.to_json()
    assert k.keys <= {bugs.key_of(entry).text}


def test_what_a_campaign_could_rediscover_is_counted_on_its_release_and_its_kind(tmp_path):
    """The release line counts only bugs with a key on the campaigns' release (one
    fixed there, or keyed on another release only, cannot be rediscovered there), of
    the symptoms their kind of campaign shows (a stale cache needs cache pairs)."""
    other = _record(KEY_B)
    other["entry"]["observed"] = {"2.11.0+cu130": {"status": "finding", "key": KEY_B.text}}
    cache = {**_record(bugs.BugKey(BugClass.parse("stale-cache|x"), "inductor")), "symptom": "stale-cache"}
    bench = _bench(tmp_path, {"10": _record(KEY_A), "11": other, "12": cache, "13": _record(KEY_B)})
    camp = _campaign(tmp_path, "one", [(30.0, 4, KEY_A)])
    said = known.report(bench, [camp], "2.13.0+cpu").splitlines()[2]
    assert said.endswith("3 with a key there, 2 of them of the symptoms a campaign of programs shows; "
                         "rediscovered 1 of 2 (50 %)")
    pairs = known.report(bench, [camp], "2.13.0+cpu", pairs=True).splitlines()[2]
    assert pairs.endswith("1 of them of the symptoms a campaign of cache pairs shows; rediscovered 0 of 1 (0 %)")
    assert known.report(bench, [camp]).splitlines()[2] == ""      # no release known: no such line


@pytest.mark.compile
def test_a_hand_written_record_is_tried_here(tmp_path):
    """``--check`` of a hand-written record runs its case as a campaign's trial does: a
    program with no bug comes back clean, not as a crash of the benchmark."""
    x = {"symbols": ["s0"], "sym_min": {"s0": 1}, "inputs": [{"name": "x0", "dims": ["s0"]}],
         "body": [{"form": "scale", "args": ["x0"], "out": "v0", "attrs": {"c": 2.0}}], "outputs": ["v0"]}
    record = _record()
    record["entry"]["case"] = {"program": x, "bindings": [{"s0": 3}], "input_seed": 1}
    seen = known.observe(_bench(tmp_path, {"1": record})[0])
    assert seen["status"] == "clean" and seen["how"] == "a trial here"
