"""Spots: where a finding's divergences show (``fuzzer.judge.spots``): a shrink, hints included, takes a
candidate only where it diverges where the finding did; stand-in oracles, no compile."""

import dataclasses

from helpers import case, finding_of, prog

from fuzzer.campaign.hints import hints_for
from fuzzer.corpus.bugs import DOES_OPEN, BugKey, does
from fuzzer.judge.identity import BugClass
from fuzzer.judge import contract
from fuzzer.judge.contract import CALL, INPUT, OUTPUT, Divergence, Place
from fuzzer.judge.trial import Finding
from fuzzer.judge import spots as own
from fuzzer.reduce import signature
from fuzzer.reduce.edits import canonical_case
from fuzzer.judge.spots import Spot, spots_of
from fuzzer.reduce.shrinker import shrink

WRONG = contract.WRONG_MUTATION


def _written(name: str, binding: int = 0) -> Divergence:
    return Divergence(WRONG, binding, f"input {name}", "values differ", ("values",), (Place(INPUT, name),))


def _two_bugs():
    """``x2`` written through a gapped ``unfold`` (the finding's bug), and ``x1`` written
    through a tagged op's result (another bug of the same class); the stand-in compiler
    loses the first write, and the second only where the first is gone."""
    return prog({"x0": ("s0",), "x1": ("s0",), "x2": ("s0",)},
                [("p_sin", ["x0"], "v0", {"site": 0}),
                 ("unfold_gap", ["x2"], "v1", {"dim": 0, "size_w": 1, "step": 2}),
                 ("mul_", ["v1"], None, {"c": 0.5}),
                 ("t_scale", ["x1"], "v2", {"site": 1}),
                 ("mul_", ["v2"], None, {"c": 0.5})],
                outputs=["v0"])


def _written_through(c, view_form: str) -> bool:
    made = {s.out: s.form for s in c.program.body if s.out}
    return any(s.form == "mul_" and made.get(s.args[0]) == view_form for s in c.program.body)


def _judge(c) -> contract.Verdict:
    divs = []
    if _written_through(c, "unfold_gap"):
        divs.append(_written("x2"))
    elif _written_through(c, "t_scale"):
        divs.append(_written("x1"))
    return contract.Verdict(contract.OK, divs)


def test_a_hint_toward_a_held_bug_that_shows_another_divergence_of_the_class_is_refused():
    """The issue's case: a finding of a lost write through ``unfold`` of ``x2``, with a held
    bug keyed by ``{does mul_, t_scale}``; the hint cut to those forms writes ``x1`` wrong, the
    same class elsewhere, and must not be taken: the shrink keeps the finding's own bug."""
    finding = Finding(WRONG, case(_two_bugs()), [_written("x2")], "cpu", "aot_eager")
    held_program = prog({"x0": ("s0",)}, [("t_scale", ["x0"], "v0", {"site": 0}), ("mul_", ["v0"], None, {"c": 0.5})])
    held = {BugKey(BugClass.parse("corrupted-value|values"), f"aot_eager{DOES_OPEN}{does(held_program)}}}"): 1}
    hints = hints_for(finding, held)
    # the boldest hint reads x2 where the view was: only the held bug's write is left
    assert [d.at for d in _judge(hints[0]).divergences] == [(Place(INPUT, "x1"),)]
    hinted = shrink(finding_of(finding.case, WRONG, finding.divergences), judge=_judge, hints=hints)
    plain = shrink(finding_of(finding.case, WRONG, finding.divergences), judge=_judge)
    assert [s.form for s in hinted.case.program.body] == ["unfold_gap", "mul_"]
    assert hinted.signature == plain.signature


def test_a_candidate_that_diverges_where_the_finding_did_is_taken():
    """The allowed side: the same spot, fewer statements, is the shrink's way down."""
    finding = case(_two_bugs())
    result = shrink(finding_of(finding, WRONG, [_written("x2")]), judge=_judge)
    assert result.statements == 2 and result.confirmed


