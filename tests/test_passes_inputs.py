"""The inputs pass (``fuzzer.reduce.passes.inputs``): drop an input nothing reads or
returns, with its marks and the symbols no longer read; stand-in verdicts."""

import dataclasses

from helpers import case, offered_by, prog

from fuzzer.program.ir import Mode
from fuzzer.reduce.passes.inputs import DropUnusedInputs


def test_only_an_input_nothing_reads_or_returns_is_dropped_with_its_marks_and_symbol():
    p = prog({"x0": ("s0",), "x1": ("s1",), "x2": ("s0",)}, [("p_sin", ["x0"], "v0", {"site": 0})],
             outputs=["x2"])
    p = dataclasses.replace(p, mode=Mode(marks=(("x1", 0, "dynamic"), ("x0", 0, "dynamic"))))
    offered, best = offered_by(DropUnusedInputs(), case(p), lambda c: True)
    assert len(offered) == 1
    assert [i.name for i in best.program.inputs] == ["x0", "x2"]
    assert best.program.mode.marks == (("x0", 0, "dynamic"),)
    assert best.program.symbols == ("s0",) and all(set(b) == {"s0"} for b in best.bindings)


def test_a_windows_base_stays_while_the_window_does():
    p = prog({"x0": ("s0",), "x1": ("s0",)}, [("p_sin", ["x1"], "v0", {"site": 0})])
    p = dataclasses.replace(p, mode=Mode(windows=(("x1", "x0", 0, "row"),)))
    assert offered_by(DropUnusedInputs(), case(p), lambda c: True)[0] == []
