"""Triage: a finding's culprit (stage, switches, pass), bugs and the examples kept of each."""

import dataclasses
import importlib
import shutil
from pathlib import Path

import backends
import pytest
import torch
from helpers import case, first_stage, klass, prog

from fuzzer.corpus import bugs, releases
from fuzzer.corpus.examples import Examples, Kept
from fuzzer.corpus.store import entries_in, load
from fuzzer.judge import contract
from fuzzer.triage import bisect, family, lookup, recognise, rules, switches
from fuzzer.triage.culprit import Culprit, keyed_subsystems, localise
from fuzzer.limits import TRIAGE, OracleBudget
from fuzzer.program.ir import Mode
from fuzzer.triage.probe import Probe
from fuzzer.triage.stage import STAGES, stages_for, walk

#: whether this torch keeps reinplacing's table of entries (the rules of its switch)
REINPLACE_TABLE = isinstance(getattr(importlib.import_module("torch._inductor.fx_passes.reinplace"),
                                      "inplaceable_ops", None), dict)

LOG = prog({"x0": ("s0",)}, [("p_sin", ["x0"], "v0", {"site": 0}),
                              ("e_log", ["v0"], None, {"site": 1})], outputs=["v0"])
CORPUS = Path(__file__).resolve().parent.parent / "corpus"


def test_the_first_stage_that_shows_the_bug_class_is_the_culprit():
    c = case(LOG)
    found = first_stage(c, contract.EFFECT_LOG, klass("effect-log|missing"), "cpu",
                        stages=(backends.FAITHFUL, backends.DROP_LOG, backends.DROP_LOG_AND_MUTATION))
    assert found == (backends.DROP_LOG, 2)
    # another bug class of the same kind is not this bug: no stage shows it
    other = first_stage(c, contract.EFFECT_LOG, klass("effect-log|reordered"), "cpu",
                        stages=(backends.FAITHFUL, backends.DROP_LOG))
    assert other == (None, 2)


def test_a_stage_before_the_culprit_that_fails_otherwise_is_kept_and_a_clean_one_is_not():
    """An earlier stage that shows something else (here a compile error) is not clean:
    the walk keeps what it showed, the culprit carries it (outside its key), and the
    report says so instead of calling that stage clean."""
    from fuzzer.render.evidence import culprit_lines
    from fuzzer.triage.probe import Probe
    from fuzzer.triage.stage import walk

    probe = Probe(case(LOG), contract.EFFECT_LOG, klass("effect-log|missing"), "cpu",
                  OracleBudget(oracle_calls=3, seconds=float("inf")))
    otherwise = {}
    found = walk(probe, (backends.FAITHFUL, backends.RAISE, backends.DROP_LOG), otherwise)
    assert found == backends.DROP_LOG
    assert otherwise == {backends.RAISE: (contract.COMPILE_ERROR,)}

    culprit = Culprit(stage="inductor", kind=contract.EFFECT_LOG, otherwise={"aot_eager": ("wrong-mutation",)})
    same = Culprit(stage="inductor", kind=contract.EFFECT_LOG)
    assert culprit.key == same.key
    assert Culprit.from_json(culprit.to_json()) == culprit
    text = "\n".join(culprit_lines(dataclasses.replace(_a_bug(), culprit=culprit)))
    assert "(`eager`, `aot_eager_decomp_partition` do not)" in text
    assert "`aot_eager` shows `wrong-mutation` instead" in text


class _ShowsEverywhere:
    """A probe whose bug shows on every stage (no compile)."""

    seen = ()

    def outcome(self, stage):
        from fuzzer.triage.probe import Outcome

        return Outcome.STAYS


def test_a_missed_dce_is_never_blamed_on_the_stage_that_removes_no_call():
    """The eager backend runs every call Dynamo captured, dead or not: a dead call kept
    there says nothing, so a missed-dce's walk starts where calls can go."""
    assert walk(_ShowsEverywhere(), stages_for(contract.MISSED_DCE)) == "aot_eager"
    assert walk(_ShowsEverywhere(), stages_for(contract.WRONG_OUTPUT)) == "eager"
    assert stages_for(contract.MISSED_DCE, "aot_eager") == ("aot_eager",)


def _a_bug():
    return bugs.group(_corpus())[0]


@pytest.mark.compile
def test_a_real_reordering_bug_lives_in_inductor():
    entry = load(CORPUS / "effect-log-915158cff0e3.json")
    found = first_stage(entry.case, entry.kind, entry.bug_class, "cpu")
    assert found == ("inductor", len(STAGES))


class _StaysProbe:
    """A probe whose bug shows whatever is turned off; it records what the bisector
    had turned off at each question (no compile)."""

    def __init__(self):
        self.asked = []

    def shows(self, backend):
        from torch._inductor.compiler_bisector import CompilerBisector

        self.asked.append((backend, CompilerBisector.get_subsystem()))
        return True


@pytest.mark.skipif(not bisect.available(), reason="this torch has no CompilerBisector")
def test_the_bisector_asks_once_per_subsystem_where_none_clears_the_bug():
    """torch's walk restarts from the second subsystem, then the third, ... when none
    clears the bug (45 questions for Inductor's nine); each is asked once, and the
    stage walk's own answer (the bug shows at the stage) is not asked again."""
    from torch._inductor.compiler_bisector import BACKENDS

    probe = _StaysProbe()
    assert bisect.bisect(probe, "inductor") == bisect.Bisection(None, None)
    assert probe.asked == [("inductor", s.name) for s in BACKENDS["inductor"] if s.name != "cudagraphs"]


@pytest.mark.skipif(not bisect.available(), reason="this torch has no CompilerBisector")
def test_turning_off_cudagraphs_is_asked_only_where_the_compile_wraps_them():
    """Without ``config.triton.cudagraphs`` (the default mode) Inductor never reads the
    bisector's cudagraphs switch: the compile is the one the stage walk made."""
    from torch._inductor import config

    assert bisect.inert("inductor", "cudagraphs") and not bisect.inert("inductor", "lowerings")
    with config.patch({"triton.cudagraphs": True}):
        assert not bisect.inert("inductor", "cudagraphs")
        probe = _StaysProbe()
        bisect.bisect(probe, "inductor")
        assert ("inductor", "cudagraphs") in probe.asked


class _GoneOnceTouchedProbe(_StaysProbe):
    """A bug that goes from the second question on: once the second subsystem is turned
    off, and while the bisector counts that subsystem's applications after (a bug that
    is no function of them, which torch's bisector raises on)."""

    def shows(self, backend):
        super().shows(backend)
        return len(self.asked) < 2


@pytest.mark.skipif(not bisect.available(), reason="this torch has no CompilerBisector")
def test_a_bug_that_does_not_come_back_with_its_subsystem_counted_names_nothing():
    probe = _GoneOnceTouchedProbe()
    assert bisect.bisect(probe, "inductor") == bisect.Bisection(None, None)
    assert len(probe.asked) == 3 and probe.asked[1] == probe.asked[2]  # turned off, then counted


class _ClearedBy(_StaysProbe):
    """A probe whose bug is gone only while ``subsystem`` is wholly disabled; it records
    the bisector's run state at each question too."""

    def __init__(self, subsystem):
        super().__init__()
        self.subsystem = subsystem

    def shows(self, backend):
        from torch._inductor.compiler_bisector import CompilerBisector

        subsystem = CompilerBisector.get_subsystem()
        state = CompilerBisector.get_run_state(backend, subsystem) if subsystem else None
        self.asked.append((backend, subsystem, state))
        for _ in range(8):  # the applications a compile would ask about
            if subsystem:
                CompilerBisector.disable_subsystem(backend, subsystem, lambda: "an application")
        return not (subsystem == self.subsystem and state == "test_disable")


