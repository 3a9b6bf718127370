"""Inductor's switches (``fuzzer.triage.switches``): the table in pipeline order, the
patches thrown together, and the blame read off the outcomes; a stand-in probe."""

from fuzzer.limits import TRIAGE
from fuzzer.triage import switches
from fuzzer.triage.probe import BudgetSpent, Outcome

GONE, STAYS, CHANGED = Outcome.GONE.value, Outcome.STAYS.value, Outcome.CHANGED.value


def test_disabled_passes_are_listed_together_and_other_settings_set_one_by_one():
    assert switches.patch_of("remove_noop_ops+reinplace_inplaceable_ops") == {
        "disabled_passes": "REMOVE_NOOP_OPS,REINPLACE_INPLACEABLE_OPS"}
    assert switches.patch_of("fusion+buffer_reuse") == {"max_fusion_size": 1, "inplace_buffers": False,
                                                         "allow_buffer_reuse": False}


def test_the_blame_is_the_last_switch_alone_in_pipeline_order_then_the_first_pair():
    results = {"reorder_for_peak_memory": GONE, "remove_noop_ops": GONE, "fusion": STAYS}
    assert switches.gone(results) == ["remove_noop_ops", "reorder_for_peak_memory"]
    assert switches.blamed(results) == "reorder_for_peak_memory"
    assert switches.blamed({"fusion": STAYS, "a+b": STAYS, "fusion+buffer_reuse": GONE}) == "fusion+buffer_reuse"
    assert switches.blamed({"fusion": STAYS}) is None


def test_only_rewriting_switches_are_also_needed_and_only_moving_ones_only_move():
    results = {"reorder_for_locality": GONE, "remove_noop_ops": GONE, "reinplace_inplaceable_ops": GONE}
    assert switches.also_needed(results, "reinplace_inplaceable_ops") == ["remove_noop_ops"]
    assert switches.only_moves("fusion+reorder_for_peak_memory")
    assert not switches.only_moves("fusion+remove_noop_ops")
    assert not switches.only_moves("remove_noop_ops[aten.clone]") and not switches.only_moves("unknown")


def test_pairs_are_probed_nearest_first_and_only_where_no_switch_alone_removes_the_bug():
    results = {"remove_noop_ops": STAYS, "pattern_matcher": STAYS, "fusion": CHANGED}
    pairs = [(a.name, b.name) for a, b in switches.pairs_to_probe(results)]
    assert pairs[:2] == [("remove_noop_ops", "pattern_matcher"), ("pattern_matcher", "fusion")]
    assert len(pairs) == min(3, TRIAGE.max_pairs)
    assert switches.pairs_to_probe({**results, "fusion": GONE}) == []


class Scripted:
    """A stand-in probe: the outcome of each patch, and a budget of ``calls``."""

    def __init__(self, outcomes, calls=99):
        self.outcomes, self.calls, self.patches = outcomes, calls, []

    def outcome(self, backend, patch):
        if len(self.patches) == self.calls:
            raise BudgetSpent
        self.patches.append(patch)
        return self.outcomes.get(tuple(sorted(patch.items())), Outcome.STAYS)


def test_each_switch_is_thrown_alone_until_the_budget_is_spent():
    noop = switches.BY_NAME["remove_noop_ops"]
    probe = Scripted({tuple(sorted(noop.patch.items())): Outcome.GONE})
    found = switches.probe_all(probe, switches=switches.SWITCHES[:3])
    assert found == {"reorder_for_locality": STAYS, "remove_noop_ops": GONE, "pattern_matcher": STAYS}
    assert switches.probe_all(Scripted({}, calls=1), switches=switches.SWITCHES[:3]) == {
        "reorder_for_locality": STAYS}


def test_a_pair_is_probed_with_both_patches_at_once():
    probe = Scripted({})
    found = switches.probe_pairs(probe, {"remove_noop_ops": STAYS, "pattern_matcher": STAYS})
    assert found == {"remove_noop_ops+pattern_matcher": STAYS}
    assert probe.patches == [{"disabled_passes": "REMOVE_NOOP_OPS", "pattern_matcher": False}]
