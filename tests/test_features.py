"""Features (``fuzzer.program.features``), by public behaviour: ``--features`` read into
weights with one error for each way it is wrong, a program's features drawn from a stream
of their own and read back off the program; hand-written programs."""

import dataclasses

import pytest
from helpers import prog

from fuzzer.program import features as feats
from fuzzer.program.ir import Mode


def test_a_features_value_reads_as_weights():
    assert feats.parse("none") == feats.parse("") == dict(feats.NONE)
    assert feats.parse("views=0.5,hops") == {"views": 0.5, "hops": feats.BY_NAME["hops"].weight}
    everything_but = feats.parse("-views")
    assert "views" not in everything_but and set(everything_but) == set(feats.ALL) - {"views"}
    assert feats.describe({"views": 0.5}) == "views=0.5" and feats.describe({}) == "none"


@pytest.mark.parametrize("text, words", [("nothing", "unknown feature"), ("views=lots", "not a number"),
                                         ("views=2", r"within \[0, 1\]")])
def test_a_features_value_that_is_wrong_says_how(text, words):
    with pytest.raises(feats.FeatureError, match=words):
        feats.parse(text)


def test_features_are_drawn_from_a_stream_of_their_own_by_weight():
    assert feats.draw(5, {}) == frozenset()
    assert all(feats.draw(s, {"views": 1.0, "hops": 0.0}) == {"views"} for s in range(20))
    drawn = [feats.draw(s, {"views": 0.5}) for s in range(40)]
    assert drawn == [feats.draw(s, {"views": 0.5}) for s in range(40)] and 5 < sum(map(bool, drawn)) < 35
    with_func_grad = feats.draw(1, {feats.FUNC_GRAD: 1.0, feats.GRAPH_BREAK: 1.0})
    assert feats.AUTOGRAD in with_func_grad and not set(feats.FUNC_GRAD_EXCLUDES) & with_func_grad


def test_a_programs_features_are_read_off_its_mode_and_statements():
    p = prog({"x0": ("s0", "s1")}, [("permute", ["x0"], "v0", {}), ("p_sin", ["x0"], "v1", {"site": 0}),
                                    ("p_sin", ["x0"], "v2", {"site": 0})])
    assert feats.used_by(p) == [f for f in feats.BY_NAME if f in {feats.VIEWS, feats.IDENTICAL_CALLS}]
    moded = dataclasses.replace(p, mode=Mode(dtype="float16", module=("x0",), carry=True))
    assert {feats.DTYPES, feats.MODULE_CARRY} <= set(feats.used_by(moded))
    assert feats.MODULE_STATE not in feats.used_by(moded)
    assert feats.needs_capture(prog({"x0": ("s0",)}, [("p_pos", ["x0"], "v0", {"site": 0, "size": "u0"})]))
    assert feats.writes_beside({feats.STRIDED_VIEWS}) and not feats.writes_beside({feats.VIEWS})
    assert feats.unavailable(feats.HOPS) is None