@pytest.mark.skipif(not bisect.available(), reason="this torch has no CompilerBisector")
@pytest.mark.parametrize("subsystem, counted", [("lowerings", False), ("post_grad_passes", True)])
def test_without_applications_only_a_pass_subsystem_is_bisected_down_to_its_application(subsystem, counted):
    """A key reads a pass subsystem's application (the pass's name), and an error's never a
    lowering's: without ``applications``, the bisector stops where disabling the
    lowerings cleared the bug, and still bisects the post-grad passes' count."""
    whole = _ClearedBy(subsystem)
    assert bisect.bisect(whole, "inductor").subsystem == subsystem
    assert any(state != "test_disable" for _, name, state in whole.asked if name == subsystem)
    quick = _ClearedBy(subsystem)
    assert bisect.bisect(quick, "inductor", applications=False).subsystem == subsystem
    beyond = [state for _, name, state in quick.asked if name == subsystem and state != "test_disable"]
    assert bool(beyond) is counted
    assert quick.asked == whole.asked[:len(quick.asked)]


@pytest.mark.skipif(not bisect.available(), reason="this torch has no CompilerBisector")
@pytest.mark.parametrize("kind, counted", [(contract.COMPILE_ERROR, False), (contract.WRONG_OUTPUT, True)])
def test_a_wrong_values_key_reads_the_op_its_lowering_lowered_and_an_errors_does_not(kind, counted):
    """Two wrong values Inductor lowers wrong are told apart by the op lowered (an
    as_strided over the wrong storage, a dtype view's consumer read after a write): a
    key-only triage of a wrong value bisects the lowerings' count, an error's stops."""
    quick = _ClearedBy("lowerings")
    found = bisect.bisect(quick, "inductor", applications=False, keyed=keyed_subsystems(kind))
    beyond = [state for _, name, state in quick.asked if name == "lowerings" and state != "test_disable"]
    assert found.subsystem == "lowerings" and bool(beyond) is counted and (found.application is not None) is counted


# -- culprit: switches, bisector, budget (real compiles of committed corpus entries) --



def _corpus():
    return [load(p) for p in entries_in([str(CORPUS)])[0]]


@pytest.mark.compile
def test_a_reordering_is_blamed_on_the_peak_memory_reordering_and_a_lost_write_on_reinplacing():
    reorder = load(CORPUS / "effect-log-915158cff0e3.json")
    c = localise(reorder.case, reorder.kind, reorder.bug_class, "cpu")
    assert c.stage == "inductor" and c.blame == "inductor:reorder_for_peak_memory"
    assert c.switches["reorder_for_peak_memory"] == "gone" and c.switches["reinplace_inplaceable_ops"] == "stays"
    assert c.subsystem is not None  # the bisector ran and named a subsystem
    assert c.dynamic_only is False  # static shapes show it too
    assert c.oracle_calls >= len(STAGES) + len(switches.available()) and not c.budget_exhausted
    lost = load(CORPUS / "wrong-mutation-3e93a770411a.json")
    full = localise(lost.case, lost.kind, lost.bug_class, "cpu")
    assert full.blame == "inductor:reinplace_inplaceable_ops"
    assert (full.subsystem, full.pass_name) == ("post_grad_passes", "decompose_auto_functionalized")
    # for a repeat that is only counted: the same key, without the bisection a switch outranks
    quick = localise(lost.case, lost.kind, lost.bug_class, "cpu", key_only=True)
    assert quick.key == full.key and quick.key_only and quick.subsystem is None
    assert quick.oracle_calls < full.oracle_calls
    assert Culprit.from_json(quick.to_json()).key_only and not Culprit.from_json(full.to_json()).key_only


@pytest.mark.compile
def test_an_errors_key_alone_costs_its_bisection_without_the_switches():
    error = load(CORPUS / "compile-error-736b0f5852f2.json")
    full = localise(error.case, error.kind, error.bug_class, "cpu")
    assert full.blame == "inductor:decompose_auto_functionalized" and full.switches
    quick = localise(error.case, error.kind, error.bug_class, "cpu", key_only=True)
    assert quick.key == full.key and quick.switches == {}
    assert quick.oracle_calls <= full.oracle_calls - len(switches.available())


@pytest.mark.compile
def test_a_lowerings_key_alone_is_not_bisected_down_to_its_lowering():
    """The lowering a bisection ends on is the op the program happened to lower, never
    part of a key: a key-only triage stops where disabling the lowerings cleared it."""
    error = load(CORPUS / "compile-error-0e2427975b6f.json")
    full = localise(error.case, error.kind, error.bug_class, "cpu")
    assert full.blame == "inductor:lowerings" and full.pass_name is not None
    quick = localise(error.case, error.kind, error.bug_class, "cpu", key_only=True)
    assert quick.key == full.key and quick.pass_name is None and quick.switches == {}
    # the switches, the upper bound's compile and the halvings are left out
    assert quick.oracle_calls <= full.oracle_calls - len(switches.available()) - 2


@pytest.mark.compile
def test_a_wrong_value_of_another_lowering_is_not_keyed_as_the_held_as_strided_one():
    """A dtype view's consumer computed after a later write of the input (the
    ``trim_bits`` read, then a fill: pytorch/pytorch#198101) and the corpus's as_strided
    over the wrong storage are both wrong values the lowerings make: a key-only triage,
    as a repeat gets, bisects down to the op and keys them apart."""
    held = load(CORPUS / "wrong-output-6f9891386514.json")
    x = {"x0": ("s0", "s1")}
    trimmed = case(prog(x, [("trim_bits", ["x0"], "v0", {}), ("slice_fill", ["x0"], None, {"dim": 1, "c": 2.0})],
                        outputs=["v0"]), [{"s0": 4, "s1": 6}])
    quick = localise(trimmed, contract.WRONG_OUTPUT, held.bug_class, "cpu", key_only=True)
    assert quick.key == "inductor:lowerings[bitwise_and]" and quick.key_only
    assert held.culprit.key == "inductor:lowerings[as_strided]"


@pytest.mark.compile
@pytest.mark.skipif(not REINPLACE_TABLE, reason="this torch has no reinplace.inplaceable_ops")
def test_a_scatter_reinplaced_into_an_input_is_not_keyed_as_the_held_reinplacing_bug():
    """A scatter into an input that a later write overwrites, computed in the input's
    memory (pytorch/pytorch#198094), and the corpus's pending read run after a custom op's
    in-place write are both gone with reinplacing off: a key-only triage, as a repeat
    gets, probes reinplacing's entries and keys the scatter apart; the held one, which
    needs no entry, keeps the switch's key, and a single throw of the switch cannot
    recognise the scatter as it."""
    held = load(CORPUS / "wrong-mutation-3e93a770411a.json")
    x = {"x0": ("s0", "s1"), "x1": ("s0", "s1")}
    scatter = case(dataclasses.replace(prog(x, [("slice_scatter_tail", ["x0", "x1"], "v0", {"dim": 0}),
                                                ("zero_", ["x0"], None, {})], outputs=["v0"]),
                                       mode=Mode(dynamic="auto")), [{"s0": 5, "s1": 3}])
    quick = localise(scatter, contract.WRONG_OUTPUT, held.bug_class, "cpu", key_only=True)
    assert quick.key == "inductor:reinplace_inplaceable_ops[_generalized_scatter]", quick.key
    again = localise(held.case, held.kind, held.bug_class, "cpu", key_only=True)
    assert again.key == held.culprit.key == "inductor:reinplace_inplaceable_ops"
    assert recognise.shape_of(bugs.key_of(held), contract.WRONG_OUTPUT, held.bug_class, "inductor") is None


@pytest.mark.compile
def test_a_triage_stops_at_its_budget_and_says_so():
    entry = load(CORPUS / "effect-log-915158cff0e3.json")
    c = localise(entry.case, entry.kind, entry.bug_class, "cpu",
                 OracleBudget(oracle_calls=2, seconds=TRIAGE.budget.seconds))
    assert (c.stage, c.oracle_calls, c.budget_exhausted) == (None, 2, True)
    assert c.blame is None  # groups with nothing


