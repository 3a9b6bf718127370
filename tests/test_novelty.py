"""Novelty (``fuzzer.feedback.novelty``): a program's pairs of traits, scored by how
rarely the programs run before held them; hand-written programs."""

import dataclasses

from helpers import prog

from fuzzer.feedback.novelty import Novelty, pairs, parts
from fuzzer.program.ir import Mode

P = prog({"x0": ("s0",)}, [("p_sin", ["x0"], "v0", {"site": 0}), ("e_log", ["v0"], None, {"site": 1})])


def test_the_parts_are_its_forms_and_the_parts_of_its_mode():
    marked = dataclasses.replace(P, mode=Mode(dynamic="auto", dtype="float16", grad=True,
                                              marks=(("x0", 0, "maybe"),)))
    assert parts(P) == {"form:p_sin", "form:e_log"}
    assert parts(marked) == {"form:p_sin", "form:e_log", "mark:maybe", "mode:grad", "mode:float16", "mode:auto"}


def test_each_part_is_paired_with_itself_and_every_other():
    assert pairs(P) == [("form:e_log", "form:e_log"), ("form:p_sin", "form:p_sin"), ("form:e_log", "form:p_sin")]


def test_a_pair_seen_counts_less_and_a_longer_program_more():
    n = Novelty()
    assert n.score(P) == 3.0
    n.observe(P)
    assert n.score(P) == 1.5
    longer = prog({"x0": ("s0",)}, [("p_sin", ["x0"], "v0", {"site": 0}), ("e_log", ["v0"], None, {"site": 1}),
                                    ("clone", ["x0"], "v1", {})])
    assert n.score(longer) > n.score(P)


def test_counts_round_trip_and_merge():
    a, b = Novelty(), Novelty()
    a.observe(P)
    b.observe(P)
    assert Novelty.from_json(a.to_json()) == a
    assert a.merged(b).seen[("form:p_sin", "form:p_sin")] == 2