def test_spots_name_values_gradients_inputs_and_sites_in_the_programs_names():
    p = prog({"x0": ("s0",), "x1": ("s0",)}, [("p_sin", ["x0"], "v0", {"site": 3}), ("e_log", ["v0"], None, {"site": 4})],
             outputs=["v0"])
    grad = dataclasses.replace(p, mode=dataclasses.replace(p.mode, grad=True))
    divs = [Divergence(contract.WRONG_OUTPUT, 0, "output 0", "", ("values",), (Place(OUTPUT, 0),)),
            Divergence(contract.WRONG_OUTPUT, 0, "output 2", "", ("values",), (Place(OUTPUT, 2),)),
            Divergence(contract.EFFECT_LOG, 0, "sequence", "", ("missing",), (Place(CALL, ("e_log", 4)),)),
            Divergence(contract.COMPILE_ERROR, 0, "compile", "boom")]
    assert own.spots_of(case(grad), divs) == {Spot(own.VALUE, "v0"), Spot(own.GRADIENT, "x1"), Spot(own.SITE, "4"),
                                           Spot(own.ANYWHERE, contract.COMPILE_ERROR)}


def test_a_tagged_ops_result_stands_for_its_operand():
    """A shrink may read a tagged op's operand where its result was (``rewire.read_as_operand``),
    so a wrong returned result is the finding's own spot as its operand too."""
    p = prog({"x0": ("s0",)}, [("t_scale", ["x0"], "v0", {"site": 0})], outputs=["v0"])
    wrong = [Divergence(contract.WRONG_OUTPUT, 0, "output 0", "", ("values",), (Place(OUTPUT, 0),))]
    assert own.own_spots(case(p), wrong) == {Spot(own.VALUE, "v0"), Spot(own.VALUE, "x0")}
    assert own.spots_of(case(p), wrong) == {Spot(own.VALUE, "v0")}


def test_the_renumbered_result_is_confirmed_at_the_renamed_spots():
    """Confirmation judges the renumbered case (``canonical_case``), whose names are new:
    the finding's spots follow the renaming, so the saved case is the renumbered one."""
    p = prog({"x0": ("s0",), "x1": ("s0",), "x2": ("s0",)},
             [("p_sin", ["x0"], "v0", {"site": 7}), ("unfold_gap", ["x2"], "v1", {"dim": 0, "size_w": 1, "step": 2}),
              ("mul_", ["v1"], None, {"c": 0.5})], outputs=["v0"])

    def judge(c):
        name = [i.name for i in c.program.inputs if i.name in {s.args[0] for s in c.program.body}]
        return contract.Verdict(contract.OK, [_written(name[-1])] if _written_through(c, "unfold_gap") else [])

    result = shrink(finding_of(case(p), WRONG, [_written("x2")]), judge=judge)
    assert result.confirmed and result.case == canonical_case(result.case)
    assert [i.name for i in result.case.program.inputs] == ["x0"]
    renaming = signature.renaming(p)
    assert own.renamed(frozenset({Spot(own.WRITTEN, "x2"), Spot(own.VALUE, "gone")}), renaming.names,
                       renaming.sites) == {
        Spot(own.WRITTEN, "x2")}


def test_an_entry_keeps_where_its_divergences_showed():
    """An entry records its spots (``Entry.spots``), so a triage of it from the corpus asks
    its probes for its own divergences; one saved before spots existed records none."""
    from fuzzer.corpus.entry import Entry, Origin

    entry = Entry.build(WRONG, case(_two_bugs()), [_written("x2")], Origin(seed=1, device="cpu", backend="aot_eager"))
    assert entry.spots == {Spot(own.WRITTEN, "x2")}
    assert Entry.from_json(entry.to_json()).spots == entry.spots
    old = entry.to_json()
    del old["spots"]
    assert Entry.from_json(old).spots is None