def test_the_blame_is_the_last_switch_in_pipeline_order_that_removes_the_bug():
    assert switches.blamed({"remove_noop_ops": "gone", "reinplace_inplaceable_ops": "gone"}) \
        == "reinplace_inplaceable_ops"
    assert switches.blamed({"fusion": "gone", "reorder_for_peak_memory": "gone",
                            "reorder_for_locality": "gone"}) == "reorder_for_peak_memory"
    assert switches.blamed({"decompose_auto_functionalized": "changed", "fusion": "stays"}) is None
    bisected = Culprit("inductor", "post_grad_passes", "decompose_auto_functionalized",
                       {"decompose_auto_functionalized": "changed"})
    assert bisected.blame == "inductor:decompose_auto_functionalized"
    # a lowering names the program's op: a wrong value keeps it, an error (or a culprit
    # saved without its kind) only the subsystem
    assert Culprit("inductor", "lowerings", "unsqueeze").blame == "inductor:lowerings"
    assert Culprit("inductor", "lowerings", "unsqueeze_2", kind=contract.WRONG_OUTPUT).blame \
        == "inductor:lowerings[unsqueeze]"
    assert Culprit("aot_eager").blame == "aot_eager"
    # an error is blamed where it is raised: a switch that avoids it only reshaped its input
    crash = Culprit("inductor", "post_grad_passes", "decompose_auto_functionalized",
                    {"reorder_for_locality": "gone"}, kind="compile-error")
    assert crash.blame == "inductor:decompose_auto_functionalized"
    assert dataclasses.replace(crash, kind="wrong-mutation").blame == "inductor:reorder_for_locality"
    # and where the bisector names nothing, no switch is blamed either: the error's class
    # already names torch's raising frame
    assert dataclasses.replace(crash, subsystem=None, pass_name=None).blame == "inductor"
    assert dataclasses.replace(crash, kind="wrong-mutation", subsystem=None).blame == "inductor:reorder_for_locality"


def test_a_second_switch_that_removes_a_wrong_result_makes_another_bug_and_pairs_probe_only_what_none_alone_removes():
    # a pending read computed after a later write (only reinplacing's absence removes it)
    # and a clone elided so one buffer plays two roles (the no-op removal's does too)
    pending = Culprit("inductor", switches={"remove_noop_ops": "stays", "reinplace_inplaceable_ops": "gone"},
                      kind="wrong-mutation")
    elided = dataclasses.replace(pending, switches={"remove_noop_ops": "gone", "reinplace_inplaceable_ops": "gone"})
    assert pending.blame == elided.blame == "inductor:reinplace_inplaceable_ops"
    assert pending.key == "inductor:reinplace_inplaceable_ops"
    assert elided.key == "inductor:reinplace_inplaceable_ops (also gone with remove_noop_ops off)"
    # an error is placed where it is raised: the switches that avoid it do not split it
    raised = Culprit("inductor", "post_grad_passes", "decompose_auto_functionalized", elided.switches,
                     kind="compile-error")
    assert raised.key == dataclasses.replace(raised, switches=pending.switches).key
    names = [s.name for s in switches.SWITCHES]
    touched = {**dict.fromkeys(names, "stays"), "decompose_auto_functionalized": "changed"}
    assert switches.pairs_to_probe({**touched, "fusion": "gone"}) == []  # one alone removes it
    pairs = [(a.name, b.name) for a, b in switches.pairs_to_probe(touched)]
    assert len(pairs) == TRIAGE.max_pairs
    # neighbours in the pipeline first, then those one apart: the no-op removal with reinplacing
    # (docs/bugs.md's bug that only both thrown together remove) is among them
    assert pairs[:2] == [("reorder_for_locality", "remove_noop_ops"), ("remove_noop_ops", "pattern_matcher")]
    assert ("remove_noop_ops", "reinplace_inplaceable_ops") in pairs
    assert all(names.index(a) < names.index(b) for a, b in pairs)
    both = "remove_noop_ops+decompose_auto_functionalized"
    assert switches.blamed({**touched, both: "gone"}) == both
    assert Culprit("inductor", switches={**touched, both: "gone"}, kind="wrong-mutation").key == f"inductor:{both}"
    assert switches.patch_of("remove_noop_ops+reinplace_inplaceable_ops") == {
        "disabled_passes": "REMOVE_NOOP_OPS,REINPLACE_INPLACEABLE_OPS"}
    assert switches.patch_of("fusion+buffer_reuse") == {"max_fusion_size": 1, "inplace_buffers": False,
                                                        "allow_buffer_reuse": False}


def test_a_switch_that_only_moves_the_computation_hides_a_bug_without_splitting_it():
    # the dropped effect edge: the peak-memory reordering's absence removes it from every
    # program, the locality reordering's, fusion's or buffer reuse's from some; one bug
    alone = Culprit("inductor", switches={"reorder_for_peak_memory": "gone"}, kind="effect-log")
    hidden = [dataclasses.replace(alone, switches={"reorder_for_peak_memory": "gone", name: "gone"})
              for name in ("reorder_for_locality", "fusion", "epilogue_fusion", "buffer_reuse")]
    assert {c.key for c in hidden} == {alone.key} == {"inductor:reorder_for_peak_memory"}
    assert all(switches.BY_NAME[name].role is switches.Role.MOVES
               for name in ("reorder_for_locality", "fusion", "epilogue_fusion", "buffer_reuse",
                            "reorder_for_peak_memory"))
    # a pass that rewrites the program is part of the cause: it still splits the key
    rewritten = dataclasses.replace(alone, switches={"reorder_for_peak_memory": "gone", "remove_noop_ops": "gone"})
    assert rewritten.key == "inductor:reorder_for_peak_memory (also gone with remove_noop_ops off)"
    assert switches.also_needed({"reorder_for_locality": "gone", "remove_noop_ops": "gone",
                                 "reinplace_inplaceable_ops": "gone"}, "reinplace_inplaceable_ops") == \
        ["remove_noop_ops"]


def test_a_bug_the_no_op_removal_is_blamed_for_is_refined_by_the_rule_whose_absence_removes_it():
    # #198131 (a snapshot copy dropped) and a clone of an offset view dropped: one switch,
    # two of its rules, two bugs
    base = {**dict.fromkeys(s.name for s in switches.SWITCHES), "remove_noop_ops": "gone"}
    copy = Culprit("inductor", switches={**base, "remove_noop_ops[aten.copy]": "gone"}, kind="wrong-mutation")
    clone = Culprit("inductor", switches={**base, "remove_noop_ops[aten.clone]": "gone",
                                          "remove_noop_ops[aten.slice]": "stays"}, kind="wrong-mutation")
    assert copy.blame == "inductor:remove_noop_ops[aten.copy]" and copy.key == copy.blame
    assert clone.key == "inductor:remove_noop_ops[aten.clone]" != copy.key
    # a bug no rule alone removes, or whose rules were not probed, keeps the switch's blame
    assert Culprit("inductor", switches=base, kind="wrong-mutation").blame == "inductor:remove_noop_ops"
    needs_both = {**base, "remove_noop_ops[aten.clone]": "stays", "remove_noop_ops[aten.copy]": "stays"}
    assert Culprit("inductor", switches=needs_both, kind="wrong-mutation").blame == "inductor:remove_noop_ops"
    # rules refine only the blamed switch: a later switch's blame and its "also" stay as they were
    later = {**copy.switches, "reinplace_inplaceable_ops": "gone"}
    assert Culprit("inductor", switches=later, kind="wrong-mutation").key == \
        "inductor:reinplace_inplaceable_ops (also gone with remove_noop_ops off)"
    assert rules.probe_rules(None, {**base, "fusion": "gone"}) == {}


