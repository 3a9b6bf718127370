"""A re-shrink in another process (``fuzzer.replay.isolated``): its result, a death or our
own error as exceptions of their own, and a casualty's shrink left in this process (its
candidates die in children already); children stood in."""

from types import SimpleNamespace

import pytest

from fuzzer.corpus import store
from fuzzer.isolation import once
from fuzzer.judge import contract
from fuzzer.replay import isolated, reshrink
from fuzzer.replay.isolated import ReshrinkInChild, ShrinkerDied, ShrinkerFailed

ENTRY = SimpleNamespace(kind=contract.EFFECT_LOG)


def _answer(monkeypatch, answer):
    sent = []
    monkeypatch.setattr(once, "run_once", lambda handler, message: sent.append(message) or answer)
    return sent


def test_the_childs_result_is_returned_and_its_death_or_error_raised(monkeypatch):
    sent = _answer(monkeypatch, ("shrunk", ("new.json", 5, 2)))
    assert isolated.reshrink_apart(ENTRY, "e.json", "cpu", "budget", target="export") == ("new.json", 5, 2)
    assert sent == [("shrink", "e.json", "cpu", "budget", "export")]
    _answer(monkeypatch, once.Died("process died: SIGSEGV"))
    with pytest.raises(ShrinkerDied, match="SIGSEGV"):
        isolated.reshrink_apart(ENTRY, "e.json", "cpu", "budget")
    _answer(monkeypatch, ("error", "Traceback: KeyError"))
    with pytest.raises(ShrinkerFailed, match="KeyError"):
        isolated.reshrink_apart(ENTRY, "e.json", "cpu", "budget")


def test_a_casualty_is_reshrunk_here(monkeypatch):
    monkeypatch.setattr(once, "run_once", lambda *a: pytest.fail("a child started"))
    monkeypatch.setattr(reshrink, "reshrink", lambda entry, path, device, budget, target: "here")
    assert isolated.reshrink_apart(SimpleNamespace(kind=contract.CRASH), "e.json", "cpu", "budget") == "here"


def test_the_childs_work_answers_with_the_result_or_the_traceback(monkeypatch):
    prepared = []
    handler = ReshrinkInChild(prepare=lambda: prepared.append(True))
    handler.load()
    assert prepared == [True]
    monkeypatch.setattr(store, "load", lambda p: p)
    monkeypatch.setattr(reshrink, "reshrink", lambda entry, path, device, budget, target: (entry, target))
    said = []
    handler(("shrink", "e.json", "cpu", "budget", None), said.append)
    monkeypatch.setattr(reshrink, "reshrink", lambda *a: 1 / 0)
    handler(("shrink", "e.json", "cpu", "budget", None), said.append)
    assert said[0] == ("shrunk", ("e.json", None))
    assert said[1][0] == "error" and "ZeroDivisionError" in said[1][1]
