"""Trial kinds (``fuzzer.judge.kinds``): found by name or by the findings they own, the
plain one by default; stand-in kinds registered by hand."""

from types import SimpleNamespace

import pytest

from fuzzer.judge import kinds


@pytest.fixture
def registry(monkeypatch):
    """A registry of two stand-in kinds, the entry points taken as read."""
    monkeypatch.setattr(kinds, "_KINDS", {})
    monkeypatch.setattr(kinds, "_loaded", True)
    plain = kinds.register(SimpleNamespace(name=kinds.PROGRAM, findings=(), script=lambda e: f"plain {e.kind}"))
    pair = kinds.register(SimpleNamespace(name="pair", findings=("stale-cache",), script=lambda e: "pair"))
    return plain, pair


def test_a_kind_is_found_by_name_and_an_unknown_name_says_what_is_known(registry):
    plain, pair = registry
    assert kinds.get("pair") is pair and kinds.names() == ["pair", kinds.PROGRAM]
    with pytest.raises(kinds.UnknownKind, match="known: pair, program"):
        kinds.get("nope")


def test_a_finding_belongs_to_the_kind_that_owns_it_else_to_the_plain_one(registry):
    plain, pair = registry
    assert kinds.of("stale-cache") is pair and kinds.of("effect-log") is plain
    assert kinds.script(SimpleNamespace(kind="effect-log")) == "plain effect-log"
    assert kinds.script(SimpleNamespace(kind="stale-cache")) == "pair"


def test_the_installed_kinds_are_read_from_the_entry_points(monkeypatch):
    monkeypatch.setattr(kinds, "_KINDS", {})
    monkeypatch.setattr(kinds, "_loaded", False)
    assert {"program", "cache-pair"} <= set(kinds.names())