@pytest.mark.compile
@pytest.mark.skipif(not rules.available(), reason="this torch's no-op removal has no registry of rules")
def test_the_rule_probe_names_the_op_the_no_op_removal_dropped_and_whether_the_bug_needs_it():
    snapshot = load(CORPUS / "wrong-mutation-9ce848f551f8.json")   # x1.copy_(x0); x0.mul_(0.5)
    offset = load(CORPUS / "wrong-output-2ab6c6dc07d5.json")       # clone of x0[1:] into m_list
    from torch._inductor.fx_passes import post_grad

    torchs_own = post_grad.noop_registry
    found = {}
    for entry in (snapshot, offset):
        probe = Probe(entry.case, entry.kind, entry.bug_class, "cpu")
        found[entry.id] = rules.probe_rules(probe, {"remove_noop_ops": "gone"})
        assert probe.calls == 1 + len(found[entry.id])  # one recording compile, one per rule
    assert found == {snapshot.id: {"remove_noop_ops[aten.copy]": "gone"},
                     offset.id: {"remove_noop_ops[aten.clone]": "gone"}}
    assert post_grad.noop_registry is torchs_own  # put back after every probe


#: a name-keyed table's fill, as Inductor's scheduler does it, in a module of torch's so
#: that the frame is the one an error is placed at
ANCESTORS = """
class Node:
    def __init__(self, name, deps):
        self.name_, self.deps = name, deps
    def get_name(self):
        return self.name_

def compute_ancestors(nodes):
    name_to_ancestors = {}
    for node in nodes:
        ancestors = set()
        for dep_node_name in node.deps:
            ancestors |= name_to_ancestors[dep_node_name]
        name_to_ancestors[node.get_name()] = ancestors
"""


def _raised_by(nodes_of):
    scope = {"__name__": "torch._inductor.scheduler_stand_in"}
    exec(compile(ANCESTORS, "<stand-in>", "exec"), scope)
    try:
        scope["compute_ancestors"](nodes_of(scope["Node"]))
    except KeyError as exc:
        return exc
    raise AssertionError("the stand-in raised nothing")


def test_a_failed_lookup_is_told_apart_by_which_locals_hold_the_missing_key():
    # a node that depends on itself (pytorch/pytorch#189271) against one placed before the
    # node it reads (a dependency cycle): the same error at the same place, two causes
    self_edge = _raised_by(lambda Node: [Node("op0", []), Node("op1", ["op0", "op1"])])
    cycle = _raised_by(lambda Node: [Node("op0", []), Node("op2", ["op1"]), Node("op1", ["op0"])])
    assert lookup.named_by(self_edge) == ("dep_node_name", "node")
    assert lookup.named_by(cycle) == ("dep_node_name",)
    assert lookup.named_by(ValueError("op1")) == ()  # not a lookup
    assert lookup.missed(klass("compile-error|raised KeyError in torch._inductor:Scheduler.compute_ancestors"))
    assert not lookup.missed(klass("compile-error|raised AssertionError in torch._inductor:f"))
    # the names are part of an error's key, and of its record
    held = Culprit("inductor", subsystem="post_grad_passes", pass_name="decompose_auto_functionalized",
                   kind="compile-error", named_by=("dep_node_name",))
    assert held.key == "inductor:decompose_auto_functionalized (missing key held by dep_node_name)"
    assert held.key != dataclasses.replace(held, named_by=("dep_node_name", "node")).key
    assert Culprit.from_json(held.to_json()) == held
    assert Culprit.from_json({k: v for k, v in held.to_json().items() if k != "named_by"}).named_by == ()


@pytest.mark.compile
def test_the_lookup_probe_tells_a_self_edge_from_a_dependency_cycle_in_the_scheduler():
    self_edge = load(CORPUS / "compile-error-a93d79f564c4.json")  # pytorch/pytorch#189271
    cycle = load(CORPUS / "compile-error-d91ae8744506.json")      # m_scale of a transpose, a masked store
    found = {}
    for entry in (self_edge, cycle):
        probe = Probe(entry.case, entry.kind, entry.bug_class, "cpu")
        found[entry.id] = lookup.probe_lookup(probe, "inductor")
        assert probe.calls == 1
    # 2.14.1 fixed the self-edge: there it compiles, and nothing is named
    fixed = () if releases.release(torch.__version__) >= (2, 14, 0) else ("dep_node_name", "node")
    assert found == {self_edge.id: fixed, cycle.id: ("dep_node_name",)}


def _family(text: str) -> str:
    """The family of the bug class written ``text``, as its text."""
    return family.family(klass(text)).text


def _leftover(found: str, seen: str) -> bool:
    return family.leftover(klass(found), klass(seen))


def test_returned_written_and_logged_wrong_values_are_one_family():
    corrupted = {_family(c) for c in ("wrong-output|values", "wrong-mutation|values",
                                          "effect-log|data", "wrong-mutation|non-finite,values")}
    assert corrupted == {"corrupted-value|values"}
    assert _family("effect-log|data,reordered") == "effect-log|reordered"
    assert _family("wrong-output|shape") == "wrong-output|shape"
    assert _family("compile-error|InductorError: AssertionError:") == "compile-error|InductorError: AssertionError:"
    # an Inductor operation name is the program's: saved classes that kept one are one family
    assert _family("compile-error|InductorError: KeyError: 'op10'") \
        == _family("compile-error|InductorError: KeyError: 'op6'")


def test_what_is_left_of_a_finding_once_its_familys_part_is_gone():
    # a log both reordered and seeing wrong data: with the reordering gone, the data is left
    assert _leftover("effect-log|data,reordered", "effect-log|data")
    # ... but the reordering left over is the family itself, not a leftover
    assert not _leftover("effect-log|data,reordered", "effect-log|reordered")
    # a symptom the finding did not show is something else, not a leftover
    assert not _leftover("effect-log|reordered", "effect-log|missing")
    assert not _leftover("effect-log|data,reordered", "effect-log|data,missing")
    assert not _leftover("compile-error|A", "compile-error|B")


