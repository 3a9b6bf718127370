"""The bindings a case runs on (``fuzzer.program.bindings``): with the ``layouts``
feature every symbol the body allows is taken to 0, so empty tensors reach the forms
that take them, and a form that needs a dim of at least 1 keeps its symbol there."""

from helpers import prog

from fuzzer.program import bindings, features
from fuzzer.program.generate import generate
from fuzzer.program.ir import check

INPUTS = {"x0": ("s0", "s1"), "x1": ("s1",)}


def test_each_symbol_the_body_allows_is_taken_to_zero_and_the_others_are_kept():
    # narrow needs s0 >= 1 (eager's narrow(0, 1, s0 - 1) raises on an empty dim); s1 may be 0
    program = prog(INPUTS, [("narrow", ["x0"], "v0", {"dim": 0}), ("p_sin", ["x1"], "v1", {"site": 0})],
                   sym_min={"s0": 1, "s1": 2})
    assert bindings.emptied(program, check).sym_min == {"s0": 1, "s1": 0}
    free = prog(INPUTS, [("p_sin", ["x0"], "v0", {"site": 0})], sym_min={"s0": 2, "s1": 1})
    assert bindings.emptied(free, check).sym_min == {"s0": 0, "s1": 0}


def test_with_layouts_every_symbol_the_body_allows_is_empty_in_some_binding():
    emptied = 0
    for seed in range(60):
        c = generate(seed, features={features.LAYOUTS: 1.0})
        plain = generate(seed, features={features.LAYOUTS: 0.0})
        assert c.program.body == plain.program.body
        for s in c.program.symbols:
            lowered = dict(c.program.sym_min, **{s: 0})
            if c.program.sym_min[s] > 0:  # kept: the body needs it
                try:
                    check(type(c.program)(**{**c.program.__dict__, "sym_min": lowered}))
                except ValueError:
                    continue
                raise AssertionError(f"seed {seed}: {s} could be 0")
            assert any(b[s] == 0 for b in c.bindings), (seed, s, c.bindings)
        emptied += c.program.sym_min != plain.program.sym_min
    assert emptied >= 20
