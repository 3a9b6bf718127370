"""Workers as Ray actors (``fuzzer.campaign.ray_pool``), the parts that need no cluster:
how a dead actor's death is read off its fault handler's report, the host's queue of work
and what it reports, and a GPU worker seeing its own GPU as ``cuda``."""

import queue

from fuzzer.campaign import ray_pool
from fuzzer.campaign.config import Config
from fuzzer.limits import PoolLimits


def test_a_dead_actors_signal_is_read_off_its_report_on_this_node_only(tmp_path):
    report = tmp_path / "stack.txt"
    report.write_text("Fatal Python error: Segmentation fault\n\nCurrent thread ...\n")
    here = ray_pool.ActorProcess(actor=None)
    here.stack_path, here.pid = str(report), 1234
    here.died()
    assert here.exitcode == -11 and not here.is_alive()
    away = ray_pool.ActorProcess(actor=None)
    away.stack_path = str(report)  # pid -1: another node, whose file this is not
    away.died()
    assert away.exitcode is None and not away.is_alive()


def _host(handler):
    host = object.__new__(ray_pool.Host)  # its work alone: no actor, no torch settings
    host.handler, host.inbox, host.outbox = handler, queue.Queue(), queue.Queue()
    return host


def test_the_host_reports_what_the_work_sends_and_a_handler_that_raises_as_a_process_would_die():
    host = _host(lambda message, send: send(("done", message)) if message != "boom" else 1 / 0)
    for message in ("a", "b", "boom"):
        host.run(message)
    host._work()  # returns once the handler raised
    assert host.drain(0.1) == [("done", "a"), ("done", "b"), (ray_pool.RAISED, 1)]
    assert host.drain(0.01) == []


def test_a_gpu_worker_sees_its_own_gpu_as_cuda_and_the_stack_is_a_main_threads():
    assert ray_pool._on_first_gpu(Config(seed=1, device="cuda:3", corpus_dir="c")).device == "cuda"
    assert ray_pool._on_first_gpu(Config(seed=1, device="cpu", corpus_dir="c")).device == "cpu"
    assert 0 < ray_pool._main_stack_bytes() <= PoolLimits.max_stack_bytes
