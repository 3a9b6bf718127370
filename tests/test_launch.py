"""How a campaign is launched (``fuzzer.campaign.launch``): each decision on its own,
without the command line and without a compile."""


import pytest

from fuzzer.campaign import launch
from fuzzer.campaign.launch import Launch, PlanError
from fuzzer.limits import CACHE, PoolLimits


def test_ray_takes_neither_an_in_process_run_nor_a_device_list():
    with pytest.raises(PlanError, match="--jobs 0") as exc:
        launch.launch("auto", 0, None)
    assert exc.value.option is None
    with pytest.raises(PlanError, match="drop --devices"):
        launch.launch("auto", 2, "0,1")
    assert launch.launch("auto", 2, None) is Launch.RAY


def test_jobs_0_runs_in_process_unless_devices_ask_for_workers():
    assert launch.launch(None, 0, None) is Launch.IN_PROCESS
    assert launch.launch(None, 0, "0") is Launch.POOL
    assert launch.launch(None, 3, None) is Launch.POOL


def test_a_device_list_is_gpu_indices_or_refused():
    assert launch.gpus(None) is None
    assert launch.gpus(" 0, 1 ,") == ["0", "1"]
    for bad in ("", ",", "0,gpu1", "cuda:0"):
        with pytest.raises(PlanError, match="not a list of GPU indices") as exc:
            launch.gpus(bad)
        assert exc.value.option == "--devices"


def test_workers_on_listed_gpus_default_to_cuda():
    assert launch.pool_device(None, ["0"]) == "cuda"
    assert launch.pool_device("cuda:1", ["0"]) == "cuda:1"
    assert launch.pool_device(None, None) is None


def test_the_ray_device_is_the_clusters():
    assert launch.ray_device(None, 2) == "cuda"
    assert launch.ray_device(None, 0) == "cpu"
    assert launch.ray_device("cuda:1", 1) == "cuda:1"
    assert launch.ray_device("cpu", 0) == "cpu"
    with pytest.raises(PlanError, match="not cpu, cuda or cuda:N"):
        launch.ray_device("tpu", 4)
    with pytest.raises(PlanError, match="has no GPU") as exc:
        launch.ray_device("cuda", 0)
    assert exc.value.option == "--device"


def test_a_resume_needs_its_folder():
    with pytest.raises(PlanError, match="--resume needs --state"):
        launch.check_resume(True, None)
    launch.check_resume(True, "somewhere")
    launch.check_resume(False, None)


def test_cache_pairs_take_no_user_ops():
    with pytest.raises(PlanError, match="do not take --ops"):
        launch.check_cache_pairs(True, ["mine.py"])
    launch.check_cache_pairs(True, [])
    launch.check_cache_pairs(False, ["mine.py"])


def test_a_campaign_given_no_bound_runs_a_minute():
    assert launch.budget(None, None).seconds == launch.DEFAULT_SECONDS == 60.0
    assert launch.budget(None, 5).seconds is None and launch.budget(None, 5).programs == 5
    assert launch.budget(10.0, None).seconds == 10.0


def test_a_cache_pair_gets_the_longer_program_time():
    assert launch.program_seconds(None, False) == PoolLimits().program_seconds
    assert launch.program_seconds(None, True) == CACHE.program_seconds
    assert launch.program_seconds(7.0, True) == 7.0


def test_the_cores_are_shared_among_the_workers(monkeypatch):
    monkeypatch.setattr("os.cpu_count", lambda: 8)
    assert launch.workers(0, None) == 1
    assert launch.workers(3, ["0", "1"]) == 2
    assert launch.side_threads(launch.workers(3, None)) == 2
    assert launch.side_threads(16) == 1
    monkeypatch.setattr("os.cpu_count", lambda: None)
    assert launch.side_threads(1) == 1


def test_a_plan_gathers_the_decisions(monkeypatch):
    monkeypatch.setattr("os.cpu_count", lambda: 4)
    plan = launch.plan(Launch.POOL, 1, ["0", "1"], None, None, None, 512, cache_pairs=True)
    assert plan.workers == 2 and plan.side_threads == 2
    assert plan.limits.program_seconds == CACHE.program_seconds and plan.limits.memory_mb == 512
    assert plan.budget.seconds == launch.DEFAULT_SECONDS


def test_start_runs_the_campaign_where_the_plan_says(monkeypatch, tmp_path):
    from fuzzer.campaign.config import Config
    from fuzzer.campaign.state import Shard

    calls = []
    monkeypatch.setattr("fuzzer.campaign.pool.run_pool", lambda *a, **k: calls.append(("pool", k)) or "pool")
    monkeypatch.setattr("fuzzer.campaign.session.run_campaign", lambda *a, **k: calls.append(("here", k)) or "here")
    in_process = launch.plan(Launch.IN_PROCESS, 0, None, 1.0, None, None, 1024, False)
    pooled = launch.plan(Launch.POOL, 0, ["3"], 1.0, None, None, 1024, False)
    config = Config(seed=0, device="cpu", corpus_dir=str(tmp_path / "corpus"))
    assert launch.start(in_process, config, shard=Shard(), folder=None, resume=False) == "here"
    assert launch.start(pooled, config, shard=Shard(), folder=None, resume=False) == "pool"
    assert calls[1][1]["devices"] == ["3"] and calls[1][1]["jobs"] == 0
