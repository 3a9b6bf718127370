"""Campaigns on Ray (a local instance, 2 CPUs) and merging shard runs.

Actors compile with ``aot_eager`` under the planted ``effect-dce`` fault (AOTAutograd
only, cheap, and a real bug class), except where a worker must die: ``test-segfault``
kills the process compiling a graph that calls ``e_log`` before any Inductor work.
"""

import sys

import backends
import pytest

from fuzzer.campaign.config import Budget, Config
from fuzzer.campaign.merge import merge
from fuzzer.campaign.pool import run_pool
from fuzzer.campaign.session import Session, run_campaign
from fuzzer.campaign.state import BadState, CampaignFolder, Shard
from fuzzer.corpus.store import load
from fuzzer.judge.contract import CRASH, TIMEOUT
from fuzzer.limits import PoolLimits
from fuzzer.program.generate import generate, program_seed

LIMITS = PoolLimits(program_seconds=60, memory_mb=4096, poll_seconds=0.1)
#: seed 2's programs 0 and 1 both call e_log (``test-segfault`` kills both)
DEADLY_SEED = 2


@pytest.fixture(scope="module")
def cluster():
    ray = pytest.importorskip("ray")
    from fuzzer.campaign import ray_pool

    seconds = ray_pool.connect("local", num_cpus=2)
    yield seconds
    ray.shutdown()


def _config(tmp_path, name, **kw):
    base = {"seed": 0, "device": "cpu", "corpus_dir": str(tmp_path / name / "corpus"), "backend": "aot_eager",
            "fault": "effect-dce", "shrink": False, "triage": False}
    base.update(kw)
    return Config(**base)


def _ray(config, folder, programs, resume=False, limits=LIMITS):
    from fuzzer.campaign.ray_pool import Actors

    session = Session(config, Budget(programs=programs), folder=CampaignFolder(folder), resume=resume,
                      log=lambda line: None)
    return run_pool(session, limits, launcher=Actors(config, limits, jobs=2))


def _signatures(corpus):
    return sorted((e.signature.text, e.hits) for e in (load(p) for p in corpus.glob("*.json")))


@pytest.mark.compile
def test_ray_runs_the_same_programs_to_the_same_signatures_as_the_local_pool(cluster, tmp_path):
    programs = 6
    local = _config(tmp_path, "local")
    on_ray = _config(tmp_path, "ray")
    run_pool(Session(local, Budget(programs=programs), folder=CampaignFolder(tmp_path / "local"),
                     log=lambda line: None), LIMITS, jobs=2)
    stats = _ray(on_ray, tmp_path / "ray", programs)
    assert stats.programs == programs
    found = _signatures(tmp_path / "ray" / "corpus")
    assert found and found == _signatures(tmp_path / "local" / "corpus")
    assert CampaignFolder(tmp_path / "ray").load().next_index == programs


@pytest.mark.compile
@pytest.mark.parametrize("fault, kind, needle, where", [
    ("test-segfault", CRASH, "SIGSEGV", "_segfault (fuzzer/faults/process.py:"),
    ("test-hang", TIMEOUT, "exceeded its time limit", "_hang (fuzzer/faults/process.py:"),
])
def test_an_actor_that_dies_or_hangs_is_a_finding_and_is_replaced(cluster, tmp_path, fault, kind, needle, where):
    config = _config(tmp_path, "casualty", seed=DEADLY_SEED, backend="inductor", fault=fault)
    deadly = [i for i in range(3) if any(s.form == "e_log" for s in generate(program_seed(DEADLY_SEED, i)).program.body)]
    assert deadly[:2] == [0, 1]
    limits = PoolLimits(program_seconds=6, memory_mb=4096, poll_seconds=0.1)
    stats = _ray(config, tmp_path / "casualty", 2, limits=limits)
    state = CampaignFolder(tmp_path / "casualty").load()
    assert stats.programs == 2 and state.findings[kind] == 2 and state.next_index == 2
    casualties = [e for e in (load(p) for p in (tmp_path / "casualty" / "corpus").glob("*.json")) if e.kind == kind]
    assert len(casualties) == 1 and casualties[0].hits == 2          # one death at one place: one bug
    assert needle in casualties[0].detail[0] and casualties[0].detail[1].startswith(f"  at {where}")


