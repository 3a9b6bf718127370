"""The mode pass (``fuzzer.reduce.passes.mode``): each single simplification of how the
program runs, again from each one taken; stand-in verdicts."""

import dataclasses

from helpers import case, offered_by, prog

from fuzzer.program.ir import Mode
from fuzzer.reduce.passes.mode import SimplerMode, mode_edits

P = prog({"x0": ("s0",)}, [("p_sin", ["x0"], "v0", {"site": 0})], outputs=["v0"])


def test_each_edit_changes_one_thing_of_the_mode():
    mode = Mode(dynamic="auto", dtype="float16", marks=(("x0", 0, "dynamic"),))
    edits = [c.program.mode for c in mode_edits(case(dataclasses.replace(P, mode=mode)))]
    assert dataclasses.replace(mode, dynamic="true") in edits
    assert dataclasses.replace(mode, dtype="float32") in edits
    assert dataclasses.replace(mode, marks=()) in edits
    for edited in edits:
        changed = [f.name for f in dataclasses.fields(Mode) if getattr(edited, f.name) != getattr(mode, f.name)]
        assert len(changed) == 1, changed
    assert list(mode_edits(case(P))) == []  # the default mode is as simple as it gets


def test_taking_every_simplification_ends_at_the_default_mode():
    mode = Mode(dynamic="auto", dtype="float16", marks=(("x0", 0, "dynamic"),), grad=True)
    _, best = offered_by(SimplerMode(), case(dataclasses.replace(P, mode=mode)), lambda c: True)
    assert best.program.mode == Mode()


def test_a_bug_that_needs_the_dtype_keeps_it():
    mode = Mode(dynamic="auto", dtype="float16")
    _, best = offered_by(SimplerMode(), case(dataclasses.replace(P, mode=mode)),
                         lambda c: c.program.mode.dtype == "float16")
    assert best.program.mode == Mode(dtype="float16")
