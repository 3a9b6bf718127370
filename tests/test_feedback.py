"""The feedback loop without compiling: the pool, the bandit, the feature weights and
the director, fed hand-made outcomes; then what campaigns make of it."""

import random

import backends
import pytest

from fuzzer.feedback.director import Director, Outcome, merged
from fuzzer.feedback.mutate import MUTATIONS
from fuzzer.feedback.seeds import Pool, Seed
from fuzzer.feedback.schedule import FRESH, SCHEDULE, Bandit, FeatureWeights, Mix
from fuzzer.program import features as feats
from fuzzer.program.generate import generate, program_seed


def _case(i: int):
    return generate(program_seed(9, i), features=feats.ALL)


def test_the_pool_admits_by_novelty_and_values_rare_tokens():
    pool = Pool(cap=2)
    assert pool.observe({"a", "b"}) == {"a", "b"}
    assert pool.observe({"a", "c"}) == {"c"}
    assert pool.observe({"a"}) == set()
    common, rare = Seed(_case(0), frozenset({"a"}), 0, FRESH), Seed(_case(1), frozenset({"c"}), 1, FRESH)
    pool.admit(common)
    pool.admit(rare)
    assert pool.worth(rare) > pool.worth(common)  # a seen by 3 programs, c by 1
    picks = [pool.pick(random.Random(k)) for k in range(200)]
    assert picks.count(rare) > picks.count(common)
    # a known bug hit by a seed's mutants divides its worth
    rare.known = 1
    assert pool.worth(rare) == pytest.approx(1.0 / SCHEDULE.known_penalty)
    # over the cap, the least worthy goes: the rare seed, now that it hits a known bug
    pool.admit(Seed(_case(2), frozenset({"b", "c"}), 2, FRESH))
    assert [s.index for s in pool.seeds] == [0, 2]


def test_the_pool_round_trips_and_merges():
    a, b = Pool(), Pool()
    a.observe({"x", "y"})
    a.admit(Seed(_case(0), frozenset({"x"}), 0, FRESH))
    b.observe({"y", "z"})
    b.admit(Seed(_case(0), frozenset({"x"}), 5, "insert"))  # the same program: kept once
    b.admit(Seed(_case(1), frozenset({"z"}), 6, "insert"))
    again = Pool.from_json(a.to_json())
    assert again.counts == a.counts and [s.case for s in again.seeds] == [s.case for s in a.seeds]
    both = a.merged(b)
    assert both.counts == {"x": 1, "y": 2, "z": 1} and both.programs == 2
    assert sorted(s.case.program.digest() for s in both.seeds) == sorted(
        {_case(0).program.digest(), _case(1).program.digest()})


def test_the_bandit_plays_every_arm_then_favours_what_pays():
    bandit = Bandit(["fresh", "insert", "delete"])
    rng = random.Random(0)
    first = [bandit.choose(rng, ["fresh", "insert", "delete"]) for _ in range(1)]
    assert first == ["fresh"]
    for name in ("fresh", "insert", "delete"):
        bandit.reward(name, 0.0)
    for _ in range(60):
        arm = bandit.choose(rng, ["fresh", "insert", "delete"])
        bandit.reward(arm, 1.0 if arm == "insert" else 0.0)
    plays = {name: arm.plays for name, arm in bandit.arms.items()}
    assert plays["insert"] > plays["fresh"] and plays["insert"] > plays["delete"]
    again = Bandit(["fresh", "insert", "delete"])
    again.load(bandit.to_json())
    assert again.to_json() == bandit.to_json()