def test_the_committed_corpus_groups_into_its_bugs():
    """The committed corpus as triaged: the grouping docs/bugs.md sets beside the tracker."""
    found = {b.key: b for b in bugs.group(_corpus())}
    assert len(found) == 132
    by_entry = {e: b for b in found.values() for e in b.entries}
    # five stale caches (docs/caches.md): one bug per change of declaration or setting and
    # cache, the fake impl's two aspects (shape, stride) one bug of the FX graph cache
    stale = {b.id: (b.entries, b.blame) for b in found.values() if b.family.kind == contract.STALE_CACHE}
    assert stale == {
        "bug-e9c7a74992": (("stale-cache-238f7f233356",), "cache:aot_autograd_cache"),
        "bug-c39c3c98d6": (("stale-cache-34c653479cfb",), "cache:aot_autograd_cache"),
        "bug-990649b81a": (("stale-cache-0c1930c62c64",), "cache:aot_autograd_cache"),
        "bug-a5abdd27c9": (("stale-cache-e5ad2999bb7c", "stale-cache-ed1ac2113cb9"), "cache:fx_graph_cache"),
        # a setting the key misses, not a declaration: donated buffers turned off
        "bug-72ca8569a7": (("stale-cache-59fc43d2c229",), "cache:fx_graph_cache")}
    found = {k: b for k, b in found.items() if b.family.kind != contract.STALE_CACHE}
    by_entry = {e: b for b in found.values() for e in b.entries}
    # causes (fuzzer/triage/causes.py): the dropped effect edge is one bug of nine entries,
    # whichever scheduling exploited it (peak memory, fusion, the no-op removal)
    edge = by_entry["effect-log-915158cff0e3"]
    assert edge.key.text == "cause @ effect-edge" and set(edge.entries) == {
        "effect-log-915158cff0e3", "effect-log-66c9da38c8aa", "effect-log-6e8524fbe4fb", "effect-log-c322b74b2a9e",
        "effect-log-d1a287aa612e", "effect-log-f0a593c94eb9", "effect-log-34b899f24534", "effect-log-81f0f5f90818",
        "effect-log-7f567fe1fbf1"}
    # a value object's class unbound in a subgraph's code: one bug whatever the subgraph's name
    value = by_entry["runtime-error-936b70b8c2b2"]
    assert value.key.text == "cause @ value-object-in-subgraph" and set(value.entries) == {
        "runtime-error-936b70b8c2b2", "runtime-error-d89aa773b62c"}
    # an ORDERED effect inside a cond branch, a while_loop body: one bug per op, whatever it
    # shows as (a lost effect, a token placeholder never passed, a real token among fakes)
    assert set(by_entry["effect-log-4f5991ef6ceb"].entries) == {
        "effect-log-4f5991ef6ceb", "compile-error-4bc51210da14", "compile-error-a8974935ada9"}
    assert by_entry["effect-log-4f5991ef6ceb"].key.text == "cause @ effect-in-cond"
    assert set(by_entry["effect-log-5a836aca2369"].entries) == {
        "effect-log-5a836aca2369", "runtime-error-bd01adde3572", "compile-error-9c9d0c0a4ba6",
        "runtime-error-4545a98033ee"}
    # a map around a body without an effect fails Inductor's compile on its own: no cause said
    assert by_entry["compile-error-658e8d42aa30"].entries == ("compile-error-658e8d42aa30",)
    # ... where a map's effect found so (on CUDA, then on the CPU) is keyed by its cause
    assert set(by_entry["effect-log-b41d23478e05"].entries) == {"effect-log-b41d23478e05", "compile-error-04b176fb0daa"}
    assert by_entry["effect-log-b41d23478e05"].key.text == "cause @ effect-in-map"
    # a tagged op's result not its argument: a wrong value returned and one written, one cause
    assert set(by_entry["wrong-mutation-db8779b2c287"].entries) == {
        "wrong-mutation-db8779b2c287", "wrong-output-f0160a62dc5b"}
    assert by_entry["wrong-mutation-db8779b2c287"].key.text == "cause @ tagged-result"
    # wrong values after reinplacing: a pending read after a later write (reinplacing alone
    # removes it) and an elided clone (the no-op removal too) are two bugs, smallest first;
    # a clone elided before an index copy reinplaced is the second, the locality
    # reordering that removes it too only moving nodes
    pending, elided = by_entry["wrong-mutation-3e93a770411a"], by_entry["wrong-output-f3c62d095431"]
    assert pending is not elided and pending.blame == elided.blame == "inductor:reinplace_inplaceable_ops"
    assert pending.entries == ("wrong-mutation-3e93a770411a", "wrong-mutation-f9942229fe58",
                               "wrong-mutation-a2d9fba1a9e4")
    assert set(elided.entries) == {"wrong-output-f3c62d095431", "wrong-mutation-7af4eaf56306"}
    # ... and an index copy reinplaced (x.index_copy_(d, perm, x.clone()), the index-writes
    # form, and an index copy into an input a later write overwrites) is a third: gone with
    # reinplacing's index_put entry taken out, which the custom ops' calls have none of
    index = by_entry["wrong-mutation-b29f4272d359"]
    assert set(index.entries) == {"wrong-output-df0291e0c749", "wrong-mutation-b29f4272d359",
                                  "wrong-output-a4066721a40f", "effect-log-16948910b9cf"}
    assert index.blame == "inductor:reinplace_inplaceable_ops[aten.index_put]"
    assert index.kinds == ("effect-log", "wrong-mutation", "wrong-output")
    # the bug no switch alone removes: the pair of the no-op removal and reinplacing does
    assert by_entry["wrong-mutation-e9ffcc1687e2"].blame == "inductor:remove_noop_ops+reinplace_inplaceable_ops"
    assert len(by_entry["compile-error-745793b265f9"].entries) == 3
    # the region's reused input, read the day after the second feedback hour on 2.14.1, and
    # again from a feedback trial of its yield benchmark: a sum where that had a copy_
    assert by_entry["wrong-output-62a6862bc65c"].entries == ("wrong-output-4036945ec39b", "wrong-output-62a6862bc65c")
    assert by_entry["wrong-output-62a6862bc65c"].blame == "inductor:buffer_reuse"
    # every other entry is a bug of its own: another symptom, pass or shape dependence
    alone = [e for e, b in by_entry.items() if len(b.entries) == 1]
    assert sorted(alone) == sorted([
        "effect-log-53422b20f411", "compile-error-a93d79f564c4", "wrong-mutation-e9ffcc1687e2",
        "wrong-mutation-9ce848f551f8", "compile-error-d8845e38cf26", "wrong-output-07d276f3d739",
        "runtime-error-869c0efbb1ae", "compile-error-778e9462d71c", "wrong-output-f160321431a4",
        "compile-error-6d4eeaacdc2a", "compile-error-a916f4a89c83",
        # found on 2.14.1, triaged there (docs/bugs.md)
        "runtime-error-bb0cdbc6819f", "compile-error-543ba2fabeb1", "compile-error-0e2427975b6f",
        "wrong-mutation-11984ca0fb9a", "compile-error-bd3a6bfe9257", "compile-error-dfd1a10fd430",
        "compile-error-9a5dc164413a", "crash-8caa0f144a94", "compile-error-6f4f82075801",
        "compile-error-d91ae8744506", "wrong-output-344cc751f3d6", "wrong-output-b904a2f2c819",
        "compile-error-0f6416e2b9a8", "runtime-error-620c7abd9c26", "wrong-output-b84cc5d2f4ae",
        # the yield benchmark's trials on 2.13
        "runtime-error-37be42a93e71", "wrong-output-ec1ddebeb7e0", "wrong-output-2ab6c6dc07d5",
        # this round's families and forms
        "compile-error-7149574ffdf7", "wrong-mutation-979c368711ee", "compile-error-1223c48fb925",
        "compile-error-5a807c5fd69f", "compile-error-1344d7301a23", "wrong-output-1e0275e70210",
        "compile-error-658e8d42aa30",
        # the hours with windows of one buffer
        "compile-error-8a85bd8f1ea8",
        # compiled-autograd's and export's own
        "compile-error-7cebc8b2de91", "effect-log-51df0e9dcc1b", "compile-error-8670a9d59c2b",
        "runtime-error-a812959dad2a", "compile-error-670dfd029bcd",
        # the thousand programs with every feature; an hour on 2.13
        "compile-error-0a034d5319e5", "compile-error-03205aa3a74d", "wrong-mutation-03f2f53351f9",
        "compile-error-e671f93e3603", "runtime-error-7a2fc99d8dbe",
        # the one-hour campaign on 2.14.1's: inputs that alias at a later call only (#139789)
        "wrong-mutation-e5d2d06841ad",
        # a func-grad campaign's: a stale requires_grad in Dynamo
        "wrong-output-8e18f568ef81",
        # the subclass, vmap and base-offset campaigns of 2026-12-06 (the offset's two
        # stages are two bugs of one cause)
        "compile-error-cb05a471fd91", "compile-error-0f85b1cbb3ae", "wrong-output-6f9891386514",
        "runtime-error-34e7c9e6e5be", "compile-error-4f02c24059f0", "compile-error-421e9286e0a8",
        "wrong-output-9dd095d84ef4", "compile-error-ba6255afc7f0", "runtime-error-05973cc9804b",
        "runtime-error-97577e53f499", "wrong-output-8f97bac2c0b8", "wrong-output-0ff8c9c07af8",
        # the 500 programs of seed 653: a subclass's lifted part, a cond operand's layout
        "effect-log-944d5d199aec", "wrong-output-dd9e054b4afb", "wrong-output-f475e3b87d85",
        "runtime-error-f0dbe4fa696f",
        # a campaign of the families of 2026-12-06: public bugs of 2.13.0 and a held cause's
        # other symptom, held so that campaigns recognise them
        "runtime-error-1e52e8494891", "compile-error-946f94e2703e", "compile-error-b9a649f585ac",
        "compile-error-fb9e05d1dd75", "compile-error-e0904e594a2c", "compile-error-3caa9ccf33f7",
        # Dynamo's guard on the size of a window's base AOTAutograd fakeified anew
        "compile-error-3cf9d20933a6",
        # a yield trial's: a held cause (set_'s wrapper left 1-D, #197399) under another key
        "compile-error-bdfbdfe7af4e",
        # the one-hour campaigns of 2026-12-07: a view of an input written from its own
        # transpose handed back with another buffer's offset, or strides (two keys)
        "wrong-output-600ef7f4e35a", "wrong-output-3127ef533ed9",
        # the hour of every feature after the view scatters: a subclass output's sizes
        # counted before a dead op's guard pins them (#185296); a product's backward guarding
        # on an unbacked stride; 2.14.1's wrapper leaving an empty input's size symbols unbound
        "runtime-error-abf76207d070", "compile-error-af9052d39732", "runtime-error-0841dd3b4ab3",
        # the hours of gradients through the families: an empty subclass input's gradient
        # come back plain; aliased inputs whose sizes all became constants, checked as static;
        # nonzero of a size that is 1, ranged apart by AOTAutograd's retrace; an out= op's
        # sizes traced apart by replace_by_example; a dtype view's missing reindexer (#189584)
        "wrong-output-79022c8dd739", "compile-error-c0975ccd2599", "compile-error-db6df32db78c",
        "compile-error-a7e0455ebc75", "compile-error-6aa193076a42",
        # and of seed 1700: a scatter of the backward onto an expanded base (#179188); a flip
        # written back through a transposed view of an input in one kernel
        "compile-error-c2dac219671c", "wrong-mutation-764d5f13c0d9",
        # the blind hours of seed 1800: a view of a written input handed back through
        # Inductor's strides; a runtime assert parked under a symbol that became a constant;
        # the backward's slice_scatter guarding an unbacked end; a sliced output's fresh size
        # leaked by AOTAutograd's sync; a scatter's arguments read after their node was
        # erased; index_fill's gradient reinplaced onto an expanded tensor (#183986)
        "wrong-output-fbd86a81d7ab", "runtime-error-55b66bf96a23", "compile-error-e4d5a7cb54e0",
        "compile-error-ab1115c7b229", "compile-error-8270fd7f6663", "wrong-output-5fd23a0bc517",
        # and an input swapped by set_, its size symbol's source lost to Dynamo's guards
        "compile-error-3a48cdc1996d",
        # a weighted campaign of seed 1900: unfold of an unbacked size in Inductor's reuse heuristic
        "compile-error-e0e80ae5cc01",
        # and of seed 2000: a subclass view across a graph break losing a size equality; a
        # contiguous copy read by as_strided laid out by its reads (two keys); a view taken
        # before an input's set_ regenerated from the new storage (#94773)
        "compile-error-2713e12d5196", "wrong-output-ea8d681a1003", "effect-log-c6d72a265d8b",
        "wrong-output-adfdc1d433b3",
        # and roll's decomposition guarding an unbacked element count (a custom op's backward);
        # held causes under keys of their own, held so that campaigns recognise them: an
        # empty pair's gradient through a slice, aliased inputs with an unbacked dim beside
        # a pair, a tagged op's result told as a fresh buffer under torch.func.grad
        "compile-error-2ed6734d08c6", "wrong-output-a6edd6765b88", "compile-error-4fd7f727c15d",
        "wrong-output-be837d4592f1",
        # and of seed 2100: a masked vector load past its buffer in the backward (a crash); a
        # synthetic base's view replay guarding an unbacked element count
        "crash-c6f7ad7e92e4", "compile-error-eea845de9d49",
        # a value object made in the compiled region of a symbolic size, an internal error of Dynamo
        "compile-error-2511b61a8299",
        # objects in higher-order ops: a float read in a repeated region (a value object's class
        # unbound in Inductor's code for a subgraph is one bug of two entries, above)
        "compile-error-784f78e70517",
        # a custom op's write past the buffer of a mutated input slice (a window of an unread base)
        "crash-5629d62e85b8",
        # a half-precision product's requires_grad lost beside its no_grad clone
        "wrong-output-54d6bed8fe43",
        # a cache handle's ORDERED op in a repeated layer, which Inductor cannot lower; a float
        # read in the root graph and then in a region (three keys, two releases), and 2.14.1's
        # key of the float read in a repeated region
        "compile-error-fd6d29b14a87", "compile-error-14001e4c04e4", "runtime-error-5687b2ae2af7",
        "compile-error-e313d7fbdae3", "compile-error-904ebc954366"])
    assert by_entry["wrong-mutation-9ce848f551f8"].blame == "inductor:remove_noop_ops[aten.copy]"
    assert by_entry["wrong-output-2ab6c6dc07d5"].blame == "inductor:remove_noop_ops[aten.clone]"
    # the storage offset and the node-count assertion need symbolic shapes, and so does the
    # value range of a reduction over a size that can be 0, the view of a strided input
    # read after a write, and the symbol a recompile after a graph break loses, and of 2.14.1's
    # the unbound symbol, the lost strided write and merge_view_inputs' assert, and the
    # region's unpassed symbol, the three-argument mul and the recursion after a break, and
    # the dead cond's size the FakeTensorUpdater takes for an int, and the guards Dynamo
    # builds from an input an aten in-place view changed, and the as_strided past a copied
    # view (at its entry's sizes: others show it static); the rest do not
    assert {b.smallest for b in found.values() if b.culprit and b.culprit.dynamic_only} == {
        "effect-log-53422b20f411", "compile-error-736b0f5852f2", "compile-error-d8845e38cf26",
        "wrong-output-07d276f3d739", "compile-error-6d4eeaacdc2a", "runtime-error-bb0cdbc6819f",
        "wrong-mutation-11984ca0fb9a", "compile-error-543ba2fabeb1", "runtime-error-37be42a93e71",
        "compile-error-9a5dc164413a", "compile-error-6f4f82075801", "compile-error-0f6416e2b9a8",
        "compile-error-1344d7301a23", "compile-error-ba6255afc7f0", "wrong-output-8f97bac2c0b8",
        # the out variant's SymInt layout (#185503) and cond's Max(1, s - 1) stride (#188151)
        "compile-error-946f94e2703e", "compile-error-fb9e05d1dd75",
        # a view of an input written from its own transpose, another buffer's layout
        "wrong-output-600ef7f4e35a", "wrong-output-3127ef533ed9",
        # a subclass output's symbolic sizes, counted before a dead op's guard pins one; an
        # empty input's size symbols unbound at a recompile; nonzero of a size that is 1
        "runtime-error-abf76207d070", "runtime-error-0841dd3b4ab3", "compile-error-db6df32db78c",
        # a view's strides rebuilt from Inductor's output (no view replay for symbolic
        # arguments); a scatter's symbolic arguments nulled by the erase of its node
        "wrong-output-fbd86a81d7ab", "compile-error-8270fd7f6663",
        # a symbol's source lost to a traced set_ of the input (static sizes keep none); a
        # subclass view's size equality lost across a graph break
        "compile-error-3a48cdc1996d", "compile-error-2713e12d5196",
        # a value object made of a size: static shapes make it of a constant; a float read in a
        # repeated region: static shapes specialise it
        "compile-error-2511b61a8299", "compile-error-784f78e70517",
        # a half-precision product's requires_grad lost: a static float is a constant
        "wrong-output-54d6bed8fe43",
        # a float read in the root graph and then in a region: static shapes specialise it
        "compile-error-14001e4c04e4", "runtime-error-5687b2ae2af7", "compile-error-e313d7fbdae3",
        "compile-error-904ebc954366"}
    # the features' bugs, each blamed where it lives
    assert {by_entry[e].blame for e in ("wrong-output-07d276f3d739", "compile-error-6d4eeaacdc2a",
                                         "compile-error-a916f4a89c83")} == {"aot_eager"}
    assert by_entry["wrong-output-f160321431a4"].blame == "inductor:buffer_reuse"


