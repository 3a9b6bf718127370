"""Campaign state: shards split the stream, resume carries on without repeats, stats read back."""

import json

import backends
import pytest
from click.testing import CliRunner
from helpers import case, prog

from fuzzer.campaign.session import Budget, Config, run_campaign
from fuzzer.campaign.state import BadState, CampaignFolder, Shard
from fuzzer.cli import main
from fuzzer.judge.trial import run_trial


def test_shards_partition_the_stream():
    n = 4
    taken = [set(_take(Shard(k, n).indices(), 50)) for k in range(1, n + 1)]
    for i in range(n):
        for j in range(i + 1, n):
            assert not taken[i] & taken[j]
    assert set().union(*taken) >= set(range(4 * 50 - 3))


def test_shard_indices_resume_at_or_after_start():
    assert _take(Shard(2, 3).indices(0), 3) == [1, 4, 7]
    assert _take(Shard(2, 3).indices(5), 3) == [7, 10, 13]
    assert _take(Shard(1, 1).indices(9), 2) == [9, 10]


@pytest.mark.parametrize("text", ["0/3", "4/3", "a/b", "3", ""])
def test_bad_shards(text):
    with pytest.raises(ValueError):
        Shard.parse(text)


def _take(it, n):
    return [next(it) for _ in range(n)]


def _campaign(tmp_path, shard, programs, resume=False):
    config = Config(seed=5, device="cpu", corpus_dir=str(tmp_path / "corpus"), backend=backends.FAITHFUL)
    folder = CampaignFolder(tmp_path / "state")
    return run_campaign(config, Budget(programs=programs), log=lambda line: None, shard=shard,
                        folder=folder, resume=resume), folder


def test_resume_continues_the_stream_without_repeats(tmp_path, monkeypatch):
    import fuzzer.campaign.session as campaign_mod
    seen = []
    real = campaign_mod.program_seed
    monkeypatch.setattr(campaign_mod, "program_seed", lambda s, i: (seen.append(i), real(s, i))[1])

    shard = Shard(2, 3)
    first, folder = _campaign(tmp_path, shard, 2)
    assert folder.load().next_index == 7 and folder.load().programs == 2
    stats, folder = _campaign(tmp_path, shard, 2, resume=True)
    state = folder.load()
    assert state.recompiles == first.recompiles + stats.recompiles
    assert seen == [1, 4, 7, 10]
    assert state.programs == 4 and state.next_index == 13
    assert "resumed" in stats.summary()
    lines = folder.stats_lines()
    assert lines and lines[-1]["programs"] == 4


def test_resume_refuses_another_campaign(tmp_path):
    _campaign(tmp_path, Shard(1, 2), 1)
    with pytest.raises(BadState, match="shard"):
        _campaign(tmp_path, Shard(2, 2), 1, resume=True)
    with pytest.raises(BadState, match="no campaign state"):
        run_campaign(Config(seed=5, device="cpu", corpus_dir=str(tmp_path)), Budget(programs=1),
                     folder=CampaignFolder(tmp_path / "empty"), resume=True)


def test_stats_command(tmp_path):
    _campaign(tmp_path, Shard(1, 1), 2)
    r = CliRunner().invoke(main, ["stats", str(tmp_path / "state")])
    assert r.exit_code == 0, r.output
    assert "programs   2" in r.output and "next program index 2" in r.output
    r = CliRunner().invoke(main, ["stats", str(tmp_path / "state"), "--json"])
    assert json.loads(r.output)["programs"] == 2
    (tmp_path / "nothing").mkdir()
    assert CliRunner().invoke(main, ["stats", str(tmp_path / "nothing")]).exit_code == 2
    # a pool's lines carry worker memory: the summary gives its range past the warm-up
    folder = CampaignFolder(tmp_path / "state")
    state = folder.load()
    for seconds, rss, replaced in ((10, [300, 0], 0), (70, [410, 420], 0), (130, [455, 405], 1)):
        state.seconds = seconds
        folder.log_stats(state, workers_alive=2, workers_replaced=replaced, worker_rss_mb=rss)
    r = CliRunner().invoke(main, ["stats", str(tmp_path / "state")])
    assert "workers 405-455 MiB resident" in r.output and "1 workers replaced" in r.output


def test_a_torn_stats_line_is_skipped(tmp_path):
    _campaign(tmp_path, Shard(1, 1), 1)
    with open(tmp_path / "state" / "stats.jsonl", "a") as fh:
        fh.write('{"programs": 3, "sec')
    assert len(CampaignFolder(tmp_path / "state").stats_lines()) >= 1


def test_run_rejects_a_bad_shard_and_a_missing_resume_state(tmp_path):
    r = CliRunner().invoke(main, ["run", "--programs", "1", "--shard", "3/2"])
    assert r.exit_code == 2 and "shard" in r.output
    r = CliRunner().invoke(main, ["run", "--programs", "1", "--resume", "--state", str(tmp_path / "none"),
                                  "--corpus", str(tmp_path / "c")])
    assert r.exit_code == 2 and "no campaign state" in r.output


def test_recompiles_are_counted_per_program():
    """A size of 1 specialises under dynamic=True: the program compiles again."""
    p = prog({"x": ("s0",)}, [("p_sin", ["x"], "v", {"site": 0})], outputs=["v"])
    assert run_trial(case(p, [{"s0": 4}, {"s0": 7}]), "cpu", backends.FAITHFUL).recompiles == 0
    assert run_trial(case(p, [{"s0": 4}, {"s0": 1}]), "cpu", backends.FAITHFUL).recompiles == 1
