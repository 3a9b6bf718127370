"""A campaign run's bookkeeping (``fuzzer.campaign.session``): the stream of program
indices, a finished program counted and its entries saved, the watermark, and resume
refusing another campaign; finished programs made by hand, no trial run."""

import pytest
from helpers import case, divergence_on, prog

from fuzzer.campaign.config import Budget, Config
from fuzzer.campaign.session import Finished, Session, Timing, compiles_of
from fuzzer.campaign.state import BadState, CampaignFolder, Shard
from fuzzer.corpus.entry import Entry, Origin
from fuzzer.judge import contract
from fuzzer.judge.observe import Gap
from fuzzer.program.generate import program_seed


def _session(tmp_path, shard=Shard(), resume=False, seed=5, **config):
    config = Config(seed=seed, device="cpu", corpus_dir=str(tmp_path / "corpus"), **config)
    return Session(config, Budget(programs=4), shard=shard, folder=CampaignFolder(tmp_path / "run"),
                   resume=resume, log=lambda line: None)


def _entry(n=1):
    body = [("p_sin", ["x0"], f"v{k}", {"site": k + 1}) for k in range(n - 1)]
    c = case(prog({"x0": ("s0",)}, [*body, ("e_log", ["x0"], None, {"site": 0})]))
    return Entry.build(contract.EFFECT_LOG, c, [divergence_on(0)], Origin(seed=1, device="cpu", backend="inductor"))


def test_a_shard_runs_its_own_indices_each_with_its_programs_seed(tmp_path):
    s = _session(tmp_path, shard=Shard(2, 3))
    recipes = [s.next_program() for _ in range(3)]
    assert [r.index for r in recipes] == [1, 4, 7]
    assert [r.seed for r in recipes] == [program_seed(5, i) for i in (1, 4, 7)] and not recipes[0].avoided


def test_a_finished_program_is_counted_its_entries_saved_and_the_watermark_moved(tmp_path):
    s = _session(tmp_path)
    for _ in range(3):
        s.next_program()
    assert s.finished(Finished(1, "finding", (_entry(),), recompiles=2))[0].endswith(".json")
    assert s.stats.next_index == 0 and s.stats.done_above == [1]        # 0 still running
    assert s.finished(Finished(0, "finding", (_entry(),))) == [None]     # the same signature: a repeat
    s.finished(Finished(2, "untested", untested=Gap("graph-break", "a break", "")))
    stats = s.stats
    assert stats.next_index == 3 and stats.done_above == [] and stats.run_programs == 3
    assert stats.findings[contract.EFFECT_LOG] == 2 and stats.repeats == 1 and len(stats.saved) == 1
    assert stats.recompiles == 2 and stats.untested["graph-break"] == 1 and len(stats.bugs) == 1


def test_a_checkpoint_saves_the_state_a_resume_carries_on_from(tmp_path):
    s = _session(tmp_path)
    s.next_program()
    s.finished(Finished(0, "clean"))
    s.checkpoint()
    again = _session(tmp_path, resume=True)
    assert again.stats.next_index == 1 and again.next_program().index == 1 and again.stats.base.programs == 1


@pytest.mark.parametrize("other, words", [({"seed": 6}, "holds seed 5"), ({"targets": ("export",)}, "target"),
                                          ({"features": (("views", 1.0),)}, "features")])
def test_a_resume_of_another_campaign_is_refused(tmp_path, other, words):
    s = _session(tmp_path)
    s.checkpoint()
    with pytest.raises(BadState, match=words):
        _session(tmp_path, resume=True, **other)


def test_the_budget_counts_programs_in_flight_and_the_cost_of_a_program_is_its_compiles(tmp_path):
    s = _session(tmp_path)
    assert not s.spent() and s.spent(in_flight=4) and s.seconds_left() is None and not s.out_of_time()
    shrunk = _entry()
    shrunk.shrink = {"oracle_calls": 7}
    assert compiles_of(3, []) == 1 + 3 and compiles_of(3, [shrunk]) == 1 + 3 + 7
    assert Timing.of(None, 5.0) is None and Timing.of(2.0, 1.5) == Timing(2.0, 0.0)


def test_a_shards_watermark_moves_over_its_own_indices(tmp_path):
    s = _session(tmp_path, shard=Shard(2, 3))
    for _ in range(3):
        s.next_program()
    s.finished(Finished(4, "clean"))
    assert (s.stats.next_index, s.stats.done_above) == (1, [4])
    s.finished(Finished(1, "clean"))
    assert (s.stats.next_index, s.stats.done_above) == (7, [])