@pytest.mark.compile
def test_resume_on_ray_continues_without_repeats(cluster, tmp_path):
    config = _config(tmp_path, "resume")
    _ray(config, tmp_path / "resume", 3)
    _ray(config, tmp_path / "resume", 3, resume=True)
    state = CampaignFolder(tmp_path / "resume").load()
    assert state.programs == 6 and state.next_index == 6 and not state.done_above
    assert sum(state.statuses.values()) == 6


@pytest.mark.compile
def test_merging_two_shards_equals_one_run_over_both(tmp_path):
    def run(name, shard, programs, seed=3):
        config = Config(seed=seed, device="cpu", corpus_dir=str(tmp_path / name / "corpus"), backend=backends.DROP_LOG,
                        triage=False)  # shrunk: the shards' findings of one bug meet in one signature
        run_campaign(Session(config, Budget(programs=programs), shard=shard, folder=CampaignFolder(tmp_path / name),
                             log=lambda line: None))
    run("whole", Shard(), 4)   # programs 1 and 2 call e_log: one in each shard
    run("one", Shard(1, 2), 2)
    run("two", Shard(2, 2), 2)
    merged = merge(tmp_path / "merged", [tmp_path / "one", tmp_path / "two"])
    whole = CampaignFolder(tmp_path / "whole").load()
    state = CampaignFolder(tmp_path / "merged").load()
    assert (state.programs, state.next_index, state.done_above) == (whole.programs, whole.next_index, [])
    assert state.findings == whole.findings and state.statuses == whole.statuses
    assert (state.saved, state.repeats) == (whole.saved, whole.repeats)
    assert _signatures(tmp_path / "merged" / "corpus") == _signatures(tmp_path / "whole" / "corpus")
    assert merged.merged_hits >= 1, "a bug both shards found is one entry with both hits"
    with pytest.raises(BadState, match="already holds a campaign"):
        merge(tmp_path / "merged", [tmp_path / "one"])
    with pytest.raises(BadState, match="ran programs another folder ran"):
        merge(tmp_path / "twice", [tmp_path / "one", tmp_path / "one"])
    run("other", Shard(2, 2), 1, seed=4)
    with pytest.raises(BadState, match="only shards of one campaign"):
        merge(tmp_path / "mixed", [tmp_path / "one", tmp_path / "other"])


def test_ray_without_the_extra_is_a_one_line_error(tmp_path, monkeypatch):
    from click.testing import CliRunner

    from fuzzer.cli import main

    monkeypatch.setitem(sys.modules, "ray", None)  # import ray fails, as where it is not installed
    result = CliRunner().invoke(main, ["run", "--ray", "--programs", "1", "--state", str(tmp_path / "c")])
    assert result.exit_code == 2
    assert "error: --ray needs Ray" in result.output and "pip install -e '.[ray]'" in result.output


@pytest.mark.parametrize("args, needle", [
    (["--jobs", "0"], "--ray runs its workers as actors"),
    (["--devices", "0"], "--ray takes its GPUs from the cluster"),
])
def test_ray_refuses_what_it_cannot_honour(tmp_path, args, needle):
    from click.testing import CliRunner

    from fuzzer.cli import main

    result = CliRunner().invoke(main, ["run", "--ray", "local", "--programs", "1", *args,
                                       "--state", str(tmp_path / "c")])
    assert result.exit_code == 2 and needle in result.output, result.output


def test_merge_command_prints_the_merged_totals(tmp_path):
    from click.testing import CliRunner

    from fuzzer.cli import main

    for name, shard in (("a", Shard(1, 2)), ("b", Shard(2, 2))):
        config = Config(seed=5, device="cpu", corpus_dir=str(tmp_path / name / "corpus"),
                        backend=backends.FAITHFUL, shrink=False, triage=False)
        run_campaign(Session(config, Budget(programs=1), shard=shard, folder=CampaignFolder(tmp_path / name),
                             log=lambda line: None))
    result = CliRunner().invoke(main, ["merge", str(tmp_path / "out"), str(tmp_path / "a"), str(tmp_path / "b")])
    assert result.exit_code == 0, result.output
    assert "2 programs, next program index 2" in result.output
    again = CliRunner().invoke(main, ["merge", str(tmp_path / "out"), str(tmp_path / "a")])
    assert again.exit_code == 2 and "already holds a campaign" in again.output
    stats = CliRunner().invoke(main, ["stats", str(tmp_path / "out")])
    assert stats.exit_code == 0, stats.output
