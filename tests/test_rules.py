"""The no-op removal's rules (``fuzzer.triage.rules``): how a rule is named and read,
the blame refined by the rules whose absence removes the bug, and the registry put back;
no compile."""

import importlib

import pytest

from fuzzer.triage import rules
from fuzzer.triage.probe import Outcome

#: whether this torch keeps reinplacing's table of entries (the rules of its switch)
REINPLACE_TABLE = isinstance(getattr(importlib.import_module("torch._inductor.fx_passes.reinplace"),
                                      "inplaceable_ops", None), dict)

GONE, STAYS = Outcome.GONE.value, Outcome.STAYS.value


def test_a_rule_is_named_after_its_switch_and_read_back():
    named = rules.name("remove_noop_ops", "aten.clone")
    assert named == "remove_noop_ops[aten.clone]"
    assert rules.split(named) == ("remove_noop_ops", "aten.clone")
    assert rules.split("fusion") == ("fusion", None)
    assert rules.words(named) == "remove_noop_ops's aten.clone rule" and rules.words("fusion") == "fusion"
    assert rules.setting(named) == "the aten.clone entry taken out of post_grad.noop_registry"
    assert rules.setting("fusion") == ""


def test_the_blame_is_refined_by_every_rule_whose_absence_alone_removes_the_bug():
    results = {"remove_noop_ops": GONE, "remove_noop_ops[aten.copy]": GONE, "remove_noop_ops[aten.clone]": GONE,
               "remove_noop_ops[aten.slice]": STAYS, "fusion[x]": GONE}
    assert rules.refined("remove_noop_ops", results) == "remove_noop_ops[aten.clone,aten.copy]"
    assert rules.refined("remove_noop_ops", {"remove_noop_ops": GONE}) == "remove_noop_ops"
    assert rules.refined(None, results) is None


def test_rules_are_probed_only_where_a_switch_with_rules_is_blamed():
    class Never:
        def outcome(self, *a, **k):
            raise AssertionError("no compile for a blame that is not a switch with rules")
    assert rules.probe_rules(Never(), {"fusion": GONE}) == {}
    assert rules.probe_rules(Never(), {"decompose_auto_functionalized": GONE}) == {}
    assert set(rules.REGISTRIES) == {"remove_noop_ops", "reinplace_inplaceable_ops"}


def test_a_reinplacing_rule_is_named_after_the_op_its_entry_is_of():
    named = rules.name("reinplace_inplaceable_ops", "_generalized_scatter")
    assert rules.words(named) == "reinplace_inplaceable_ops's _generalized_scatter rule"
    assert rules.setting(named) == "the _generalized_scatter entry taken out of reinplace.inplaceable_ops"
    from torch._inductor.fx_passes import reinplace
    assert rules._op(reinplace._generalized_scatter) == "_generalized_scatter"
    assert rules._op(next(t for t in reinplace.inplaceable_ops if "index_put" in str(t))) == "aten.index_put"


@pytest.mark.skipif(not REINPLACE_TABLE, reason="this torch has no reinplace.inplaceable_ops")
def test_a_reinplacing_rule_taken_out_or_recorded_is_put_back_after_the_block():
    from torch._inductor.fx_passes import reinplace

    registry = rules.REGISTRIES["reinplace_inplaceable_ops"]
    before = reinplace.inplaceable_ops
    with rules._without(registry, "_generalized_scatter"):
        assert reinplace._generalized_scatter not in reinplace.inplaceable_ops
        assert len(reinplace.inplaceable_ops) == len(before) - 1
    assert reinplace.inplaceable_ops is before
    seen: set[str] = set()
    with rules._recording(registry, seen):
        wrapped = reinplace.inplaceable_ops[reinplace._generalized_scatter]
        assert wrapped.inplace_op is before[reinplace._generalized_scatter].inplace_op
        assert wrapped.extra_check is not before[reinplace._generalized_scatter].extra_check
    assert reinplace.inplaceable_ops is before and seen == set()  # asked outside the pass: not recorded


@pytest.mark.skipif(not rules.available(), reason="this torch has no noop_registry")
def test_a_rule_taken_out_is_put_back_after_the_block():
    from torch._inductor.fx_passes import post_grad

    before = post_grad.noop_registry
    op = rules._op(next(iter(before)))
    with rules._without(rules.REGISTRIES["remove_noop_ops"], op):
        assert all(rules._op(t) != op for t in post_grad.noop_registry)
        assert len(post_grad.noop_registry) < len(before)
    assert post_grad.noop_registry is before