def test_the_bandit_weighs_what_an_arm_pays_against_the_compiles_it_costs():
    """Two arms that pay alike, one at four times the compiles (a splice's longer programs
    and their findings' shrinks): the cheaper is played most; a state saved before the
    compiles were kept loads as one compile a reward."""
    bandit = Bandit(["fresh", "splice"])
    rng = random.Random(0)
    for _ in range(200):
        arm = bandit.choose(rng, ["fresh", "splice"])
        bandit.reward(arm, 1.0, compiles=8 if arm == "splice" else 2)
    assert bandit.arms["fresh"].plays > 3 * bandit.arms["splice"].plays
    saved = bandit.to_json()
    for arm in saved.values():
        del arm["compiles"]
    old = Bandit(["fresh", "splice"])
    old.load(saved)
    assert list(old.arms["splice"].compiles) == [1] * len(old.arms["splice"].rewards)


def test_feature_weights_follow_the_new_bugs_that_needed_them_within_bounds():
    """A new bug credits the features its example still uses, not every feature of the
    program that found it: ``dtypes`` rides along in the programs that find bugs
    needing ``hops`` and is not favoured for it."""
    w = FeatureWeights({"hops": 0.15, "dtypes": 0.2})
    assert w.table() == {"hops": 0.15, "dtypes": 0.2}  # no evidence yet
    for k in range(80):
        if k % 2:   # with hops and dtypes; one in four finds a new bug that needs hops
            w.add({"hops", "dtypes"}, 3, [{"hops"}] if k % 8 == 1 else [])
        else:
            w.add(set(), 3, [{"autograd"}] if k % 16 == 0 else [])
    table = w.table()
    assert 0.15 < table["hops"] <= SCHEDULE.feature_ceiling
    assert SCHEDULE.feature_floor <= table["dtypes"] < 0.2
    # the lift is bounded
    assert w.lift("hops") <= SCHEDULE.feature_factor


def test_a_feature_that_paid_early_and_pays_no_more_loses_its_favour():
    """The tallies fade: 200 programs in which bugs needing ``hops`` were new, then 900
    in which none was, leave ``hops`` near its base weight; a campaign-long tally would
    still favour it."""
    w = FeatureWeights({"hops": 0.15, "dtypes": 0.2})
    for k in range(200):
        w.add({"hops"} if k % 2 else set(), 2, [{"hops"}] if k % 10 == 1 else [])
    assert w.table()["hops"] > 0.15 * 1.5
    for k in range(900):
        w.add({"hops"} if k % 2 else set(), 2)
    assert w.table()["hops"] == pytest.approx(0.15, rel=0.1)


def _mutant_share(mix: Mix, draws: int = 2000) -> float:
    rng = random.Random(5)
    return sum(mix.mutate(rng) for _ in range(draws)) / draws


def test_mutants_get_the_share_their_new_bugs_per_compile_earn():
    """With no evidence, mutants get about half the ceiling; where fresh programs find
    the new bugs, mutants fall to about the floor; where mutants find them at the same
    cost, they rise to about the ceiling; and as the tallies fade, a side that stops
    paying loses what it had earned."""
    s = SCHEDULE
    assert _mutant_share(Mix()) == pytest.approx(s.mutant_floor + (1 - s.mutant_floor) * s.mutant_ceiling / 2, abs=0.03)
    fresh_pays, mutants_pay = Mix(), Mix()
    for k in range(400):
        mutant = k % 4 == 0
        fresh_pays.add(mutant, 3, int(not mutant and k % 10 == 1))
        mutants_pay.add(mutant, 3, int(mutant and k % 8 == 0))
    assert _mutant_share(fresh_pays) < s.mutant_floor + 0.04
    assert _mutant_share(mutants_pay) > s.mutant_ceiling - 0.04
    # mutants cost three times as much per program for the same bugs a program: no better
    costly = Mix()
    for k in range(400):
        mutant = k % 2 == 0
        costly.add(mutant, 9 if mutant else 3, int(k % 10 < 2))
    assert costly.rate("mutant") < costly.rate("fresh") / 2
    for k in range(1500):  # fresh programs stop finding; mutants' share comes back up
        fresh_pays.add(k % 4 == 0, 3, int(k % 4 == 0 and k % 40 == 0))
    assert _mutant_share(fresh_pays) > s.mutant_ceiling - 0.04


