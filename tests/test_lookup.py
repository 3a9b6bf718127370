"""A failed lookup (``fuzzer.triage.lookup``): which of the raising frame's locals hold
the key it missed; a stand-in raising frame, no compile."""

from types import SimpleNamespace

from helpers import klass

from fuzzer.triage import lookup


def test_only_a_lookup_raised_by_torch_is_one():
    assert lookup.missed(klass("compile-error|raised KeyError in torch._inductor.scheduler:compute_ancestors"))
    assert not lookup.missed(klass("compile-error|raised AssertionError in "
                                   "torch._inductor.scheduler:compute_ancestors"))
    assert not lookup.missed(klass("compile-error|KeyError: 'op3'"))


class Node:
    def __init__(self, name):
        self.node_name = name

    def get_name(self):
        return self.node_name


def _raising(node, dep_node_name, other):
    """A frame that misses ``dep_node_name``'s key, as compute_ancestors does."""
    raise KeyError(dep_node_name)


def test_the_locals_that_name_the_missing_key_are_read_off_the_frame(monkeypatch):
    try:
        _raising(Node("op3"), "op3", SimpleNamespace(name="op9"))
    except KeyError as exc:
        error = exc
    frame = error.__traceback__.tb_next.tb_frame
    monkeypatch.setattr(lookup, "raising_frame", lambda exc: (exc, frame, False))
    assert lookup.named_by(error) == ("dep_node_name", "node")   # a self-edge: the node misses its own name
    try:
        _raising(Node("op1"), "op3", SimpleNamespace(name="op3"))
    except KeyError as exc:
        error = exc
    frame = error.__traceback__.tb_next.tb_frame
    assert lookup.named_by(error) == ("dep_node_name", "other")


def test_an_error_of_no_lookup_or_no_frame_of_torch_names_nothing(monkeypatch):
    monkeypatch.setattr(lookup, "raising_frame", lambda exc: None)
    assert lookup.named_by(KeyError("op3")) == ()
    monkeypatch.setattr(lookup, "raising_frame", lambda exc: (exc, None, False))
    assert lookup.named_by(ValueError("op3")) == ()
