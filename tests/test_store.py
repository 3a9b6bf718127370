"""The corpus folder (``fuzzer.corpus.store``): one entry per bug, a repeat counted on
the smaller example, and entries moved and removed whole; hand-built entries."""

import json

import pytest
from helpers import case, divergence_on, prog

from fuzzer.corpus import store
from fuzzer.corpus.entry import BadEntry, Entry, Origin
from fuzzer.judge import contract

SMALL = case(prog({"x0": ("s0",)}, [("e_log", ["x0"], None, {"site": 0})]))
LARGE = case(prog({"x0": ("s0",)}, [("p_sin", ["x0"], "v0", {"site": 0}), ("e_log", ["x0"], None, {"site": 1})]))


def _entry(c, hits=1):
    e = Entry.build(contract.EFFECT_LOG, c, [divergence_on(0)],
                    Origin(seed=1, device="cpu", backend="inductor", hits=hits))
    e.id = "effect-log-000000000001"  # the same bug found as two programs
    return e


def test_a_new_entry_writes_its_json_and_script(tmp_path):
    path, new = store.save(_entry(LARGE), tmp_path)
    assert new and path.exists() and path.with_suffix(".py").exists()
    loaded = store.load(path.with_suffix(".py"))  # a script names its entry
    assert loaded.hits == 1 and loaded.found and loaded.hit_times == [loaded.found]


def test_a_repeat_counts_a_hit_and_keeps_the_smaller_example(tmp_path):
    path, _ = store.save(_entry(LARGE), tmp_path)
    _, new = store.save(_entry(SMALL, hits=2), tmp_path)
    kept = store.load(path)
    assert not new and kept.hits == 3 and kept.statements == 1
    _, new = store.save(_entry(LARGE), tmp_path)
    kept = store.load(path)
    assert not new and kept.hits == 4 and kept.statements == 1  # the larger one only counts


def test_move_and_remove_take_the_json_and_the_script(tmp_path):
    path, _ = store.save(_entry(SMALL), tmp_path / "a")
    moved = store.move(path, tmp_path / "b")
    assert moved.exists() and moved.with_suffix(".py").exists() and not path.exists()
    store.remove(moved)
    assert not moved.exists() and not moved.with_suffix(".py").exists()
    store.remove(moved)  # nothing left: nothing to do


def test_folders_are_expanded_to_their_entries_and_what_is_not_one_is_named(tmp_path):
    path, _ = store.save(_entry(SMALL), tmp_path)
    (tmp_path / "upstream.json").write_text("[]")
    (tmp_path / "broken.json").write_text(json.dumps({"schema": 1}))
    found, bad = store.entries_in([tmp_path, tmp_path / "nothing.txt"])
    assert found == sorted([path, tmp_path / "broken.json"]) and bad == [f"{tmp_path / 'nothing.txt'}: not a corpus entry or folder"]
    entries, bad = store.load_all([tmp_path])
    assert [e.id for e in entries] == [path.stem] and "missing fields" in bad[0]


def test_a_folder_or_a_non_object_is_no_entry(tmp_path):
    with pytest.raises(BadEntry, match="a folder"):
        store.load(tmp_path)
    (tmp_path / "x.json").write_text("[1]")
    with pytest.raises(BadEntry, match="not a JSON object"):
        store.load(tmp_path / "x.json")