def test_the_director_mutates_as_often_as_mutants_pay_and_resumes_the_mix():
    def fresh_pays(i, r):
        return Outcome("clean", (f"t{i}",), new_bugs=int(r.arm == FRESH and i % 6 == 0))

    d = Director(1, feats.ALL)
    recipes = _drive(d, 160, fresh_pays)
    late = [r.arm != FRESH for r in recipes[80:]]
    assert sum(late) / len(late) < SCHEDULE.mutant_floor + 0.08
    c = Director(1, feats.ALL)
    c.load(d.to_json())
    assert c.mix.tally == d.mix.tally
    assert [c.next(i, program_seed(1, i)).arm for i in range(160, 200)] == \
        [d.next(i, program_seed(1, i)).arm for i in range(160, 200)]


def _drive(director: Director, n: int, outcome_of, seed: int = 1) -> list:
    recipes = []
    for i in range(n):
        r = director.next(i, program_seed(seed, i))
        recipes.append(r)
        director.observe(i, outcome_of(i, r))
    return recipes


def _novel(i, r):
    return Outcome("clean", (f"t{i}", "common"))


def test_the_director_warms_up_fresh_then_mutates_the_pool():
    d = Director(1, feats.ALL)
    recipes = _drive(d, 60, _novel)
    assert all(r.arm == FRESH for r in recipes[:SCHEDULE.warmup])
    assert {r.arm for r in recipes[SCHEDULE.warmup:]} & set(MUTATIONS)
    for r in recipes:
        r.case.validate()
    mutants = [r for r in recipes if r.arm != FRESH]
    assert all(r.parent is not None for r in mutants)
    assert len(d.pool.seeds) == 60 and d.played == 60


def test_the_same_outcomes_give_the_same_programs_and_a_resumed_director_goes_on_the_same():
    """What --jobs 0 promises: reports in index order, so the same seed, the same programs."""
    a, b = Director(1, feats.ALL), Director(1, feats.ALL)
    ra, rb = _drive(a, 40, _novel), _drive(b, 40, _novel)
    assert [r.case for r in ra] == [r.case for r in rb]
    # saved at 40 and restored, it makes the programs the original makes next
    c = Director(1, feats.ALL)
    c.load(a.to_json())
    for i in range(40, 55):
        x, y = a.next(i, program_seed(1, i)), c.next(i, program_seed(1, i))
        assert x.case == y.case and x.arm == y.arm
        a.observe(i, _novel(i, x))
        c.observe(i, _novel(i, y))


def test_each_arm_records_what_its_programs_cost_and_a_resumed_director_keeps_it(monkeypatch):
    """The seconds from handing a program out to learning from it are its arm's cost:
    shown beside the mean reward, saved, and never a choice's input."""
    from fuzzer.feedback import director as module

    clock = [100.0]
    monkeypatch.setattr(module.time, "monotonic", lambda: clock[0])
    d = Director(1, feats.ALL)
    for i in range(3):
        r = d.next(i, program_seed(1, i))
        clock[0] += 2.0 + i                       # 2 s, 3 s, 4 s
        d.observe(i, _novel(i, r))
    fresh = d.bandit.arms[FRESH]
    assert fresh.seconds == 9.0 and fresh.cost == 3.0
    assert d.summary()["arms"][FRESH] == [3, round(fresh.mean, 3), 3.0]
    again = Director(1, feats.ALL)
    again.load(d.to_json())
    assert again.bandit.arms[FRESH].cost == 3.0
    # the same outcomes at other speeds give the same programs
    clock[0] = 0.0
    e = Director(1, feats.ALL)
    for i in range(3):
        r = e.next(i, program_seed(1, i))
        clock[0] += 50.0
        e.observe(i, _novel(i, r))
    assert [e.next(i, program_seed(1, i)).case for i in range(3, 6)] == \
        [d.next(i, program_seed(1, i)).case for i in range(3, 6)]


