"""Causes (``fuzzer.triage.causes``): what in torch went wrong, shown by probes, is one bug
whatever it shows as; stand-in probes, and one real compile of the dropped effect edge."""

import dataclasses
from pathlib import Path

import pytest
from helpers import case, prog

from fuzzer.corpus import bugs
from fuzzer.corpus.entry import Entry, Origin
from fuzzer.corpus.store import load
from fuzzer.judge import contract
from fuzzer.triage import causes, edges
from fuzzer.triage.culprit import Culprit
from fuzzer.triage.probe import Outcome, Probe

GONE, STAYS, CHANGED = Outcome.GONE, Outcome.STAYS, Outcome.CHANGED
CORPUS = Path(__file__).resolve().parent.parent / "corpus"


class TableProbe:
    """Answers by what the compiled case holds: the rule gives the outcome of a case."""

    def __init__(self, c, kind, rule):
        self.case, self.kind, self.rule, self.asked = c, kind, rule, []

    def outcome(self, backend, config=None, dynamic=True, within=None, case=None):
        self.asked.append((backend, within, case))
        return self.rule(case or self.case, within)


def _forms(c):
    return {s.form for s in c.program.body}


COND = prog({"x0": ("s0",)}, [("mul_", ["x0"], None, {"c": 0.5}),
                              ("cond_log", ["x0"], "v0", {"site": 0, "site2": 1})], outputs=["v0"])


@pytest.mark.parametrize("bare, pure, shown", [
    (GONE, GONE, "effect-in-cond"),   # needs the effect inside the branch
    (STAYS, GONE, ""),                # the bare effect shows it too: not the body's
    (GONE, STAYS, ""),                # the cond without an effect shows it too: a cond bug
    (GONE, CHANGED, ""),              # something else breaks: nothing said
])
def test_an_effect_in_a_cond_branch_is_its_cause_only_where_both_twins_lose_the_bug(bare, pure, shown):
    def rule(c, within):
        forms = _forms(c)
        return bare if "e_tap" in forms else pure if "cond_sin" in forms else STAYS
    probe = TableProbe(case(COND), contract.EFFECT_LOG, rule)
    assert causes.shown(probe, "aot_eager") == shown


def test_a_cause_is_one_key_whatever_family_stage_or_program():
    """Findings of one cause seen as a lost effect at ``aot_eager`` and as an Inductor
    compile error are one bug; without the cause, two."""
    lost = Entry.build(contract.EFFECT_LOG, case(COND), [contract.Divergence(
        contract.EFFECT_LOG, 0, "sequence", "missing", ("missing",))], Origin(seed=0, device="cpu", backend="inductor"))
    error = Entry.build(contract.COMPILE_ERROR, case(prog({"x0": ("s0",)}, [
        ("cond_tap", ["x0"], "v0", {"site": 0, "site2": 1})], outputs=["v0"])), [contract.Divergence(
            contract.COMPILE_ERROR, 0, "compile", "x", ("raised RuntimeError in torch.fx:FakeTensorProp.run_node",))],
                        Origin(seed=0, device="cpu", backend="inductor"))
    told = [dataclasses.replace(lost, culprit=Culprit("aot_eager", kind=lost.kind, cause="effect-in-cond")),
            dataclasses.replace(error, culprit=Culprit("inductor", kind=error.kind, cause="effect-in-cond"))]
    assert {bugs.key_of(e).text for e in told} == {"cause @ effect-in-cond"}
    grouped = bugs.group(told)
    assert len(grouped) == 1 and grouped[0].family == causes.FAMILY and bugs.separates(told[0])
    assert "token" in grouped[0].title and set(grouped[0].kinds) == {contract.EFFECT_LOG, contract.COMPILE_ERROR}
    untold = [dataclasses.replace(e, culprit=dataclasses.replace(e.culprit, cause="")) for e in told]
    assert len(bugs.group(untold)) == 2


