"""Corpus entries: round trip, atomic writes, dedup by signature, bad files."""

import json

import pytest
from helpers import case, prog

from fuzzer.corpus import entry as entry_mod
from fuzzer.corpus.entry import BadEntry, Entry
from fuzzer.corpus.store import entries_in, load, save

PROGRAM = prog({"x0": ("s0",)}, [
    ("p_sin", ["x0"], "v0", {"site": 0}),
    ("e_log", ["v0"], None, {"site": 1}),
], outputs=["v0"])


def make_entry(kind="effect-log", signature="effect-log|missing :: one", backend="inductor"):
    return Entry(id=entry_mod.entry_id(kind, signature), kind=kind, signature=signature, seed=5,
                 device="cpu", backend=backend, torch_version="2.13.0", case=case(PROGRAM),
                 detail=["[effect-log] binding 0, sequence: missing e_log@1"])


def test_round_trip_and_required_fields(tmp_path):
    path, new = save(make_entry(), tmp_path)
    assert new
    data = json.loads(path.read_text())
    for field in entry_mod.REQUIRED_FIELDS:
        assert field in data
    assert data["statements"] == 2
    assert "def program(x0):" in data["source"]
    back = load(path)
    assert back.case == make_entry().case
    assert back.kind == "effect-log" and back.hits == 1
    assert path.with_suffix(".py").exists()


def test_same_signature_counts_a_hit_not_an_entry(tmp_path):
    save(make_entry(), tmp_path)
    path, new = save(make_entry(), tmp_path)
    assert not new
    assert load(path).hits == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([path.name, path.with_suffix(".py").name])


def test_no_temporary_files_left(tmp_path):
    save(make_entry(), tmp_path)
    save(make_entry(signature="other"), tmp_path)
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


@pytest.mark.parametrize("content, message", [
    ("{not json", "not readable JSON"),
    ("[1, 2]", "not a JSON object"),
    ('{"schema": 1}', "missing fields"),
])
def test_bad_entries_name_the_file(tmp_path, content, message):
    bad = tmp_path / "bad.json"
    bad.write_text(content)
    with pytest.raises(BadEntry, match=message) as info:
        load(bad)
    assert str(bad) in str(info.value)


def test_wrong_schema_and_invalid_program(tmp_path):
    path, _ = save(make_entry(), tmp_path)
    data = json.loads(path.read_text())
    data["schema"] = 99
    path.write_text(json.dumps(data))
    with pytest.raises(BadEntry, match="schema"):
        load(path)
    data["schema"] = entry_mod.SCHEMA
    data["program"]["body"][1]["args"] = ["nope"]
    path.write_text(json.dumps(data))
    with pytest.raises(BadEntry, match="invalid program"):
        load(path)


def test_entries_in_expands_folders_and_names_strangers(tmp_path):
    path, _ = save(make_entry(), tmp_path)
    found, bad = entries_in([tmp_path, tmp_path / "missing.json", path.with_suffix(".py")])
    assert found == [path, path]
    assert len(bad) == 1 and "missing.json" in bad[0]
