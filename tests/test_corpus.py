"""Corpus entries: round trip, atomic writes, dedup by signature, bad files."""

import json
import os

import pytest
from helpers import case, prog

from fuzzer.corpus import entry as entry_mod
from fuzzer.corpus.entry import BadEntry, Entry, Origin
from fuzzer.corpus.store import entries_in, load, save
from fuzzer.reduce.signature import Signature

PROGRAM = prog({"x0": ("s0",)}, [
    ("p_sin", ["x0"], "v0", {"site": 0}),
    ("e_log", ["v0"], None, {"site": 1}),
], outputs=["v0"])


def make_entry(kind="effect-log", signature="effect-log|missing :: one", backend="inductor"):
    sig = Signature.parse(signature)
    return Entry(id=entry_mod.entry_id(kind, sig), kind=kind, signature=sig, seed=5,
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


def test_an_entry_records_the_hash_seed_and_threads_its_finding_was_made_under(monkeypatch):
    """Some torch bugs show only under some orders of its sets (the hash seed) or some
    numbers of threads: the entry records both, and its repro script starts itself
    again with the seed when it runs under another (so a replay sees what was found)."""
    import torch

    from fuzzer import hashseed
    from fuzzer.render import driver, repro

    monkeypatch.setattr(hashseed, "AT_START", "7")
    e = make_entry()
    e = Entry.build(e.kind, e.case, [], Origin(seed=1, device="cpu", backend="inductor"))
    assert e.hash_seed == "7" and e.threads == torch.get_num_threads()
    again = Entry.from_json(e.to_json())
    assert (again.hash_seed, again.threads) == ("7", e.threads)
    spec = repro.spec(again)
    assert spec["hash_seed"] == "7" and spec["threads"] == e.threads
    started = []
    monkeypatch.setattr(driver.os, "execve", lambda exe, argv, env: started.append(env["PYTHONHASHSEED"]))
    monkeypatch.delenv("PYTHONHASHSEED", raising=False)
    driver.rehash(spec)
    assert started == ["7"]
    monkeypatch.setenv("PYTHONHASHSEED", "7")
    driver.rehash(spec)
    assert started == ["7"]   # already under its seed: it runs on


def test_the_command_line_runs_under_one_hash_seed(monkeypatch):
    from fuzzer import hashseed

    started = []
    monkeypatch.setattr(hashseed.os, "execve", lambda exe, argv, env: started.append((argv[1:3], env["PYTHONHASHSEED"])))
    monkeypatch.setattr(hashseed, "AT_START", None)
    hashseed.pin(["run", "--programs", "1"])
    assert started == [(["-m", "fuzzer"], hashseed.SEED)]
    monkeypatch.setattr(hashseed, "AT_START", hashseed.SEED)
    hashseed.pin(["run"])
    assert len(started) == 1


def test_every_hit_is_timed_and_a_smaller_example_keeps_the_times(tmp_path, monkeypatch):
    from fuzzer.corpus import store

    clock = iter(f"2026-12-01T00:00:0{i}+00:00" for i in range(10))
    monkeypatch.setattr(store, "now", lambda: next(clock))
    path, _ = save(make_entry(), tmp_path)
    save(make_entry(), tmp_path)
    save(make_entry(), tmp_path)
    held = load(path)
    assert held.hits == 3 and held.hit_times == [f"2026-12-01T00:00:0{i}+00:00" for i in range(3)]
    assert held.last_seen == held.hit_times[-1]
    smaller = make_entry()
    smaller.case = case(prog({"x0": ("s0",)}, [("e_log", ["x0"], None, {"site": 1})]))
    save(smaller, tmp_path)  # the same id, fewer statements: it takes the entry's place
    held = load(path)
    assert held.statements == 1 and held.hits == 4 and len(held.hit_times) == 4
    assert held.found == "2026-12-01T00:00:00+00:00"


def test_a_folder_given_for_an_entry_is_named_as_a_folder(tmp_path):
    with pytest.raises(BadEntry, match="a folder, not an entry"):
        load(tmp_path)


def test_the_suite_replays_the_corpus_under_one_hash_seed():
    """conftest starts pytest again under dcefuzz's seed: compile-error-8a85bd8f1ea8
    shows under one order of torch's sets and replayed in one run in three without it."""
    from fuzzer import hashseed

    assert hashseed.AT_START is not None and os.environ["PYTHONHASHSEED"] == hashseed.AT_START