def test_a_reordering_gone_with_the_effect_edge_kept_is_the_dropped_edge():
    reordered = case(prog({"x0": ("s0",)}, [("e_log", ["x0"], None, {"site": 0}), ("e_tap", ["x0"], "v0", {"site": 1})],
                          outputs=["v0"]))
    kept = TableProbe(reordered, contract.EFFECT_LOG, lambda c, within: GONE if within is edges.kept else STAYS)
    assert causes.shown(kept, "inductor") == ("effect-edge" if edges.available() else "")
    stays = TableProbe(reordered, contract.EFFECT_LOG, lambda c, within: STAYS)
    assert causes.shown(stays, "inductor") == ""
    # asked of a reordering on Inductor only
    assert causes.shown(kept, "aot_eager") == ""


@pytest.mark.parametrize("body, kind, stage, shown", [
    # two effects on one state: their order shows in the value one reads (a wrong value)
    ([("e_tap", ["x0"], "v0", {"site": 0}), ("e_log", ["x0"], None, {"site": 1})],
     contract.WRONG_OUTPUT, "inductor", "effect-edge"),
    ([("e_tap", ["x0"], "v0", {"site": 0}), ("e_log", ["x0"], None, {"site": 1})],
     contract.WRONG_MUTATION, "inductor", "effect-edge"),
    # one effect has no order to lose: not asked, whatever the probe says
    ([("e_tap", ["x0"], "v0", {"site": 0}), ("p_sin", ["x0"], "v1", {"site": 1})],
     contract.WRONG_OUTPUT, "inductor", ""),
    # not Inductor's: not asked
    ([("e_tap", ["x0"], "v0", {"site": 0}), ("e_log", ["x0"], None, {"site": 1})],
     contract.WRONG_OUTPUT, "aot_eager", ""),
])
def test_a_wrong_value_between_two_effects_gone_with_the_edge_kept_is_the_dropped_edge(body, kind, stage, shown):
    """Effects on one state (a reference object's, a library's global) leave their order in
    the values they write or read, not in the log: a wrong value on Inductor in a program
    of two effects, gone with the edge kept, is the same cause as a reordered log."""
    found = case(prog({"x0": ("s0",)}, body, outputs=["v0"]))
    kept = TableProbe(found, kind, lambda c, within: GONE if within is edges.kept else STAYS)
    assert causes.shown(kept, stage) == (shown if edges.available() else "")
    assert causes.shown(TableProbe(found, kind, lambda c, within: STAYS), stage) == ""


@pytest.mark.compile
@pytest.mark.skipif(not edges.available(), reason="this torch's Inductor has no effect-edge table")
def test_the_corpus_reordering_is_gone_with_the_edge_kept():
    """``v0 = x0.clone(); e_log(v0); v1 = e_tap(x0)``: Inductor runs ``e_tap`` first; with the
    edge ``with_effects`` records found under the operation's name, in order."""
    entry = load(CORPUS / "effect-log-915158cff0e3.json")
    probe = Probe(entry.case, entry.kind, entry.bug_class, "cpu")
    assert probe.outcome("inductor") is STAYS
    assert probe.outcome("inductor", within=edges.kept) is GONE


