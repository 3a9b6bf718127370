"""The fault record (``fuzzer.faults._fault``): a fault that cannot apply says why, one
that replaces what it did not declare is refused, and undo puts everything back once;
a fault of our own over an attribute of our own, no compile."""

import pytest

from fuzzer.faults import _fault
from fuzzer.faults._fault import Fault, FaultUnavailable
from fuzzer.judge import contract

TARGET = "fuzzer.judge.contract:normalise_message"


def _own(targets=(TARGET,), replaces=(TARGET,)):
    return Fault(name="test-own", bug_class="internal", expected_kind="x", dynamic_only=False, description="",
                 targets=targets, build=lambda current: {t: (lambda line: "planted") for t in replaces})


def test_install_replaces_the_target_with_caches_off_and_undo_puts_it_back_once():
    from torch._inductor import config

    original, cache = contract.normalise_message, config.fx_graph_cache
    undo = _own().install()
    try:
        assert contract.normalise_message("x") == "planted" and config.fx_graph_cache is False
    finally:
        undo()
    undo()
    assert contract.normalise_message is original and config.fx_graph_cache == cache


def test_a_fault_whose_target_this_torch_lacks_says_why_and_is_not_installed():
    missing = _own(targets=("torch._inductor:no_such_thing",), replaces=())
    assert "no_such_thing not found" in missing.unavailable()
    with pytest.raises(FaultUnavailable, match="test-own"):
        missing.install()


def test_a_fault_that_replaces_an_undeclared_target_is_refused():
    with pytest.raises(AssertionError, match="undeclared"):
        _own(targets=(TARGET,), replaces=(TARGET, "fuzzer.judge.contract:bug_class")).install()
    assert contract.normalise_message("1").startswith("#")  # nothing left planted


def test_the_classes_with_a_dynamic_variant_are_all_but_the_cache_keys():
    assert _fault.SHAPE_CLASSES == tuple(c for c in _fault.BUG_CLASSES if c != _fault.STALE_KEY)