def test_the_same_blame_with_and_without_dynamic_shapes_is_two_bugs():
    offset = load(CORPUS / "effect-log-53422b20f411.json")
    static_too = load(CORPUS / "effect-log-53422b20f411.json")
    static_too.id = "effect-log-static"
    static_too.culprit = dataclasses.replace(static_too.culprit, dynamic_only=False)
    assert offset.culprit.blame == static_too.culprit.blame
    assert len(bugs.group([offset, static_too])) == 2


def test_an_untriaged_entry_is_a_bug_of_its_own():
    a, b = (load(CORPUS / f"effect-log-{i}.json") for i in ("915158cff0e3", "c322b74b2a9e"))
    a.culprit = b.culprit = None
    assert len(bugs.group([a, b])) == 2


def test_a_crash_is_keyed_by_torchs_innermost_frame_and_one_without_any_stands_alone():
    """The corpus's crash aborted in dcefuzz's own code (``sizes.py``, making the next
    inputs: a corrupted heap is noticed at the next allocation); that frame is no cause."""
    crash = load(CORPUS / "crash-8caa0f144a94.json")
    assert crash.detail[1] == "  at evaluate (sizes.py:78)" and bugs.blame_of(crash) is None
    other = dataclasses.replace(crash, id="crash-other")
    assert len(bugs.group([crash, other])) == 2  # two stacks that name no cause: two bugs

    def died_in(entry_id: str, torch_frame: str):
        return dataclasses.replace(crash, id=entry_id, detail=[
            crash.detail[0], "  at evaluate (fuzzer/program/sizes.py:78)",
            "  at make_inputs (fuzzer/judge/execute.py:82)",
            f"  at {torch_frame}", "  at run_trial (fuzzer/judge/trial.py:165)"])

    a = died_in("crash-a", "codegen (torch/_inductor/graph.py:901)")
    b = died_in("crash-b", "codegen (torch/_inductor/graph.py:905)")  # another line: one place
    c = died_in("crash-c", "fuse_nodes (torch/_inductor/scheduler.py:2210)")
    assert bugs.blame_of(a) == "process:codegen (torch/_inductor/graph.py)"
    grouped = {b.entries for b in bugs.group([a, b, c])}
    assert grouped == {("crash-a", "crash-b"), ("crash-c",)}


