"""A corpus kept to a few examples per bug (``fuzzer.corpus.examples``): new, repeat,
replaced or only counted, and a vague key never full; hand-built entries of one bug."""

from helpers import case, divergence_on, prog

from fuzzer.corpus import store
from fuzzer.corpus.entry import Entry, Origin
from fuzzer.corpus.examples import Examples, Kept
from fuzzer.judge import contract
from fuzzer.triage.culprit import Culprit

#: a blame inside Inductor: a key that tells causes apart
BLAMED = Culprit("inductor", kind=contract.EFFECT_LOG, switches={"reorder_for_peak_memory": "gone"})


#: an error its message classes, at a stage and nothing inside it: a key that cannot
VAGUE = Culprit("inductor", kind=contract.COMPILE_ERROR)
ERROR = contract.Divergence(contract.COMPILE_ERROR, 0, "compile", "RuntimeError: something failed")


def _entry(statements, culprit=BLAMED):
    body = [("p_sin", ["x0"], f"v{n}", {"site": n + 1}) for n in range(statements - 1)]
    c = case(prog({"x0": ("s0",)}, [*body, ("e_log", ["x0"], None, {"site": 0})]))
    kind, div = (contract.COMPILE_ERROR, ERROR) if culprit is VAGUE else (contract.EFFECT_LOG, divergence_on(0))
    e = Entry.build(kind, c, [div], Origin(seed=1, device="cpu", backend="inductor"))
    e.culprit = culprit
    return e


def test_a_bug_keeps_cap_examples_then_a_smaller_one_replaces_the_largest_and_a_larger_only_counts(tmp_path):
    ex = Examples(tmp_path, cap=2)
    first = ex.save(_entry(3))
    assert first.kept is Kept.NEW and first.new_bug
    assert ex.save(_entry(4)).kept is Kept.NEW and ex.held() == {next(iter(ex.by_bug)): 4}
    replaced = ex.save(_entry(2))
    assert replaced.kept is Kept.REPLACED and not replaced.removed.exists()
    assert store.load(replaced.path).hits == 2  # the replaced one's hit carried over
    counted = ex.save(_entry(5))
    assert counted.kept is Kept.COUNTED and store.load(counted.path).statements == 2
    assert (ex.bugs, ex.entries) == (1, 2)


def test_an_example_replaced_leaves_its_name_in_the_folder_s_upstream_records_to_the_one_in_its_place(tmp_path):
    """A public bug stays public: the record that named the larger example names the
    smaller one that took its place, every other field as it was."""
    import json

    from fuzzer.corpus import upstream
    ex = Examples(tmp_path, cap=1)
    held = ex.save(_entry(4)).path.stem
    other = {"entries": ["wrong-output-000000000000"], "searched": "2026-12-01", "note": "n\u00e9"}
    (tmp_path / upstream.FILE).write_text(json.dumps({"bugs": [
        {"entries": [held], "links": [{"ref": "pytorch/pytorch#1", "kind": "issue", "state": "open"}],
         "note": "the cause", "cause": "read by hand"}, other]}, indent=1))
    replaced = ex.save(_entry(2))
    assert replaced.kept is Kept.REPLACED and replaced.removed.stem == held
    data = json.loads((tmp_path / upstream.FILE).read_text())
    assert data["bugs"][0]["entries"] == [replaced.path.stem]
    assert data["bugs"][0]["cause"] == "read by hand" and data["bugs"][1] == other
    assert upstream.load(tmp_path).of([replaced.path.stem])[0].known
    assert not upstream.carry(tmp_path, held, "effect-log-111111111111")  # no record names it now


def test_the_same_program_again_is_a_repeat(tmp_path):
    ex = Examples(tmp_path, cap=1)
    ex.save(_entry(3))
    again = ex.save(_entry(3))
    assert again.kept is Kept.REPEAT and store.load(again.path).hits == 2


def test_a_key_that_cannot_tell_causes_apart_is_never_full(tmp_path):
    ex = Examples(tmp_path, cap=1)
    ex.save(_entry(3, VAGUE))
    assert ex.save(_entry(4, VAGUE)).kept is Kept.NEW and ex.held() == {}
    assert (ex.bugs, ex.entries) == (1, 2)


def test_the_index_is_read_from_the_folder_and_follows_what_others_save_and_remove(tmp_path):
    Examples(tmp_path, cap=2).save(_entry(3))
    ex = Examples(tmp_path, cap=2)
    assert (ex.bugs, ex.entries) == (1, 1)
    other = _entry(2)
    path, _ = store.save(other, tmp_path)
    ex.note(other, path)
    assert ex.entries == 2
    ex.forget(other.id)
    assert ex.entries == 1
