"""A statement's result read as its operand 0 (``fuzzer.program.rewire``); no compile."""

from helpers import prog

from fuzzer.program.ir import Stmt, check
from fuzzer.program.rewire import read_as_operand


def test_later_reads_and_returned_values_read_the_operand():
    p = prog({"x0": ("s0",)}, [("t_scale", ["x0"], "v0", {"site": 0}), ("mul_", ["v0"], None, {"c": 0.5}),
                               ("p_sin", ["v0"], "v1", {"site": 1})], outputs=["v0", "v1"])
    plain = read_as_operand(p, 0, Stmt("m_scale", ("x0",), None, {"site": 0}))
    assert [(s.form, s.args) for s in plain.body] == [("m_scale", ("x0",)), ("mul_", ("x0",)), ("p_sin", ("x0",))]
    assert plain.outputs == ("x0", "v1")
    bypassed = read_as_operand(p, 0)
    assert [s.form for s in bypassed.body] == ["mul_", "p_sin"] and bypassed.outputs == ("x0", "v1")
    # what comes before the statement is as it was
    assert read_as_operand(p, 2).body[:2] == p.body[:2]


def test_a_value_taken_out_so_leaves_a_legal_program():
    p = prog({"x0": ("s0", "s1")}, [("p_sin", ["x0"], "v0", {"site": 0}), ("p_sin", ["v0"], "v1", {"site": 1}),
                                    ("e_log", ["x0"], None, {"site": 2})], outputs=["v1"])
    bypassed = read_as_operand(p, 0)
    assert bypassed.body[0].args == ("x0",) and bypassed.outputs == ("v1",)
    check(bypassed)
