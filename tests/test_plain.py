"""The shrink pass that makes a tensor subclass the plain tensor it wraps
(``fuzzer.reduce.passes.plain``), where the bug allows."""

import dataclasses

from helpers import case, prog, run_pass, stays_while

from fuzzer.judge import contract
from fuzzer.program.ir import Mode, check
from fuzzer.reduce.passes import plain

# x0 and x1 made a pair (x0 its part a), written in place, then a pair and a plain
# tensor of it returned
CASE = case(prog({"x0": ("s0", "s1"), "x1": ("s0", "s1")}, [
    ("w_pair", ["x0", "x1"], "v0", {"c": 0.5}),
    ("w_update", ["v0"], None, {"site": 0}),
    ("w_mix", ["v0"], "v1", {"site": 1}),
    ("w_fold", ["v0"], "v2", {"site": 2}),
], outputs=["v1", "v2"]))
# x0 handed over as PairTensor(x0, x2): written in place through the pair, folded, returned
HANDED = dataclasses.replace(prog({"x0": ("s0",), "x1": ("s0",), "x2": ("s0",)}, [
    ("w_update", ["x0"], None, {"site": 0}),
    ("w_addto_plain", ["x0", "x1"], None, {"site": 1}),
    ("w_fold", ["x0"], "v0", {"site": 2}),
], outputs=["v0"]), mode=Mode(pairs=(("x0", "x2"),)))


def _forms(c) -> list[str]:
    return [s.form for s in c.program.body]


def test_the_shrinker_makes_a_pair_the_plain_tensor_it_wraps_where_the_bug_allows():
    made = run_pass("plain", CASE, stays_while(lambda c: True)).best.program
    assert [s.form for s in made.body] == ["m_scale", "p_sin", "p_sin"]      # w_pair gone, its calls plain
    assert made.body[0].args == ("x0",) and made.outputs == ("v1", "v2")
    assert all(t is None for t in check(made).dtypes.values())
    handed = run_pass("plain", case(HANDED), stays_while(lambda c: True)).best.program
    assert handed.mode.pairs == () and [s.form for s in handed.body] == ["m_scale", "m_addto", "p_sin"]
    kept = run_pass("plain", CASE, stays_while(lambda c: "w_update" in _forms(c))).best
    assert _forms(kept) == _forms(CASE)                                      # a bug that needs the pair keeps it


def test_two_pairs_one_call_reads_are_made_plain_together_and_a_part_read_back_is_its_tensor():
    two = case(prog({"x0": ("s0",), "x1": ("s0",)}, [
        ("w_pair", ["x0", "x1"], "v0", {"c": 0.5}),
        ("w_mix", ["v0"], "v1", {"site": 0}),
        ("w_addto", ["v1", "v0"], None, {"site": 1}),
        ("w_second", ["v1"], "v2", {}),
    ], outputs=["v2"]))
    made = run_pass("plain", two, stays_while(lambda c: True)).best.program
    assert [s.form for s in made.body] == ["p_sin", "m_addto"] and made.outputs == ("v1",)
    assert made.body[1].args == ("v1", "x0")


def test_a_finding_at_a_pair_is_kept_when_the_pair_becomes_the_tensor_it_wraps():
    """The shrink reads a pair's part a in its place: a finding that showed at the pair's
    value shows at that tensor once plain (``spots.own_spots``)."""
    from fuzzer.judge.spots import VALUE, Spot, own_spots

    made = case(prog({"x0": ("s0",), "x1": ("s0",)}, [("w_pair", ["x0", "x1"], "v0", {"c": 0.5})], outputs=["v0"]))
    div = contract.Divergence(contract.WRONG_OUTPUT, 0, "output 0", "x", (contract.VALUES,),
                              (contract.Place(contract.OUTPUT, 0),))
    assert own_spots(made, [div]) == {Spot(VALUE, "v0"), Spot(VALUE, "x0")}


def test_the_sources_of_pairs_are_paired_inputs_then_pairs_made_of_plain_values():
    both = dataclasses.replace(CASE.program, mode=Mode())
    assert plain.sources(both, check(both)) == ["v0"]
    assert plain.sources(HANDED, check(HANDED)) == ["x0"]


def test_aten_views_and_writes_of_a_pair_become_aten_s_own_on_the_plain_tensor():
    viewed = case(prog({"x0": ("s0", "s1"), "x1": ("s0", "s1")}, [
        ("w_pair", ["x0", "x1"], "v0", {"c": 0.5}), ("pair_head", ["v0"], "v1", {"dim": 0}),
        ("pair_transpose", ["v1"], "v2", {}), ("pair_mul_", ["v2"], None, {"c": 2.0}),
        ("w_fold", ["v0"], "v3", {"site": 0}), ("pair_add", ["v1", "v1"], "v4", {}),
        ("pair_sum", ["v4"], "v5", {"dim": 0}),
    ], outputs=["v3", "v5"]))
    made = run_pass("plain", viewed, stays_while(lambda c: True)).best.program
    assert [s.form for s in made.body] == ["head", "transpose", "mul_", "p_sin", "add", "sum"]
    assert made.body[0].args == ("x0",) and made.body[2].args == ("v2",)
