"""The shrinker's door (``fuzzer.reduce.shrinker``): a candidate is taken only if it is
strictly simpler, legal, judged once and shows the same bug class; the budget and our
own errors stop nothing but themselves.  Stand-in oracles, no compile."""

from helpers import case, finding_of, prog, stays_while

from fuzzer.judge import contract
from fuzzer.limits import UNBOUNDED, OracleBudget
from fuzzer.reduce.edits import remove_statements
from fuzzer.reduce.shrinker import Shrinker, case_key, shrink

BODY = [("p_sin", ["x0"], "v0", {"site": 0}), ("e_log", ["v0"], None, {"site": 1}),
        ("p_sin", ["x0"], "v1", {"site": 2})]
C = case(prog({"x0": ("s0",)}, BODY, outputs=["v1"]))


def _has_log(c):
    return any(s.form == "e_log" for s in c.program.body)


class Counted:
    """A stand-in oracle that counts its calls."""

    def __init__(self, judge):
        self.judge, self.calls = judge, 0

    def __call__(self, c):
        self.calls += 1
        return self.judge(c)


def _shrinker(judge=stays_while(_has_log), budget=UNBOUNDED):
    return Shrinker(finding_of(C, contract.EFFECT_LOG, judge(C).divergences), budget, judge)


def test_a_candidate_is_taken_only_when_strictly_simpler_and_still_buggy():
    s = _shrinker()
    assert not s.consider(C)                                   # not simpler
    assert not s.consider(remove_statements(C, {1}))           # simpler, but the bug is gone
    assert s.consider(remove_statements(C, {2}))
    assert len(s.best.program.body) == 2


def test_an_illegal_candidate_costs_no_oracle_call_and_a_verdict_is_asked_once():
    oracle = Counted(stays_while(_has_log))
    s = _shrinker(oracle)
    oracle.calls = 0
    illegal = remove_statements(C, set())
    illegal = type(C)(program=illegal.program, bindings=({"s0": 3, "s9": 1},), input_seed=1)
    assert s.divergences_of(illegal) is None and oracle.calls == 0
    candidate = remove_statements(C, {2})
    s.divergences_of(candidate)
    s.divergences_of(candidate)
    assert oracle.calls == 1 and case_key(candidate) in s.cache


def test_another_bug_class_is_refused():
    def judge(c):
        shape = "reordered" if len(c.program.body) == 3 else "missing"
        return contract.Verdict(contract.OK, [contract.Divergence(contract.EFFECT_LOG, 0, "sequence", shape,
                                                                  (shape,))])
    s = _shrinker(judge)
    assert not s.consider(remove_statements(C, {2}))


def test_our_own_error_refuses_the_candidate_and_is_kept():
    def judge(c):
        if len(c.program.body) < 3:
            raise KeyError("a bug of ours")
        return stays_while(_has_log)(c)
    s = _shrinker(judge)
    assert not s.consider(remove_statements(C, {2}))
    assert len(s.errors) == 1 and "a bug of ours" in str(s.errors[0].message)


def test_a_spent_budget_stops_the_search_where_it_is():
    s = _shrinker(budget=OracleBudget(oracle_calls=1, seconds=float("inf")))
    best = s.run()
    assert s.exhausted and s.calls == 1 and len(best.program.body) <= 3


def test_shrink_ends_renumbered_and_confirmed_at_the_minimum():
    result = shrink(finding_of(C, contract.EFFECT_LOG, stays_while(_has_log)(C).divergences), UNBOUNDED,
                    judge=stays_while(_has_log))
    assert result.confirmed and not result.exhausted
    assert [s.form for s in result.case.program.body] == ["e_log"]
    assert result.case.program.body[0].attrs["site"] == 0 and result.original_statements == 3
    assert result.record()["statements"] == 1
