"""The outputs pass (``fuzzer.reduce.passes.outputs``): every returned value dropped at
once first, then one at a time; stand-in verdicts."""

from helpers import case, offered_by, prog

from fuzzer.reduce.passes.outputs import DropOutputs

P = prog({"x0": ("s0",)}, [("p_sin", ["x0"], "v0", {"site": 0}), ("p_sin", ["x0"], "v1", {"site": 1})],
         outputs=["v0", "v1"])


def test_all_at_once_then_one_at_a_time():
    offered, best = offered_by(DropOutputs(), case(P), lambda c: "v1" in c.program.outputs)
    # v0 dropped alone is taken; then v1 alone, from what is left, is refused
    assert [c.program.outputs for c in offered] == [(), ("v1",), ()]
    assert best.program.outputs == ("v1",)


def test_taking_all_at_once_ends_the_pass():
    offered, best = offered_by(DropOutputs(), case(P), lambda c: True)
    assert len(offered) == 1 and best.program.outputs == ()
    assert offered_by(DropOutputs(), best, lambda c: True)[0] == []
