"""Triggers: a bug's examples as traits, what a match is worth, and the director drawing
again a program likely to hit a bug found before.  No compile: outcomes are made up."""

from __future__ import annotations

import dataclasses

from helpers import prog

from fuzzer.feedback.director import Director, Outcome
from fuzzer.feedback.novelty import Novelty, pairs
from fuzzer.feedback.schedule import SCHEDULE
from fuzzer.feedback.triggers import Triggers, traits
from fuzzer.limits import FEEDBACK
from fuzzer.program import features as feats
from fuzzer.program.generate import generate, program_seed
from fuzzer.program.ir import Mode


def test_traits_are_forms_with_their_simpler_forms_ops_feeding_ops_and_the_mode():
    p = prog({"x0": ("s0",)}, [("p_mix", ["x0", "x0"], "v0", {"site": 0}), ("e_tap", ["v0"], "v1", {"site": 1})])
    p = dataclasses.replace(p, mode=Mode(grad=True, marks=(("x0", 0, "unbacked"),)))
    t = traits(p)
    # p_mix simplifies to p_sin and e_tap to e_log: an example shrunk to those matches
    assert {"form:p_mix", "form:p_sin", "form:e_tap", "form:e_log"} <= t
    assert {"edge:p_mix>e_tap", "edge:p_sin>e_log", "mode:grad", "mark:unbacked"} <= t
    # an input feeding an op is no trait (the shrinker moves operands to inputs)
    assert not any(x.startswith("edge:") and ">p_mix" in x for x in t)


def test_a_bug_keeps_its_least_examples_and_a_program_matches_one_it_holds_all_of():
    small = prog({"x0": ("s0",)}, [("p_sin", ["x0"], "v0", {"site": 0})])
    bigger = prog({"x0": ("s0",)}, [("p_sin", ["x0"], "v0", {"site": 0}), ("e_log", ["v0"], None, {"site": 1})])
    other = prog({"x0": ("s0",)}, [("m_scale", ["x0"], None, {"site": 0})])
    tr = Triggers()
    tr.learn("b", bigger)
    tr.learn("b", small)      # less: it replaces the larger one
    tr.learn("b", bigger)     # more: nothing new to match
    assert tr.examples["b"] == [traits(small)]
    tr.learn("b", other)
    assert len(tr.examples["b"]) == 2
    assert tr.matched(traits(bigger)) == ["b"] and tr.matched(traits(prog({"x0": ("s0",)}, []))) == []
    # a bug hit many ways keeps the least of them
    one = Triggers.from_json({"examples": {"c": [[f"a{n}"] for n in range(10)]}})
    two = Triggers.from_json({"examples": {"c": [[f"b{n}", "x"] for n in range(10)]}})
    assert one.merged(two).examples["c"] == one.examples["c"] + two.examples["c"][:FEEDBACK.examples_per_bug - 10]


def test_a_match_is_worth_what_came_of_the_matching_programs_run():
    p = prog({"x0": ("s0",)}, [("p_sin", ["x0"], "v0", {"site": 0})])
    tr = Triggers()
    assert tr.risk(traits(p)) == 0.0   # matches nothing
    tr.learn("b", p)
    assert tr.risk(traits(p)) == 0.5   # no evidence: a coin flip
    for hit in (False, False, False, False, False, False, True, False):
        tr.observe(traits(p), {"b"} if hit else set())
    assert tr.runs["b"] == [8, 1] and tr.risk(traits(p)) == 0.2
    again = Triggers.from_json(tr.to_json())
    assert again == tr
    both = tr.merged(again)
    assert both.runs["b"] == [16, 2] and both.examples["b"] == tr.examples["b"]


def _index_taken_as_drawn(director: Director, explore: bool) -> int:
    """An index whose choice draws ``explore`` as asked (the director's own stream)."""
    import random

    from fuzzer.program.generate import derive_seed
    for index in range(200):
        rng = random.Random(derive_seed("feedback", director.seed, index))
        director.bandit.choose(rng, ["fresh"])
        if (rng.random() < director.schedule.explore) == explore:
            return index
    raise AssertionError("no such index")


def test_the_director_draws_again_a_fresh_program_likely_to_hit_a_bug_found_before():
    director = Director(5, feats.ALL)
    index = _index_taken_as_drawn(director, explore=False)
    own = generate(program_seed(5, index), features=feats.ALL)
    director.triggers.learn("b", own.program)
    director.triggers.runs["b"] = [10, 9]          # matching programs mostly hit it
    recipe = director.next(index, program_seed(5, index))
    assert recipe.case != own and recipe.draws > 1 and recipe.risk <= SCHEDULE.risk_limit
    assert recipe.seed == program_seed(5, index)   # the index's seed; the entry carries the case
    # the same state gives the same program
    again = Director(5, feats.ALL)
    again.triggers = Triggers.from_json(director.triggers.to_json())
    assert again.next(index, program_seed(5, index)).case == recipe.case
    # a bug whose matches seldom hit it steers nothing (one candidate: no novelty to choose by)
    quiet = Director(5, feats.ALL, schedule=dataclasses.replace(SCHEDULE, candidates=1))
    quiet.triggers.learn("b", own.program)
    quiet.triggers.runs["b"] = [20, 1]
    assert quiet.next(index, program_seed(5, index)).case == own


def test_an_explored_program_is_taken_as_drawn_and_its_outcome_is_learnt():
    director = Director(5, feats.ALL)
    index = _index_taken_as_drawn(director, explore=True)
    own = generate(program_seed(5, index), features=feats.ALL)
    director.triggers.learn("b", own.program)
    director.triggers.runs["b"] = [10, 9]
    recipe = director.next(index, program_seed(5, index))
    assert recipe.case == own and recipe.draws == 1
    director.observe(index, Outcome("finding", kinds=("effect-log",), known=1, bugs=(("b", own.program, False),)))
    assert director.triggers.runs["b"] == [11, 10]
    # saved and restored with the director
    restored = Director(5, feats.ALL)
    restored.load(director.to_json())
    assert restored.triggers == director.triggers


def test_of_the_safe_candidates_the_director_takes_the_one_whose_pairs_were_seen_least():
    director = Director(5, feats.ALL)
    index = _index_taken_as_drawn(director, explore=False)
    own = generate(program_seed(5, index), features=feats.ALL)
    for _ in range(50):                              # its pairs seen fifty times
        director.novelty.observe(own.program)
    recipe = director.next(index, program_seed(5, index))
    assert recipe.case != own and recipe.draws == SCHEDULE.candidates
    assert director.novelty.score(recipe.case.program) > director.novelty.score(own.program)
    director.observe(index, Outcome("clean"))
    assert director.novelty.seen[next(iter(pairs(recipe.case.program)))] >= 1
    assert Novelty.from_json(director.novelty.to_json()) == director.novelty


def test_novelty_sums_what_a_program_holds_that_was_seen_least():
    a = prog({"x0": ("s0",)}, [("p_sin", ["x0"], "v0", {"site": 0})])
    b = prog({"x0": ("s0",)}, [("p_sin", ["x0"], "v0", {"site": 0}), ("e_log", ["v0"], None, {"site": 1})])
    n = Novelty()
    assert n.score(a) == 1 and n.score(b) == 3      # p_sin; p_sin, e_log and the pair
    n.observe(a)
    assert n.score(a) == 0.5 and n.score(b) == 2.5
    assert n.merged(n).seen[("form:p_sin", "form:p_sin")] == 2
