"""The sizes pass (``fuzzer.reduce.passes.sizes``): merge two symbols, drop an input's
dim, then smaller sizes down to each symbol's minimum; stand-in verdicts."""

from helpers import case, offered_by, prog

from fuzzer.reduce.passes.sizes import SmallerSizes, size_edits


def test_symbols_merge_into_the_earlier_and_an_inputs_dim_is_dropped():
    p = prog({"x0": ("s0", "s1")}, [], sym_min={"s0": 1, "s1": 1})
    edits = list(size_edits(case(p, [{"s0": 4, "s1": 6}])))
    assert edits[0].program.inputs[0].dims == ("s0", "s0")
    assert {e.program.inputs[0].dims for e in edits[1:3]} == {("s0",), ("s1",)}


def test_sizes_shrink_toward_the_minimum_and_never_below_it():
    p = prog({"x0": ("s0",)}, [], sym_min={"s0": 2})
    edits = list(size_edits(case(p, [{"s0": 9}])))
    assert [e.bindings[0]["s0"] for e in edits] == [2, 4, 8]
    assert list(size_edits(case(p, [{"s0": 2}]))) == []


def test_the_pass_walks_each_size_down_as_far_as_the_bug_lets_it():
    p = prog({"x0": ("s0",)}, [], sym_min={"s0": 1})
    _, best = offered_by(SmallerSizes(), case(p, [{"s0": 40}]), lambda c: c.bindings[0]["s0"] >= 5)
    assert best.bindings == ({"s0": 5},)
