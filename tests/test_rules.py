"""The no-op removal's rules (``fuzzer.triage.rules``): how a rule is named and read,
the blame refined by the rules whose absence removes the bug, and the registry put back;
no compile."""

import pytest

from fuzzer.triage import rules
from fuzzer.triage.probe import Outcome

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


def test_rules_are_probed_only_where_the_no_op_removal_is_blamed():
    class Never:
        def outcome(self, *a, **k):
            raise AssertionError("no compile for a blame that is not the no-op removal's")
    assert rules.probe_rules(Never(), {"fusion": GONE}) == {}


@pytest.mark.skipif(not rules.available(), reason="this torch has no noop_registry")
def test_a_rule_taken_out_is_put_back_after_the_block():
    from torch._inductor.fx_passes import post_grad

    before = post_grad.noop_registry
    op = rules._op(next(iter(before)))
    with rules._without(op):
        assert all(rules._op(t) != op for t in post_grad.noop_registry)
        assert len(post_grad.noop_registry) < len(before)
    assert post_grad.noop_registry is before