def test_a_wrong_value_blamed_on_a_stage_alone_is_keyed_by_what_its_program_does():
    """``eager`` and ``aot_eager`` have no bisector subsystem and no switch: every wrong
    value there had one key, and one id held two causes in turn."""
    aliased = load(CORPUS / "wrong-output-344cc751f3d6.json")    # a view of an aliased input
    strided = load(CORPUS / "wrong-output-07d276f3d739.json")    # a strided input's view (#133512)
    strided.culprit = dataclasses.replace(strided.culprit, dynamic_only=aliased.culprit.dynamic_only)
    assert aliased.culprit.key == strided.culprit.key == "aot_eager"
    assert bugs.key_of(aliased).text == \
        "corrupted-value|values @ aot_eager {does m_scale, masked_fill, narrow; strided, aliased}"
    assert len(bugs.group([aliased, strided])) == 2
    # the same program, found again, is the same bug; one that names a switch is keyed by it
    again = dataclasses.replace(aliased, id="wrong-output-again")
    assert bugs.key_of(again) == bugs.key_of(aliased)
    inside = load(CORPUS / "wrong-mutation-3e93a770411a.json")
    assert bugs.key_of(inside).text == "corrupted-value|values @ inductor:reinplace_inplaceable_ops"
    assert all(bugs.separates(e) for e in (aliased, strided, inside))


def test_a_wrong_value_a_moving_switch_hides_is_keyed_by_what_it_tells_of_its_buffers():
    """The peak-memory reordering's absence hides a region's donated backward buffer
    (``b904a2f2c819``) and a tagged out= op's result that Inductor takes to alias
    nothing (``1e0275e70210``): two causes, one key, until the key said what each
    program tells the compiler of its buffers.  Other aten forms around one cause (the
    region's two entries under buffer reuse) do not split it; a rewriting switch's key
    needs no such part."""
    region = load(CORPUS / "wrong-output-b904a2f2c819.json")
    tagged = load(CORPUS / "wrong-output-1e0275e70210.json")
    assert region.culprit.blame == tagged.culprit.blame == "inductor:reorder_for_peak_memory"
    assert region.culprit.places and tagged.culprit.places
    assert bugs.key_of(tagged).text == ("corrupted-value|values @ inductor:reorder_for_peak_memory"
                                   " {buffers returns its operand, writes}")
    assert bugs.key_of(region).blame.endswith("{buffers grad, in a region}")
    assert len(bugs.group([region, tagged])) == 2
    one, two = (load(CORPUS / f"wrong-output-{i}.json") for i in ("4036945ec39b", "62a6862bc65c"))
    assert bugs.does(one.case.program) != bugs.does(two.case.program)
    assert len(bugs.group([one, two])) == 1
    rewrites = load(CORPUS / "wrong-mutation-3e93a770411a.json")
    assert not rewrites.culprit.places and "{" not in bugs.key_of(rewrites).blame


def test_a_key_that_cannot_tell_causes_apart_never_makes_a_finding_a_repeat(tmp_path):
    """A stage and nothing inside it, with a program that says nothing (or a crash with
    no frame of torch): a finding under such a key is saved, never only counted."""
    base = load(CORPUS / "wrong-output-344cc751f3d6.json")
    empty = dataclasses.replace(base.case.program, body=(), outputs=(),
                                mode=dataclasses.replace(base.case.program.mode, strided=(), aliases=()))
    vague = [dataclasses.replace(base, id=f"wrong-output-vague{i}",
                                 case=dataclasses.replace(base.case, program=empty)) for i in range(3)]
    assert bugs.does(empty) == "" and not bugs.separates(vague[0])
    assert len({bugs.key_of(e) for e in vague}) == 1
    examples = Examples(tmp_path, cap=1)
    assert [examples.save(e).kept for e in vague] == [Kept.NEW] * 3
    assert examples.held() == {}
    # a key that tells causes apart is full at its cap, and counts the rest
    told = [dataclasses.replace(base, id=f"wrong-output-told{i}") for i in range(2)]
    assert [examples.save(e).kept for e in told] == [Kept.NEW, Kept.COUNTED]
    assert list(examples.held()) == [bugs.key_of(base)]
    assert Examples(tmp_path, cap=1).held() == examples.held()  # read back the same


def test_a_bug_keeps_its_smallest_examples_and_counts_the_rest(tmp_path):
    reordered = sorted((e for e in _corpus() if e.kind == "effect-log" and e.culprit
                        and e.culprit.key == "inductor:reorder_for_peak_memory"),
                       key=lambda e: e.statements, reverse=True)  # largest first: none later is larger
    total = sum(e.hits for e in reordered)
    examples = Examples(tmp_path, cap=3)
    kept = [examples.save(e).kept for e in reordered]
    assert kept[:3] == [Kept.NEW] * 3 and set(kept[3:]) <= {Kept.REPLACED, Kept.COUNTED}
    on_disk = [load(p) for p in entries_in([str(tmp_path)])[0]]
    smallest = sorted(e.statements for e in reordered)[:3]
    assert sorted(e.statements for e in on_disk) == smallest
    assert sum(e.hits for e in on_disk) == total  # no hit is lost
    (bug,) = bugs.group(on_disk)
    assert bug.hits == total
    # a second campaign on the same folder reads the cap back
    again = Examples(tmp_path, cap=3)
    assert again.save(reordered[0]).kept is Kept.COUNTED and again.entries == 3


@pytest.mark.compile
def test_triage_of_a_corpus_folder_writes_culprits_in_place(tmp_path):
    # stage walk only (a budget of 4 calls): enough to show the command's bookkeeping
    shutil.copy(CORPUS / "effect-log-915158cff0e3.json", tmp_path)
    from click.testing import CliRunner

    from fuzzer.cli import main
    r = CliRunner().invoke(main, ["triage", str(tmp_path), "--again", "--triage-budget", "4"])
    assert r.exit_code == 0, r.output
    entry = load(tmp_path / "effect-log-915158cff0e3.json")
    assert entry.culprit.stage == "inductor" and entry.culprit.budget_exhausted
    assert (tmp_path / "effect-log-915158cff0e3.py").exists()
    assert "1 bugs in 1 entries" in r.output


