"""Campaign state: shards split the stream, resume carries on without repeats, stats read back."""

import datetime
import functools
import json
import re
from pathlib import Path

import backends
import pytest
from click.testing import CliRunner
from helpers import case, prog

from fuzzer.campaign.config import Budget, Config
from fuzzer.campaign.session import Session, run_campaign
from fuzzer.campaign.state import BadState, CampaignFolder, CampaignState, Shard, new_run_folder
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
    return run_campaign(Session(config, Budget(programs=programs), log=lambda line: None, shard=shard,
                                folder=folder, resume=resume)), folder


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
        run_campaign(Session(Config(seed=5, device="cpu", corpus_dir=str(tmp_path)), Budget(programs=1),
                             folder=CampaignFolder(tmp_path / "empty"), resume=True))


def test_a_new_campaign_is_refused_where_one_has_run(tmp_path):
    _campaign(tmp_path, Shard(1, 1), 1)
    before = (tmp_path / "state" / "state.json").read_text()
    with pytest.raises(BadState, match="already holds a campaign: pass --resume"):
        _campaign(tmp_path, Shard(1, 1), 1)
    assert (tmp_path / "state" / "state.json").read_text() == before


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


# ------------------------------------------------------------------ campaign folders

RUN_NAME = re.compile(r"^\d{8}T\d{6}Z-seed0-shard1of1$")


def test_new_run_folders_are_named_by_start_time_and_never_shared(tmp_path):
    when = datetime.datetime(2026, 3, 4, 5, 6, 7, tzinfo=datetime.timezone.utc)
    first = new_run_folder(3, Shard(2, 4), tmp_path / "runs", now=when)
    second = new_run_folder(3, Shard(2, 4), tmp_path / "runs", now=when)
    assert first.name == "20260304T050607Z-seed3-shard2of4"
    assert second.name == "20260304T050607Z-seed3-shard2of4-2"
    assert first.is_dir() and second.is_dir()


#: the features program 0 of seed 0 draws at their weights, named so that a feature added
#: later (drawn after them) leaves it the program it is: one the stand-in backend finds
#: a missed-dce in, so a run saves an entry
CHEAP_FEATURES = "dtypes,function-shapes,hops,indexing,layout-default,layouts,overlapping-inputs,signatures"


@pytest.fixture
def cheap_run(tmp_path, monkeypatch):
    """``dcefuzz run`` in an empty current directory, compiling with the stand-in backend."""
    import fuzzer.campaign.config as config_mod  # the run command builds its Config from here

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(config_mod, "Config", functools.partial(config_mod.Config, backend=backends.FAITHFUL))

    def run(*args):
        return CliRunner().invoke(main, ["run", "--jobs", "0", "--programs", "1", "--no-shrink",
                                         "--seed", "0", "--features", CHEAP_FEATURES, *map(str, args)])
    return run


def test_a_run_without_folders_gets_a_new_one_and_leaves_the_cwd_corpus_alone(tmp_path, cheap_run):
    first = cheap_run()
    assert first.exit_code == 0, first.output
    second = cheap_run()
    assert second.exit_code == 0, second.output
    runs = sorted((tmp_path / ".dcefuzz" / "runs").iterdir())
    assert len(runs) == 2 and all(RUN_NAME.match(p.name.removesuffix("-2")) for p in runs)
    for folder, result in zip(runs, (first, second)):
        rel = str(folder.relative_to(tmp_path))
        assert f"campaign folder {rel}" in result.stderr
        assert f"campaign   {rel}" in result.stdout and f"corpus     {rel}/corpus" in result.stdout
        state = CampaignFolder(folder).load()
        # each run is a campaign of its own: the second neither repeats nor adds to the first
        assert (state.programs, state.next_index) == (1, 1)
        saved = [tmp_path / p for p in _saved(result)]
        assert saved and all(p.parent == folder / "corpus" and p.exists() for p in saved)
    assert not (tmp_path / "corpus").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == [".dcefuzz"]


def test_a_folder_that_holds_a_campaign_is_only_used_again_with_resume(tmp_path, cheap_run):
    assert cheap_run("--state", "mine").exit_code == 0
    before = (tmp_path / "mine" / "state.json").read_text()
    again = cheap_run("--state", "mine")
    assert again.exit_code == 2
    errors = [line for line in again.stderr.splitlines() if line.startswith("error:")]
    assert errors == ["error: mine already holds a campaign: pass --resume to carry on from it, "
                      "or choose another --state folder"]
    assert (tmp_path / "mine" / "state.json").read_text() == before
    resumed = cheap_run("--state", "mine", "--resume")
    assert resumed.exit_code == 0, resumed.output
    state = CampaignFolder(tmp_path / "mine").load()
    assert (state.programs, state.next_index) == (2, 2)
    assert not (tmp_path / ".dcefuzz").exists()


def test_corpus_and_state_can_each_be_put_elsewhere(tmp_path, cheap_run):
    r = cheap_run("--corpus", "found")
    assert r.exit_code == 0, r.output
    (run,) = (tmp_path / ".dcefuzz" / "runs").iterdir()
    names = {p.name for p in run.iterdir()}  # its state and logs, and no corpus
    assert {"state.json", "stats.jsonl"} <= names and "corpus" not in names
    assert names <= {"state.json", "stats.jsonl", "bugs.jsonl", "programs.jsonl", "torch.log"}
    saved = _saved(r)
    assert saved and all(Path(p).parent == Path("found") for p in saved)
    r = cheap_run("--state", "mine", "--corpus", "found")
    assert r.exit_code == 0, r.output
    assert CampaignFolder(tmp_path / "mine").load().programs == 1
    assert not (tmp_path / "mine" / "corpus").exists()


def test_resume_needs_the_folder_to_resume(tmp_path, cheap_run):
    r = cheap_run("--resume")
    assert r.exit_code == 2
    assert "--resume needs --state DIR" in r.output
    assert list(tmp_path.iterdir()) == []


def _saved(result):
    """The entry paths the run printed (``saved PATH`` lines, after the summary)."""
    return re.findall(r"^saved (\S+\.json)$", result.stdout, re.M)


def test_a_campaign_run_with_feedback_is_not_resumed(tmp_path):
    """dcefuzz drew programs with feedback until 2026-12: such a folder is refused on
    resume, saying so, and a blind one carries on."""
    for feedback in (True, False):
        folder = CampaignFolder(tmp_path / str(feedback))
        folder.save(CampaignState(seed=0, shard=Shard(), feedback=feedback))
        if feedback:
            with pytest.raises(BadState, match="feedback, which dcefuzz no longer has"):
                folder.resume(CampaignState(seed=0, shard=Shard()))
        else:
            assert folder.resume(CampaignState(seed=0, shard=Shard())).seed == 0