def test_a_repeat_of_a_held_cause_is_recognised_by_its_probes(monkeypatch):
    """A held ``cause @ effect-in-cond`` is checked on a finding of any family whose program
    has an effect in a cond branch: the stage walk, then the cause's two probes."""
    from fuzzer.triage import recognise as recognition

    answers = {"bare": GONE, "pure": GONE}

    class Fake:
        def __init__(self, c, kind, bug_class, device, budget, spots=None):
            self.case, self.kind, self.calls, self.seconds, self.seen, self.recompiled = c, kind, 0, 0.0, (), {}

        def outcome(self, backend, config=None, dynamic=True, within=None, case=None):
            if case is None:
                return GONE if backend == "eager" else STAYS
            return answers["bare"] if "e_tap" in _forms(case) else answers["pure"]

    monkeypatch.setattr(recognition, "Probe", Fake)
    finding = Entry.build(contract.COMPILE_ERROR, case(COND), [contract.Divergence(
        contract.COMPILE_ERROR, 0, "compile", "x", ("raised RuntimeError in torch.fx:FakeTensorProp.run_node",))],
                          Origin(seed=0, device="cpu", backend="inductor"))
    cause = bugs.BugKey(causes.FAMILY, "effect-in-cond")

    def recognised():
        return recognition.recognise(finding, [cause],
                                     lambda c, case=finding.case: bugs.key_of(dataclasses.replace(finding, culprit=c)))
    culprit = recognised()
    assert culprit is not None and culprit.cause == "effect-in-cond" and culprit.stage == "aot_eager"
    answers["pure"] = STAYS
    assert recognised() is None


def test_a_finding_whose_cause_the_probes_show_is_not_taken_for_a_held_key_of_its_symptom(monkeypatch):
    """Recognition asks the causes that apply as a whole triage would: a lost effect in a cond
    branch whose probes show the cause is not the held ``{does ...}`` bug of its symptom (its
    own key is the cause's); where they do not show it, it is."""
    from fuzzer.triage import recognise as recognition

    answers = {"twins": GONE}

    class Fake:
        def __init__(self, c, kind, bug_class, device, budget, spots=None):
            self.case, self.kind, self.calls, self.seconds, self.seen, self.recompiled = c, kind, 0, 0.0, (), {}

        def outcome(self, backend, config=None, dynamic=True, within=None, case=None):
            if case is not None:
                return answers["twins"]
            return GONE if backend == "eager" else STAYS

    monkeypatch.setattr(recognition, "Probe", Fake)
    program = prog({"x0": ("s0",)}, [("cond_log", ["x0"], "v0", {"site": 0, "site2": 1})], outputs=["v0"])
    finding = Entry.build(contract.EFFECT_LOG, case(program), [contract.Divergence(
        contract.EFFECT_LOG, 0, "sequence", "missing", ("missing",))],
                          Origin(seed=0, device="cpu", backend="aot_eager"))
    held = bugs.key_of(dataclasses.replace(finding, culprit=Culprit("aot_eager", kind=finding.kind,
                                                                     dynamic_only=False)))
    assert held.text.endswith("{does cond_log}")

    def recognised():
        return recognition.recognise(finding, [held],
                                     lambda c, case=finding.case: bugs.key_of(dataclasses.replace(finding, culprit=c)),
                                     backend="aot_eager")
    assert recognised() is None
    answers["twins"] = STAYS
    assert recognised() is not None


TAGGED = prog({"x0": ("s0",)}, [("t_scale", ["x0"], "v0", {"site": 0}), ("m_scale", ["v0"], None, {"site": 1})])


@pytest.mark.parametrize("untagged, stage, shown", [
    (GONE, "aot_eager", "tagged-result"),   # needs the tagged op's aliasing result
    (STAYS, "aot_eager", ""),               # the plain op shows it too: not the result's
    (GONE, "inductor", ""),                 # not functionalization's: asked at aot_eager only
])
def test_a_wrong_value_gone_with_the_tagged_op_made_plain_is_the_tagged_result(untagged, stage, shown):
    def rule(c, within):
        return untagged if "t_scale" not in _forms(c) else STAYS
    probe = TableProbe(case(TAGGED), contract.WRONG_MUTATION, rule)
    assert causes.shown(probe, stage) == shown
    assert [(s.form, s.args) for s in causes._untagged(case(TAGGED)).program.body] == [
        ("m_scale", ("x0",)), ("m_scale", ("x0",))]


