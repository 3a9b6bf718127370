"""Named limits (``fuzzer.limits``): an oracle budget cut to the time a campaign has left."""

from fuzzer.limits import OracleBudget


def test_a_budget_is_cut_to_the_time_left_and_never_below_zero():
    budget = OracleBudget(oracle_calls=10, seconds=60.0)
    assert budget.within(None) is budget and budget.within(90.0) is budget
    assert budget.within(20.0) == OracleBudget(oracle_calls=10, seconds=20.0)
    assert budget.within(-5.0).seconds == 0.0
