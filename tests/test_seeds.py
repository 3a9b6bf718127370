"""The pool (``fuzzer.feedback.seeds``): tokens counted, a seed worth what is rare in
it, less for each pick and known bug, more for each new bug; the worthiest kept."""

import random

from helpers import case, prog

from fuzzer.feedback.seeds import Pool, Seed


def _seed(index, tokens, **kw):
    c = case(prog({"x0": ("s0",)}, [("p_sin", ["x0"], f"v{k}", {"site": k}) for k in range(index + 1)]))
    return Seed(c, frozenset(tokens), index, "fresh", **kw)


def test_a_token_is_novel_until_a_program_shows_it():
    pool = Pool()
    assert pool.observe({"a", "b"}) == {"a", "b"}
    assert pool.observe({"b", "c"}) == {"c"}
    assert pool.counts["b"] == 2 and pool.programs == 2 and pool.novel({"a", "d"}) == {"d"}


def test_worth_is_rarity_less_for_picks_and_known_bugs_more_for_new_bugs():
    pool = Pool()
    pool.counts.update({"rare": 1, "common": 10})
    assert pool.worth(_seed(0, {"rare"})) == 1.0
    assert pool.worth(_seed(0, {"common"})) == 0.1
    assert pool.worth(_seed(0, {"rare"}, picks=3)) == 0.5
    assert pool.worth(_seed(0, {"rare"}, known=1)) == 0.25
    assert pool.worth(_seed(0, {"rare"}, bugs=1)) == 4.0


def test_the_pool_keeps_the_worthiest_and_picks_by_worth():
    pool = Pool(cap=2)
    pool.counts.update({"rare": 1, "common": 100})
    for i, tokens in enumerate(({"common"}, {"rare"}, {"rare", "common"})):
        pool.admit(_seed(i, tokens))
    assert [s.index for s in pool.seeds] == [1, 2]
    picks = [pool.pick(random.Random(k)).index for k in range(200)]
    assert 80 < picks.count(1) < 120  # two seeds of nearly one worth
    assert pool.pick(random.Random(0), besides=pool.seeds[0]).index == 2
    assert Pool().pick(random.Random(0)) is None and pool.by_index(2) is pool.seeds[1]


def test_a_pool_round_trips_and_two_merge_without_repeats():
    a, b = Pool(), Pool()
    a.observe({"x"})
    a.admit(_seed(0, {"x"}))
    b.observe({"x", "y"})
    b.admit(_seed(0, {"x"}))
    b.admit(_seed(1, {"y"}))
    assert Pool.from_json(a.to_json()).to_json() == a.to_json()
    merged = a.merged(b)
    assert merged.counts["x"] == 2 and merged.programs == 2 and len(merged.seeds) == 2
