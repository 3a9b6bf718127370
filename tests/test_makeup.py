"""What a program is made of, as a report speaks of it (``fuzzer.render.makeup``):
each sentence only of what the program has; hand-written programs."""

import dataclasses

from helpers import prog

from fuzzer.program.ir import Mode
from fuzzer.render.makeup import Makeup, honesty, judged


def test_the_makeup_is_read_off_the_program():
    p = prog({"x0": ("s0",)}, [("p_sin", ["x0"], "v0", {"site": 0}), ("e_log", ["v0"], None, {"site": 1}),
                               ("t_scale", ["v0"], "v1", {"site": 2}), ("s_scale", ["x0"], None, {"site": 3})])
    m = Makeup.of(p)
    assert m.library_ops == ("p_sin", "e_log", "t_scale", "s_scale")  # in library order
    assert m.effectful == ("e_log",) and m.return_operand == ("t_scale",) and m.return_fresh == ("p_sin",)
    assert m.by_schema == ("s_scale",) and m.by_custom_op == ("p_sin", "e_log", "t_scale")
    assert m.user_ops == () and not m.grad


def test_honesty_speaks_only_of_the_ops_the_program_calls():
    assert honesty(Makeup()) == ""
    fresh = honesty(Makeup.of(prog({"x0": ("s0",)}, [("p_sin", ["x0"], "v0", {"site": 0})])))
    assert fresh.startswith("Its custom ops (`p_sin`) are honest: each declares exactly what it writes "
                            "(`mutates_args`)")
    assert "its outputs are fresh tensors" in fresh and "schema" not in fresh
    both = honesty(Makeup.of(prog({"x0": ("s0",)}, [("p_sin", ["x0"], "v0", {"site": 0}),
                                                     ("t_scale", ["v0"], "v1", {"site": 1})])))
    assert "`p_sin` returns fresh tensors" in both and "`t_scale` returns the argument it writes" in both
    unknown = honesty(Makeup(library_ops=("m_unknown",), by_custom_op=("m_unknown",), writes_unknown=("m_unknown",)))
    assert '`m_unknown` declares `"unknown"`: it may write any argument' in unknown
    assert "user ops (`lib::op`)" in honesty(Makeup(user_ops=("lib::op",)))


def test_what_is_judged_names_the_effect_log_and_gradients_only_where_the_program_has_them():
    plain = prog({"x0": ("s0",)}, [("p_sin", ["x0"], "v0", {"site": 0})])
    assert judged(Makeup.of(plain)) == "a float64 reference, the inputs after the call"
    logged = prog({"x0": ("s0",)}, [("e_log", ["x0"], None, {"site": 0})])
    assert judged(Makeup.of(logged)) == "a float64 reference, the inputs after the call, the effect log"
    assert judged(Makeup.of(dataclasses.replace(plain, mode=Mode(grad=True)))).endswith("call, the gradients")
    assert judged(Makeup.of(dataclasses.replace(logged, mode=Mode(grad=True)))) == \
        "a float64 reference, the inputs after the call, the effect log, the gradients"
