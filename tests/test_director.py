"""The director (``fuzzer.feedback.director``): what a program gave as a reward, what it
learns from a report, and fresh programs while the pool warms up; hand-made outcomes,
no compile."""

from fuzzer.feedback.director import Director, Outcome, merged
from fuzzer.feedback.schedule import FRESH, Schedule


def test_a_reward_counts_new_bugs_and_new_tokens_but_no_tokens_with_a_known_bug():
    s = Schedule()
    d = Director(1, {})
    assert d.reward_of(Outcome("ok"), novel=0) == 0.0
    assert d.reward_of(Outcome("ok"), novel=3) == s.novel + 2 * s.per_novel
    assert d.reward_of(Outcome("ok"), novel=100) == s.novel + s.novel_cap * s.per_novel
    assert d.reward_of(Outcome("ok", new_bugs=1), novel=0) == s.new_bug
    assert d.reward_of(Outcome("ok", known=2), novel=5) == 2 * s.known_bug


def test_the_warm_up_draws_fresh_programs_the_same_for_the_same_seed():
    a, b = Director(1, {}), Director(1, {})
    first = [a.next(i, 1000 + i) for i in range(3)]
    assert [r.arm for r in first] == [FRESH] * 3
    assert [r.case for r in first] == [b.next(i, 1000 + i).case for i in range(3)]


def test_a_program_that_showed_something_new_is_pooled_and_one_that_hit_a_known_bug_is_not():
    d = Director(1, {})
    d.next(0, 10)
    assert d.observe(0, Outcome("ok", signal=("graph:a",))) > 0
    assert [s.index for s in d.pool.seeds] == [0]
    d.next(1, 11)
    d.observe(1, Outcome("ok", signal=("graph:b",), known=1))
    assert [s.index for s in d.pool.seeds] == [0]
    assert d.bandit.arms[FRESH].plays == 2


def test_a_program_that_says_nothing_of_the_compiler_teaches_nothing_and_an_unknown_one_is_none():
    d = Director(1, {})
    d.next(0, 10)
    assert d.observe(0, Outcome("invalid", signal=("graph:a",))) == 0.0
    assert d.pool.seeds == [] and d.pool.programs == 0 and d.bandit.arms[FRESH].plays == 0
    assert d.observe(99, Outcome("ok")) is None


def test_a_saved_director_resumes_and_shards_merge():
    d = Director(1, {})
    d.next(0, 10)
    d.observe(0, Outcome("ok", signal=("graph:a",)))
    again = Director(1, {})
    again.load(d.to_json())
    assert again.to_json() == d.to_json()
    both = merged([d.to_json(), d.to_json()])
    assert both["played"] == 2 and both["pool"]["counts"]["graph:a"] == 2