def test_the_corpus_tagged_write_is_gone_with_the_plain_op_on_aot_eager():
    """``v0 = t_scale(x0); m_scale(v0)``: functionalization returns ``v0`` fresh, so the second
    write misses ``x0`` (one real compile each, ``aot_eager``: no Inductor)."""
    entry = load(CORPUS / "wrong-mutation-db8779b2c287.json")
    probe = Probe(entry.case, entry.kind, entry.bug_class, "cpu", spots=entry.spots)
    assert probe.outcome("aot_eager") is STAYS
    assert causes.shown(probe, "aot_eager") == "tagged-result"


def _objects(body, outputs=("v0",)):
    p = prog({"x0": ("s0",)}, body, outputs=list(outputs))
    return dataclasses.replace(p, mode=dataclasses.replace(p.mode, objects=(("q0", "Scale", "x0"),)))


#: a value object's op in each branch of a cond, and in a region applied twice
VALUE_COND = _objects([("o_scale_cond", ["x0"], "v0", {"site": 0, "site2": 1, "obj": "q0"})])
VALUE_LAYER = _objects([("o_scale_layer", ["x0"], "v0", {"site": 0, "obj": "q0"}), ("e_log", ["v0"], None, {"site": 1})])


@pytest.mark.parametrize("program, pure", [(VALUE_COND, "cond_sin"), (VALUE_LAYER, "layer_sin")])
@pytest.mark.parametrize("bare, plain, kind, stage, shown", [
    (GONE, GONE, contract.RUNTIME_ERROR, "inductor", "value-object-in-subgraph"),  # needs the object in the subgraph
    (STAYS, GONE, contract.RUNTIME_ERROR, "inductor", ""),    # the bare call beside its object shows it: not the subgraph's
    (GONE, STAYS, contract.RUNTIME_ERROR, "inductor", ""),    # the higher-order op without the object shows it: the op's
    (GONE, CHANGED, contract.COMPILE_ERROR, "inductor", ""),  # something else breaks: nothing said
    (GONE, GONE, contract.WRONG_OUTPUT, "inductor", ""),      # asked of Inductor's errors only
    (GONE, GONE, contract.RUNTIME_ERROR, "aot_eager", ""),    # and only on Inductor
])
def test_a_value_object_in_a_subgraph_is_its_cause_only_where_both_twins_lose_an_inductor_error(
        program, pure, bare, plain, kind, stage, shown):
    def rule(c, within):
        forms = _forms(c)
        return bare if "o_scale" in forms else plain if pure in forms else STAYS
    probe = TableProbe(case(program), kind, rule)
    assert causes.shown(probe, stage) == shown


def test_the_twins_of_a_value_object_in_a_subgraph_keep_the_site_and_drop_or_keep_the_object():
    bare = causes._rewritten(case(VALUE_LAYER), "invoke_subgraph", 1, causes.VALUE_TWINS).program.body[0]
    plain = causes._rewritten(case(VALUE_LAYER), "invoke_subgraph", 0, causes.VALUE_TWINS).program.body[0]
    branches = causes._rewritten(case(VALUE_COND), "cond", 0, causes.VALUE_TWINS).program.body[0]
    assert (bare.form, bare.attrs) == ("o_scale", {"site": 0, "obj": "q0"})
    assert (plain.form, plain.attrs) == ("layer_sin", {"site": 0})
    assert (branches.form, branches.attrs) == ("cond_sin", {"site": 0, "site2": 1})
    assert causes.BY_NAME["value-object-in-subgraph"].held_by(VALUE_LAYER)


@pytest.mark.compile
def test_the_corpus_value_object_in_a_cond_is_gone_outside_it_and_without_it_on_inductor():
    """``torch.cond`` over ``o_scale`` with its object: Inductor's branch code names the
    object's class, unbound (three real Inductor compiles)."""
    entry = load(CORPUS / "runtime-error-936b70b8c2b2.json")
    probe = Probe(entry.case, entry.kind, entry.bug_class, "cpu", spots=entry.spots)
    assert probe.outcome("inductor") is STAYS
    assert causes.shown(probe, "inductor") == "value-object-in-subgraph"
