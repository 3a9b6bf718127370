"""A saved entry's shrink kept apart from the command (``fuzzer.replay.isolated``):
where it runs, and what the caller hears when its child dies or fails.  No compile:
``reshrink`` and ``run_once`` are stand-ins."""

import pickle
from functools import partial

import pytest
from test_corpus import make_entry

import fuzzer.isolation.once as once_mod
import fuzzer.replay.reshrink as reshrink_mod
from fuzzer.isolation.once import Died
from fuzzer.judge.contract import CRASH
from fuzzer.limits import SHRINK
from fuzzer.replay import isolated
from fuzzer.replay.isolated import ReshrinkInChild, ShrinkerDied, ShrinkerFailed, reshrink_apart
from fuzzer.user import selection


@pytest.fixture
def stand_ins(monkeypatch):
    """Record where reshrink ran (here or in the child) and what went to the child."""
    calls = {"here": [], "child": []}
    monkeypatch.setattr(reshrink_mod, "reshrink", lambda e, p, d, b, t=None: calls["here"].append((e.kind, d)) or "result")

    def run_once(handler, message):
        calls["child"].append((handler, message))
        return calls.get("answer", ("shrunk", "from the child"))
    monkeypatch.setattr(once_mod, "run_once", run_once)
    return calls


def test_a_crash_entry_shrinks_here_its_candidates_apart_already(stand_ins):
    assert reshrink_apart(make_entry(kind=CRASH), "e.json", "cpu", SHRINK.budget) == "result"
    assert stand_ins["here"] == [(CRASH, "cpu")] and stand_ins["child"] == []


def test_any_other_entry_shrinks_in_a_child(stand_ins, tmp_path):
    again = partial(selection.select, [], only=False, check=False)
    assert reshrink_apart(make_entry(), tmp_path / "e.json", "cpu", SHRINK.budget, prepare=again) == "from the child"
    handler, message = stand_ins["child"][0]
    assert stand_ins["here"] == [] and handler == ReshrinkInChild(again)
    assert message == ("shrink", str(tmp_path / "e.json"), "cpu", SHRINK.budget, None)
    pickle.loads(pickle.dumps(handler))  # it goes to a spawned child
    # a --target goes with it
    reshrink_apart(make_entry(), tmp_path / "e.json", "cpu", SHRINK.budget, prepare=again, target="export")
    assert stand_ins["child"][1][1] == ("shrink", str(tmp_path / "e.json"), "cpu", SHRINK.budget, "export")


def test_a_child_that_dies_or_fails_is_raised_as_such(stand_ins):
    stand_ins["answer"] = Died("process died: SIGSEGV")
    with pytest.raises(ShrinkerDied, match="SIGSEGV"):
        reshrink_apart(make_entry(), "e.json", "cpu", SHRINK.budget)
    stand_ins["answer"] = ("error", "Traceback: ours")
    with pytest.raises(ShrinkerFailed, match="Traceback: ours"):
        reshrink_apart(make_entry(), "e.json", "cpu", SHRINK.budget)


def test_the_handler_prepares_the_child_and_sends_its_own_errors_back(tmp_path):
    prepared = []
    handler = isolated.ReshrinkInChild(prepare=lambda: prepared.append(True))
    handler.load()
    assert prepared == [True]
    isolated.ReshrinkInChild().load()  # nothing to prepare
    sent = []
    handler(("shrink", str(tmp_path / "missing.json"), "cpu", SHRINK.budget, None), sent.append)
    (tag, text), = sent
    assert tag == "error" and "Traceback" in text
