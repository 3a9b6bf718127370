"""The one protocol of every child (``fuzzer.isolation.child``): ready once loaded, each
message to the handler, return on stop or a closed pipe; served in this process over a
stand-in pipe, the process-wide settings stood in."""

import os

import pytest
import torch

from fuzzer.isolation import child


class Pipe:
    """The child's end: gives ``messages`` in order, then the parent is gone."""

    def __init__(self, messages):
        self.messages, self.sent = list(messages), []

    def recv(self):
        if not self.messages:
            raise EOFError
        return self.messages.pop(0)

    def send(self, message):
        self.sent.append(message)


class Doubling:
    def __init__(self):
        self.loaded = False

    def load(self):
        self.loaded = True

    def __call__(self, message, send):
        send(message * 2)


@pytest.fixture
def served(monkeypatch):
    """serve() in this process, without the settings that are a child's alone."""
    monkeypatch.setattr(child, "die_with_parent", lambda: None)
    monkeypatch.setattr(child.signal, "signal", lambda *a: None)
    monkeypatch.delenv(child.LOG_ENV, raising=False)

    def serve(messages):
        pipe, handler = Pipe(messages), Doubling()
        child.serve(pipe, handler, None, torch.get_num_threads())
        return pipe, handler
    return serve


def test_ready_once_loaded_then_each_message_answered_until_stop(served):
    pipe, handler = served([2, 5, child.STOP, 7])
    assert handler.loaded
    assert pipe.sent == [("ready", os.getpid()), 4, 10]
    assert pipe.messages == [7]  # nothing read after stop


def test_a_child_whose_parent_is_gone_returns(served):
    pipe, _ = served([3])
    assert pipe.sent[1:] == [6]


def test_variables_are_set_for_the_block_and_put_back(monkeypatch):
    monkeypatch.setenv("DCEFUZZ_A", "before")
    monkeypatch.delenv("DCEFUZZ_B", raising=False)
    with child.environment({"DCEFUZZ_A": "x", "DCEFUZZ_B": "y"}):
        assert (os.environ["DCEFUZZ_A"], os.environ["DCEFUZZ_B"]) == ("x", "y")
    assert os.environ["DCEFUZZ_A"] == "before" and "DCEFUZZ_B" not in os.environ