def test_a_known_bug_is_steered_away_from():
    """A mutant that hits a bug with its examples is not pooled, its parent loses worth,
    and its arm's reward is negative."""
    d = Director(1, feats.ALL)
    _drive(d, SCHEDULE.warmup, _novel)
    r = d.next(100, program_seed(1, 100))
    while r.arm == FRESH:
        d.observe(r.index, _novel(r.index, r))
        r = d.next(r.index + 1, program_seed(1, r.index + 1))
    parent = d.pool.by_index(r.parent)
    before, pooled = d.pool.worth(parent), len(d.pool.seeds)
    reward = d.observe(r.index, Outcome("finding", ("new-token",), ("compile-error",), 0, 1))
    assert reward < 0 and len(d.pool.seeds) == pooled
    assert d.pool.worth(parent) < before
    assert d.bandit.arms[r.arm].rewards[-1] < 0


def test_a_program_that_found_a_new_bug_is_pooled_and_worth_more_whatever_its_tokens():
    d = Director(1, feats.ALL)
    _drive(d, 4, _novel)
    r = d.next(4, program_seed(1, 4))
    # nothing novel in its signal: only the bug makes it worth keeping
    d.observe(r.index, Outcome("finding", ("common",), ("effect-log",), 1, 0))
    bugged = d.pool.by_index(4)
    assert bugged is not None and bugged.bugs == 1
    unbugged = Seed(bugged.case, bugged.tokens, 4, bugged.arm)
    assert d.pool.worth(bugged) == pytest.approx(SCHEDULE.bug_bonus * d.pool.worth(unbugged))
    # and it round-trips with its count
    assert Pool.from_json(d.pool.to_json()).by_index(4).bugs == 1


def test_nothing_is_learnt_from_programs_that_say_nothing_of_the_compiler():
    d = Director(1, feats.ALL)
    r = d.next(0, program_seed(1, 0))
    assert d.observe(0, Outcome("invalid", ("x",))) == 0.0
    assert not d.pool.seeds and not d.pool.counts


def test_merged_feedback_states_join_their_pools():
    a, b, c = Director(1, feats.ALL), Director(1, feats.ALL), Director(1, feats.ALL)
    _drive(a, 5, _novel)
    _drive(b, 5, lambda i, r: Outcome("clean", (f"u{i}",)), seed=2)
    _drive(c, 5, lambda i, r: Outcome("clean", (f"w{i}",)))  # a's very programs: each kept once
    both = merged([a.to_json(), b.to_json(), c.to_json()])
    assert both["played"] == 15 and len(both["pool"]["seeds"]) == 10
    assert set(both["pool"]["counts"]) >= {"t0", "u0", "common"}


def test_a_blind_session_draws_each_program_from_its_seed(tmp_path):
    """--blind is the stream before feedback: program i is generate(program_seed(S, i))."""
    from fuzzer.campaign.config import Budget, Config
    from fuzzer.campaign.session import Session

    session = Session(Config(seed=4, device="cpu", corpus_dir=str(tmp_path)), Budget(programs=3))
    assert session.director is None
    recipe = session.next_program()
    assert (recipe.arm, recipe.case, recipe.seed) == ("blind", None, program_seed(4, recipe.index))
    steered = Session(Config(seed=4, device="cpu", corpus_dir=str(tmp_path), feedback=True), Budget(programs=3))
    assert steered.director is not None and steered.next_program().case is not None


@pytest.fixture
def feedback_campaign(tmp_path):
    from fuzzer.campaign.config import Budget, Config
    from fuzzer.campaign.session import Session, run_campaign
    from fuzzer.campaign.state import CampaignFolder

    def run(name: str, programs: int, resume: bool = False, feedback: bool = True, folder=None):
        folder = CampaignFolder(folder or tmp_path / name)
        config = Config(seed=2, device="cpu", corpus_dir=str(tmp_path / name / "corpus"),
                        backend=backends.FAITHFUL, shrink=False, triage=False, feedback=feedback,
                        features=tuple(feats.ALL.items()))
        stats = run_campaign(Session(config, Budget(programs=programs), log=lambda line: None, folder=folder,
                                     resume=resume))
        return stats, folder
    return run


