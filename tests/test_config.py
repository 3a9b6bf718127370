"""What a campaign runs (``fuzzer.campaign.config``): when its budget is spent, and what
its settings say; no campaign run."""

from fuzzer.campaign.config import Budget, Config
from fuzzer.program.generate import BUILTIN, OpSet


def test_a_budget_is_spent_by_whichever_limit_comes_first():
    assert not Budget().spent(1e9, 10**9)
    assert Budget(seconds=10).spent(10, 0) and not Budget(seconds=10).spent(9.9, 10**9)
    assert Budget(programs=3).spent(0, 3) and not Budget(programs=3).spent(1e9, 2)
    assert Budget(seconds=10, programs=3).spent(1, 3)


def test_the_settings_as_the_state_records_them():
    config = Config(seed=1, device="cpu", corpus_dir="c", features=(("views", 0.5), ("hops", 1.0)))
    assert config.feature_table == {"views": 0.5, "hops": 1.0}
    assert config.op_table == {}
    user = Config(seed=1, device="cpu", corpus_dir="c", ops=OpSet(builtin=False, user=("lib::op",)))
    assert user.op_table == {"builtin": False, "user": ["lib::op"]}
    assert BUILTIN.builtin
