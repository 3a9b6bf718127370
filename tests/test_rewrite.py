"""The rewrite pass (``fuzzer.reduce.passes.rewrite``): one statement at a time, an
operand by an earlier value (same dims first), an op by a simpler one of its kind, an
attribute by the simplest; stand-in verdicts."""

from helpers import case, offered_by, prog

from fuzzer.program.form_record import CONSTANTS
from fuzzer.reduce.passes.rewrite import RewriteStatements, statement_edits


def _stmts(c):
    return [(s.form, s.args, dict(s.attrs)) for s in c.program.body]


def test_an_operand_is_replaced_by_an_earlier_value_of_the_same_dims_first():
    p = prog({"x0": ("s0",), "x1": ("s1",), "x2": ("s0",)}, [("p_sin", ["x2"], "v0", {"site": 0})])
    edits = [c.program.body[0].args for c in statement_edits(case(p))]
    assert edits[:2] == [("x0",), ("x1",)]


def test_an_op_is_replaced_by_a_simpler_one_of_its_kind_and_a_constant_by_the_simplest():
    c = CONSTANTS[-1]
    p = prog({"x0": ("s0",)}, [("p_mix", ["x0", "x0"], "v0", {"site": 0}), ("scale", ["v0"], "v1", {"c": c})])
    edits = [_stmts(e) for e in statement_edits(case(p))]
    assert [("p_sin", ("x0",), {"site": 0}), ("scale", ("v0",), {"c": c})] in edits
    assert [("p_mix", ("x0", "x0"), {"site": 0}), ("scale", ("v0",), {"c": CONSTANTS[0]})] in edits


def test_an_op_whose_result_is_read_is_not_replaced_by_one_that_returns_nothing():
    p = prog({"x0": ("s0",)}, [("clone", ["x0"], "v0", {}), ("m_shift", ["v0", "x0"], "v1", {"site": 0})],
             outputs=["v1"])
    assert not any(s.form in ("m_addto", "m_scale") for c in statement_edits(case(p)) for s in c.program.body)
    dead = prog({"x0": ("s0",)}, [("clone", ["x0"], "v0", {}), ("m_shift", ["v0", "x0"], "v1", {"site": 0})])
    assert any(s.form == "m_addto" and s.out is None for c in statement_edits(case(dead)) for s in c.program.body)


def test_the_pass_takes_rewrites_until_none_is_taken():
    p = prog({"x0": ("s0",)}, [("p_mix", ["x0", "x0"], "v0", {"site": 0})], outputs=["v0"])
    _, best = offered_by(RewriteStatements(), case(p), lambda c: True)
    assert _stmts(best) == [("p_sin", ("x0",), {"site": 0})]