@pytest.mark.compile
def test_a_feedback_campaign_is_deterministic_in_process_and_resumes_its_pool(feedback_campaign):
    from fuzzer.campaign.state import BadState

    one, f1 = feedback_campaign("one", 20)
    two, f2 = feedback_campaign("two", 20)
    s1, s2 = f1.load_feedback(), f2.load_feedback()
    assert s1["played"] == 20 and s1["pool"]["seeds"]
    # the same pool and bandit; the arms' seconds are the machine's, not the seed's
    untimed = [{arm: {k: v for k, v in a.items() if k != "seconds"} for arm, a in s["bandit"].items()}
               for s in (s1, s2)]
    assert s1["pool"] == s2["pool"] and untimed[0] == untimed[1]
    # every program has its line: how it was made, what it cost
    lines = f1.program_lines()
    assert sorted(line["index"] for line in lines) == list(range(20))
    assert {line["arm"] for line in lines} <= {"fresh", *MUTATIONS} and all(line["seconds"] >= 0 for line in lines)
    assert all("parent" in line for line in lines if line["arm"] != "fresh")
    assert all(line["trial"] > 0 and line["after_trial"] >= 0 for line in lines)
    # dcefuzz stats reads the saved director back
    from click.testing import CliRunner

    from fuzzer.cli.app import main
    shown = CliRunner().invoke(main, ["stats", str(f1.path)])
    assert shown.exit_code == 0 and "arms       fresh" in shown.output, shown.output
    assert "mix        mutants " in shown.output
    assert "feedback   pool" in one.summary()
    again, _ = feedback_campaign("one", 5, resume=True)
    assert f1.load_feedback()["played"] == 25
    assert f1.load().feedback
    with pytest.raises(BadState, match="--feedback"):
        feedback_campaign("one", 1, resume=True, feedback=False)


def test_any_finding_of_a_bug_found_before_is_steered_away_from(tmp_path):
    """The director is told ``known`` for every finding of a bug the corpus had before
    the program, whether it became another example (a full shrink) or only a count; a
    bug new with the program is not known, however many of its findings the program has."""
    from helpers import case, prog

    from fuzzer.campaign.config import Budget, Config
    from fuzzer.campaign.session import Finished, Session
    from fuzzer.campaign.state import CampaignFolder
    from fuzzer.corpus.entry import Entry, Origin
    from fuzzer.judge import contract
    from fuzzer.triage.culprit import Culprit

    def entry(n: int, kind: str = contract.EFFECT_LOG) -> Entry:
        body = [("p_sin", ["x0"], f"v{i}", {"site": i}) for i in range(n)]
        e = Entry.build(kind, case(prog({"x0": ("s0",)}, body, outputs=[f"v{n - 1}"])),
                        [contract.Divergence(kind, 0, "sequence", "reordered", ("reordered",))],
                        Origin(seed=0, device="cpu", backend="inductor"))
        e.culprit = Culprit(stage="inductor", kind=kind)
        return e

    folder = CampaignFolder(tmp_path / "state")
    session = Session(Config(seed=4, device="cpu", corpus_dir=str(tmp_path), feedback=True), Budget(programs=9),
                      folder=folder)
    told = []
    session.director.observe = lambda index, outcome: told.append((outcome.new_bugs, outcome.known))
    session.finished(Finished(0, "finding", (entry(1), entry(2))))   # a new bug, twice in its program
    session.finished(Finished(1, "finding", (entry(3),)))            # another example of it: known
    session.finished(Finished(2, "finding", (entry(1),)))            # a repeat of a signature: known
    assert told == [(1, 0), (0, 1), (0, 1)]
    # each program's line names the bug of each finding and what became of it
    bug = folder.program_lines()[0]["bugs"][0][0]
    assert [line["bugs"] for line in folder.program_lines()] == [
        [[bug, "new"], [bug, "new"]], [[bug, "new"]], [[bug, "repeat"]]]
