"""The pool's handle on a worker (``fuzzer.campaign.handle``): a program handed over with
its deadline, what the worker was running when it died, and the end of a campaign; the
process and its pipe stood in, none started."""

import time
from types import SimpleNamespace

from helpers import case, prog

from fuzzer.campaign import handle
from fuzzer.campaign.config import Config
from fuzzer.campaign.entries import case_of
from fuzzer.campaign.messages import Run
from fuzzer.isolation import child
from fuzzer.limits import PoolLimits

CONFIG = Config(seed=1, device="cpu", corpus_dir="c")
LIMITS = PoolLimits(program_seconds=100.0)


class Pipe:
    def __init__(self):
        self.sent, self.closed = [], False

    def send(self, message):
        self.sent.append(message)

    def close(self):
        self.closed = True


class Process:
    def __init__(self, **kwargs):
        self.alive, self.killed, self.started = True, False, False

    def start(self):
        self.started = True

    def is_alive(self):
        return self.alive

    def kill(self):
        self.killed, self.alive = True, False

    def join(self, timeout=None):
        pass


CTX = SimpleNamespace(Pipe=lambda: (Pipe(), Pipe()), Process=Process)


def _worker(slot=0):
    return handle.WorkerHandle(CTX, CONFIG, LIMITS, slot, None)


def test_a_program_is_handed_over_with_the_time_left_and_a_deadline_cut_to_the_campaigns_end():
    w = _worker()
    assert w.process.started and not w.ready and w.index is None
    ends_at = time.monotonic() + 30
    drawn = SimpleNamespace(index=4, seed=99)
    w.assign(drawn, LIMITS, ends_at)
    (run,) = w.conn.sent
    assert isinstance(run, Run) and (run.index, run.seed) == (4, 99) and 0 < run.seconds_left <= 30
    assert w.deadline == ends_at  # the program's 100 s are cut to the campaign's end
    w.limit(LIMITS, None, extra=5.0)
    assert w.deadline > time.monotonic() + 100
    w.done()


def test_what_the_worker_was_running_is_its_candidate_else_its_program():
    w = _worker()
    w.assign(SimpleNamespace(index=2, seed=7), LIMITS, None)
    assert w.running() == case_of(7, CONFIG)
    candidate = case(prog({"x0": ("s0",)}, [("e_log", ["x0"], None, {"site": 0})]))
    w.candidate = candidate.to_json()
    assert w.running() == candidate
    w.release()
    assert (w.index, w.pseed, w.candidate, w.tried) == (None, None, None, None)
    w.done()


def test_at_the_end_busy_workers_are_killed_and_idle_ones_asked_to_stop(monkeypatch):
    monkeypatch.setattr(handle, "END_STOP_S", 0.0)
    busy, idle, starting = _worker(0), _worker(1), _worker(2)
    busy.ready = idle.ready = True
    busy.index = 3

    def obeys(timeout=None):
        if idle.conn.sent == [child.STOP]:
            idle.process.alive = False
    idle.process.join = obeys
    handle.stop_all([busy, idle, starting])
    assert busy.process.killed and starting.process.killed and not idle.process.killed
    assert idle.conn.sent == [child.STOP] and busy.conn.sent == [] and starting.conn.sent == []  # killed unasked
    assert all(w.conn.closed for w in (busy, idle, starting))


def test_the_local_launcher_shares_the_cores_among_its_slots():
    assert handle.Processes(CONFIG, LIMITS, jobs=2).slots == [None, None]
    gpus = handle.Processes(CONFIG, LIMITS, devices=["0", "1", "2"])
    assert gpus.slots == ["0", "1", "2"] and gpus.compile_threads >= 1
    w = _worker()
    assert handle.Processes(CONFIG, LIMITS).status([w]) == "1/1 workers"
    w.done()
