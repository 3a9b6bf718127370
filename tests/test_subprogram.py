"""Sub-programs (``fuzzer.program.subprogram``): a held bug's example is held by a program
that runs its statements wired as there, under its mode; never by one that only uses the
same forms, or runs them under another mode."""

import dataclasses

from helpers import prog

from fuzzer.corpus.subprogram import holds

#: the effect-edge example: ``v0 = x0.clone(); e_log(v0); v1 = e_tap(x0)``
EXAMPLE = prog({"x0": ("s0",)}, [("clone", ["x0"], "v0", {}), ("e_log", ["v0"], None, {"site": 0}),
                                 ("e_tap", ["x0"], "v1", {"site": 1})], outputs=["v1"])


def _larger(e_tap_reads: str = "v1"):
    """The example's statements between others, on a value the program made, with other
    call sites, reading ``e_tap_reads`` in its last call."""
    return prog({"x0": ("s0",), "x1": ("s0",)},
                [("p_sin", ["x0"], "v0", {"site": 0}), ("add", ["v0", "x1"], "v1", {}),
                 ("clone", ["v1"], "v2", {}), ("p_sin", ["x1"], "v3", {"site": 1}),
                 ("e_log", ["v2"], None, {"site": 7}), ("e_tap", [e_tap_reads], "v4", {"site": 9})],
                outputs=["v3", "v4"])


def test_a_program_holds_an_example_run_on_any_of_its_values_between_other_statements():
    assert holds(_larger(), EXAMPLE)
    assert holds(EXAMPLE, EXAMPLE)


def test_the_same_forms_on_another_data_flow_or_in_another_order_are_not_held():
    # e_tap reads the clone (the example's reads what the clone copied), or an unrelated value
    assert not holds(_larger("v2"), EXAMPLE)
    assert not holds(_larger("x1"), EXAMPLE)
    reordered = dataclasses.replace(EXAMPLE, body=(EXAMPLE.body[0], EXAMPLE.body[2], EXAMPLE.body[1]))
    assert not holds(reordered, EXAMPLE)


def test_two_inputs_of_the_example_are_never_one_value_of_the_program():
    example = prog({"x0": ("s0",), "x1": ("s0",)}, [("add", ["x0", "x1"], "v0", {})], outputs=["v0"])
    same = prog({"x0": ("s0",)}, [("add", ["x0", "x0"], "v0", {})], outputs=["v0"])
    assert not holds(same, example)
    assert holds(example, example)
    # one input read twice by the example may be one value read twice
    assert holds(same, same) and not holds(example, same)


def test_the_program_must_run_under_the_examples_mode():
    grad = dataclasses.replace(EXAMPLE, mode=dataclasses.replace(EXAMPLE.mode, grad=True))
    assert not holds(EXAMPLE, grad)
    assert holds(dataclasses.replace(_larger(), mode=grad.mode), grad)
    # a part the example lacks takes the compile elsewhere: not held either
    assert not holds(grad, EXAMPLE)


def test_an_empty_example_is_held_by_nothing():
    assert not holds(EXAMPLE, dataclasses.replace(EXAMPLE, body=(), outputs=()))
