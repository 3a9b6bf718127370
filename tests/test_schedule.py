"""The feedback's schedule (``fuzzer.feedback.schedule``): the bandit's arms, the mix of
mutants and fresh programs, and feature weights moved by the new bugs that needed them."""

import random

from fuzzer.feedback.schedule import Arm, Bandit, FeatureWeights, Mix, Schedule


def test_an_arm_keeps_a_window_of_rewards_and_what_they_cost():
    arm = Arm("a")
    for r in (1.0, 2.0, 3.0):
        arm.add(r, window=2, seconds=2.0, compiles=2)
    assert list(arm.rewards) == [2.0, 3.0] and arm.mean == 2.5 and arm.plays == 3 and arm.total == 6.0
    assert arm.mean_compiles == 2.0 and arm.cost == 2.0


def test_every_arm_is_played_first_then_the_one_paying_most_per_compile():
    bandit = Bandit(["a", "b"], Schedule(exploration=0.0))
    rng = random.Random(0)
    assert bandit.choose(rng, ["a", "b"]) == "a"
    bandit.reward("a", 1.0, compiles=4)
    assert bandit.choose(rng, ["a", "b"]) == "b"
    bandit.reward("b", 0.6, compiles=1)   # less, but at a quarter of the compiles
    assert bandit.choose(rng, ["a", "b"]) == "b"
    restored = Bandit(["a", "b"])
    restored.load(bandit.to_json())
    assert restored.to_json() == bandit.to_json()


def test_mutants_get_their_ceiling_share_when_they_pay_and_their_floor_when_not():
    paying, idle = Mix(), Mix()
    for _ in range(50):
        paying.add(mutant=True, compiles=1, new_bugs=1)
        paying.add(mutant=False, compiles=1, new_bugs=0)
        idle.add(mutant=True, compiles=1, new_bugs=0)
        idle.add(mutant=False, compiles=1, new_bugs=1)
    s = Schedule()
    assert abs(paying.share() - (s.mutant_floor + (1 - s.mutant_floor) * s.mutant_ceiling)) < 0.05
    assert abs(idle.share() - s.mutant_floor) < 0.03
    assert paying.rate("mutant") > paying.rate("fresh")


def test_a_feature_whose_programs_find_new_bugs_is_weighed_up_within_bounds():
    weights = FeatureWeights({"views": 0.3, "hops": 0.3, "off": 0.0})
    assert weights.table() == {"views": 0.3, "hops": 0.3, "off": 0.0}
    for _ in range(40):
        weights.add({"views", "hops"}, compiles=1, needed=[{"views"}])
        weights.add({"hops"}, compiles=1)
    table = weights.table()
    assert table["views"] > 0.3 > table["hops"] and table["off"] == 0.0
    assert weights.lift("views") <= Schedule().feature_factor
    restored = FeatureWeights({"views": 0.3, "hops": 0.3, "off": 0.0})
    restored.load(weights.to_json())
    assert restored.table() == table
