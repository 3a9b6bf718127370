"""A finding's culprit (``fuzzer.triage.culprit``): its blame and key read off the
probes' answers, and its JSON; hand-built culprits, no compile."""

from fuzzer.judge import contract
from fuzzer.triage import aliasing
from fuzzer.triage.culprit import Culprit, triageable

GONE, STAYS = "gone", "stays"


def test_a_wrong_value_is_blamed_on_the_last_switch_in_pipeline_order_that_removes_it():
    c = Culprit("inductor", kind=contract.WRONG_OUTPUT, subsystem="post_grad_passes", pass_name="reinplace",
                switches={"remove_noop_ops": GONE, "reinplace_inplaceable_ops": GONE, "fusion": STAYS})
    assert c.blame == "inductor:reinplace_inplaceable_ops"
    assert c.key == "inductor:reinplace_inplaceable_ops (also gone with remove_noop_ops off)"


def test_without_a_switch_the_bisected_pass_is_blamed_and_a_lowering_by_its_op_for_a_wrong_value_only():
    assert Culprit("inductor", kind=contract.WRONG_OUTPUT, subsystem="post_grad_passes",
                   pass_name="decompose_auto_functionalized").blame == "inductor:decompose_auto_functionalized"
    assert Culprit("inductor", kind=contract.WRONG_OUTPUT, subsystem="lowerings",
                   pass_name="as_strided_1").blame == "inductor:lowerings[as_strided]"
    assert Culprit("inductor", kind=contract.COMPILE_ERROR, subsystem="lowerings",
                   pass_name="as_strided_1").blame == "inductor:lowerings"
    assert Culprit("aot_eager", kind=contract.WRONG_OUTPUT).blame == "aot_eager"
    assert Culprit(None).blame is None and Culprit(None).key is None


def test_an_error_is_blamed_where_it_is_raised_never_on_a_switch():
    c = Culprit("inductor", kind=contract.COMPILE_ERROR, subsystem="post_grad_passes", pass_name="p",
                switches={"fusion": GONE}, named_by=("dep_node_name",))
    assert c.blame == "inductor:p"
    assert c.key == "inductor:p (missing key held by dep_node_name)"


def test_static_shapes_aliasing_and_a_moving_switch_are_read_into_the_key():
    dynamic = Culprit("inductor", kind=contract.WRONG_OUTPUT, dynamic_only=True)
    assert dynamic.key == "inductor [dynamic shapes only]"
    aliased = Culprit("aot_eager", kind=contract.WRONG_OUTPUT, aliasing_changes="later")
    assert aliased.key == aliasing.BLAME + aliasing.MARK
    moves = Culprit("inductor", kind=contract.WRONG_OUTPUT, switches={"reorder_for_peak_memory": GONE})
    assert moves.places and not Culprit("inductor", kind=contract.WRONG_OUTPUT,
                                        switches={"remove_noop_ops": GONE}).places


def test_the_json_round_trips_and_carries_its_blame():
    c = Culprit("inductor", subsystem="post_grad_passes", pass_name="p", switches={"fusion": STAYS},
                kind=contract.WRONG_MUTATION, dynamic_only=False, aliasing_changes="first", oracle_calls=12,
                seconds=3.25, budget_exhausted=True, torch_version="2.13.0", key_only=True,
                otherwise={"aot_eager": ("runtime-error",)}, named_by=("node",), via="compile", cause="edge")
    data = c.to_json()
    assert data["blame"] == c.blame
    assert Culprit.from_json(data) == c


def test_deaths_and_stand_in_backends_are_not_triaged_in_process():
    assert triageable(contract.WRONG_OUTPUT)
    assert not triageable(contract.CRASH) and not triageable(contract.WRONG_OUTPUT, "dcefuzz_test_eager")
