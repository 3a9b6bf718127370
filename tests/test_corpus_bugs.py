"""What a bug is (``fuzzer.corpus.bugs``): the key a wrong value at a stage alone reads off
its program names every part of its mode a bug may need; no compile."""

import dataclasses

from helpers import case, finding_of, prog, stays_while

from fuzzer.corpus.bugs import does, mode_words
from fuzzer.judge import contract
from fuzzer.program.ir import Mode
from fuzzer.reduce.shrinker import shrink


def test_the_mode_words_name_layouts_and_func_grad():
    assert mode_words(Mode()) == []
    laid = Mode(layouts=(("x0", "transposed"), ("x1", "channels_last")))
    assert mode_words(laid) == ["layout:channels_last", "layout:transposed"]
    assert mode_words(Mode(grad=True, func_grad=True))[:2] == ["grad", "func_grad"]
    p = prog({"x0": ("s0", "s1")}, [("mul_", ["x0"], None, {"c": 0.5})])
    plain, transposed = p, dataclasses.replace(p, mode=dataclasses.replace(p.mode, layouts=(("x0", "transposed"),)))
    assert does(plain) != does(transposed) == "mul_; layout:transposed"


def test_the_shrinker_drops_gradients_with_the_statements_no_grad_marks():
    """A program that takes gradients and runs a statement under ``torch.no_grad()``: where
    the bug does not need gradients, the shrink drops them, and the marks with them (the
    IR refuses ``no_grad`` outside a program that takes gradients)."""
    p = prog({"x0": ("s0",)}, [("clone", ["x0"], "v0", {"no_grad": True}), ("mul_", ["v0"], None, {"c": 0.5}),
                               ("e_log", ["v0"], None, {"site": 0})], outputs=["v0"])
    p = dataclasses.replace(p, mode=dataclasses.replace(p.mode, grad=True))
    judge = stays_while(lambda c: {"clone", "e_log"} <= {s.form for s in c.program.body})
    result = shrink(finding_of(case(p), contract.EFFECT_LOG, judge(case(p)).divergences), judge=judge)
    assert not result.case.program.mode.grad and [s.form for s in result.case.program.body][0] == "clone"
    assert not any("no_grad" in s.attrs for s in result.case.program.body)