def test_stats_lists_the_bugs_of_a_campaign_folder_with_first_and_last_hit(tmp_path):
    import json

    from click.testing import CliRunner

    from fuzzer.campaign.state import CampaignFolder, CampaignState, Shard
    from fuzzer.cli import main

    folder = CampaignFolder(tmp_path / "run")
    folder.save(CampaignState(seed=0, shard=Shard()))
    folder.corpus.mkdir()
    for name in ("effect-log-915158cff0e3", "effect-log-c322b74b2a9e"):  # one bug
        shutil.copy(CORPUS / f"{name}.json", folder.corpus)
    r = CliRunner().invoke(main, ["stats", str(folder.path)])
    assert r.exit_code == 0, r.output
    (line,) = [ln for ln in r.output.splitlines() if ln.startswith("  bug-")]
    first, last = sorted(load(folder.corpus / f"{n}.json").found
                         for n in ("effect-log-915158cff0e3", "effect-log-c322b74b2a9e"))
    assert "entries 2" in line and f"first {first}" in line and f"last {last}" in line
    assert "bugs       1 in" in r.output
    as_json = json.loads(CliRunner().invoke(main, ["stats", str(folder.path), "--json"]).output)
    assert [b["entries"] for b in as_json["bugs"]] == [2]


def test_a_bug_key_is_one_record_whose_text_names_it():
    """A key's text, what a bug's id hashes and a campaign's log keeps, is its family's,
    ``' @ '`` and its blame; over the committed corpus two keys are one record exactly
    where their texts are one (a family with ' @ ' in it keeps its own part)."""
    keys = {bugs.key_of(e) for e in _corpus()}
    assert all(k.text == f"{k.family.text} @ {k.blame}" for k in keys)
    assert len({k.text for k in keys}) == len(keys) == len({bugs.bug_id(k) for k in keys})
    odd = bugs.BugKey(klass("compile-error|raised X in torch.f: a @ b"), "inductor")
    assert odd.family.symptoms == ("raised X in torch.f: a @ b",) and odd.text.endswith("a @ b @ inductor")


# -- a crash's stage: walked from outside, a fresh process per backend ----------------

def _crash(death: str = "heap corruption", kind=contract.CRASH):
    """A crash (or timeout) entry as a campaign saves a casualty that died ``death``."""
    from fuzzer.corpus.entry import Entry, Origin
    from fuzzer.program.generate import generate, program_seed

    return Entry.build(kind, generate(program_seed(0, 0)), [contract.Divergence(kind, 0, "process", death)],
                       Origin(seed=0, device="cpu", backend="inductor"))


def _judges(monkeypatch, by_backend: dict) -> list:
    """Stand in for the fresh processes of ``fuzzer.triage.casualty``: on each backend the
    child ends as ``by_backend`` says (a death's detail; absent: it ran, judged clean;
    "untested": it ran and could not judge).  Returns (backend, seconds, checked) per
    process started."""
    from fuzzer.isolation.deaths import Death
    from fuzzer.triage import casualty

    started = []

    class Judge:
        def __init__(self, device, backend, fault=None, limits=None, seconds=None, stop=None, checked=False):
            started.append((backend, seconds, checked))
            self.backend = backend

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            pass

        def run(self, case_):
            end = by_backend.get(self.backend)
            if end is None or end == "untested":
                return Death(None, f"ran to completion ({end or 'ok'})", status=end or contract.OK)
            return Death(contract.CRASH, end)

    monkeypatch.setattr(casualty, "IsolatedJudge", Judge)
    return started


@pytest.mark.parametrize("recorded, by_backend, expected, otherwise", [
    ("heap corruption", {"inductor": "process died: heap corruption"}, "inductor", {}),
    # a corrupted heap met by a plain fault at aot_eager: its stage, not inductor's
    ("heap corruption", {"aot_eager": "process died: SIGSEGV", "inductor": "process died: heap corruption"},
     "aot_eager", {}),
    ("SIGSEGV", {"eager": "process died: SIGBUS", "aot_eager": "untested", "inductor": "process died: SIGSEGV"},
     "inductor", {"eager": ("crash|process died: SIGBUS",), "aot_eager": ("untested",)}),
    ("SIGSEGV", {"aot_eager_decomp_partition": "process died: SIGABRT"}, None, {}),  # never dies so
])
def test_a_crash_is_placed_at_the_first_stage_whose_fresh_process_dies_so(monkeypatch, recorded, by_backend,
                                                                            expected, otherwise):
    from fuzzer.triage import casualty

    started = _judges(monkeypatch, by_backend)
    culprit = casualty.localise(_crash(f"process died: {recorded}"), "cpu", TRIAGE.budget)
    assert (culprit.stage, culprit.otherwise, culprit.kind) == (expected, otherwise, contract.CRASH)
    walked = STAGES[:STAGES.index(expected) + 1] if expected else STAGES
    assert [b for b, _, _ in started] == list(walked) and culprit.oracle_calls == len(walked)
    assert all(checked for _, _, checked in started)  # each process's heap checked


def test_a_crash_stage_walk_keeps_to_its_budget_and_a_timeout_to_its_candidate_limit(monkeypatch):
    from fuzzer.limits import PoolLimits
    from fuzzer.triage import casualty

    started = _judges(monkeypatch, {"inductor": "process died: SIGSEGV"})
    culprit = casualty.localise(_crash("process died: SIGSEGV"), "cpu", OracleBudget(oracle_calls=2, seconds=60))
    assert (culprit.stage, culprit.oracle_calls, culprit.budget_exhausted, len(started)) == (None, 2, True, 2)
    started.clear()
    hang = _crash("program exceeded its time limit (120 s)", contract.TIMEOUT)
    casualty.localise(hang, "cpu", TRIAGE.budget)
    assert {s for _, s, _ in started} == {PoolLimits().casualty_candidate_seconds}


def test_a_crash_entry_gets_its_stage_from_triage_and_bugs_show_it(monkeypatch):
    """``culprit_of`` (``dcefuzz triage``) walks a crash from outside; its bug keeps its
    key (the innermost frame of torch, here none: the entry alone) and shows its stage."""
    from fuzzer.campaign.entries import culprit_of
    from fuzzer.render.table import culprit_words

    _judges(monkeypatch, {"inductor": "process died: heap corruption"})
    entry = _crash("process died: heap corruption")
    before = bugs.key_of(entry)
    (untriaged,) = bugs.group([entry])
    assert culprit_words(untriaged) == ["not triaged"] and untriaged.title.endswith("(not localised)")
    entry.culprit = culprit_of(entry, "cpu", TRIAGE.budget)
    (bug,) = bugs.group([entry])
    assert bug.culprit.stage == "inductor" and "stage inductor" in culprit_words(bug)
    assert bugs.key_of(entry) == before and bug.title.endswith(" in inductor")


def test_triage_runs_each_entry_with_the_threads_of_the_process_that_found_it(tmp_path, monkeypatch):
    """Some bugs show only with one intra-op thread (a campaign's workers run one each):
    ``dcefuzz triage`` localises an entry with its own number, as a replay does."""
    import torch
    from click.testing import CliRunner

    from fuzzer.campaign import entries
    from fuzzer.cli import main

    import json

    data = json.loads((CORPUS / "effect-log-915158cff0e3.json").read_text())
    (tmp_path / "effect-log-915158cff0e3.json").write_text(json.dumps({**data, "threads": 1}))
    seen = []

    def stand_in(entry, device, budget, *args, **kwargs):
        seen.append((entry.threads, torch.get_num_threads()))
        return Culprit("inductor", kind=entry.kind)

    monkeypatch.setattr(entries, "culprit_of", stand_in)
    old = torch.get_num_threads()
    torch.set_num_threads(3)
    try:
        r = CliRunner().invoke(main, ["triage", str(tmp_path), "--again"])
    finally:
        torch.set_num_threads(old)
    assert r.exit_code == 0, r.output
    assert seen == [(1, 1)]
