"""Cuts (``fuzzer.reduce.cuts``): each one-step simplification of what a program does, as
recognition asks of a finding whose key reads its program; no compile."""

import dataclasses

from helpers import case, prog

from fuzzer.reduce.cuts import cuts


def _forms(c):
    return [s.form for s in c.program.body]


def test_each_form_dropped_rewired_rewritten_and_each_mode_simplification():
    p = prog({"x0": ("s0",)}, [("p_sin", ["x0"], "v0", {"site": 0}), ("t_scale", ["x0"], "v1", {"site": 1}),
                               ("mul_", ["v1"], None, {"c": 0.5})], outputs=["v0"])
    p = dataclasses.replace(p, mode=dataclasses.replace(p.mode, dtype="bfloat16"))
    made = list(cuts(case(p)))
    bodies = [_forms(c) for c in made]
    assert ["t_scale", "mul_"] in bodies                 # p_sin dropped
    assert ["p_sin"] in bodies                           # t_scale dropped with what reads it
    assert ["p_sin", "mul_"] in bodies                   # t_scale's reader reading its operand
    plain = next(c for c in made if "m_scale" in _forms(c))  # the tagged op toward the plain one
    assert [(s.form, s.args) for s in plain.program.body][1:] == [("m_scale", ("x0",)), ("mul_", ("x0",))]
    assert any(c.program.mode.dtype == "float32" and _forms(c) == _forms(case(p)) for c in made)
    for c in made:
        c.validate()
