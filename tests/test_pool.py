"""The worker pool survives segfaults, hangs and runaway memory without losing a program.

Each test-only fault (``fuzzer.faults.process``) kills or stalls the compiling
process whenever a graph calls ``e_log``; the campaign must still finish its budget,
count every program once, and save the casualties as crash/timeout findings.
"""

import json
import os
import re
import signal
import subprocess
import sys
import time

import pytest
from click.testing import CliRunner

from fuzzer.campaign.config import Budget, Config
from fuzzer.campaign.pool import PoolLimits, run_pool
from fuzzer.campaign.session import Session
from fuzzer.campaign.state import CampaignFolder
from fuzzer.cli import main
from fuzzer.corpus.store import load
from fuzzer.isolation import stacks
from fuzzer.isolation.deaths import Death, probe
from fuzzer.isolation.process import death_of, died_detail, timeout_detail
from fuzzer.judge.contract import CRASH, EFFECT_LOG, TIMEOUT, Divergence, bug_class
from fuzzer.limits import ISOLATION, SHRINK, OracleBudget
from fuzzer.program.generate import generate, program_seed
from fuzzer.reduce.casualty import divergence_of
from fuzzer.render import repro

pytestmark = pytest.mark.compile

#: programs 0 and 2 of seed 0 call e_log, 1 does not: two deaths with a clean program between
PROGRAMS = 3
LIMITS = PoolLimits(program_seconds=20, memory_mb=3072, poll_seconds=0.1)
#: the hang must outlast a short limit, and the clean program between the hangs must not:
#: a fresh worker compiles it cold, which took over 8 s on two loaded cores once
HANG_LIMITS = PoolLimits(program_seconds=12, memory_mb=3072, poll_seconds=0.1)
#: the runaway allocation must meet the cap, never the time limit first. How fast a
#: process gains memory is the host's: past the pages a virtual machine has backed, a
#: worker here grew at 60 MB/s, so a 3 GiB cap under a 20 s limit was a race that CI
#: lost. A cap at about three times a worker's ~400 MiB, and time to spare
ALLOC_LIMITS = PoolLimits(program_seconds=120, memory_mb=1280, poll_seconds=0.1)


def _campaign(tmp_path, fault, limits=LIMITS, programs=PROGRAMS, shrink=False, shrink_budget=None,
              triage=False):
    config = Config(seed=0, device="cpu", corpus_dir=str(tmp_path / "corpus"), fault=fault, shrink=shrink,
                    shrink_budget=shrink_budget or SHRINK.budget, triage=triage)
    folder = CampaignFolder(tmp_path / "state")
    stats = run_pool(Session(config, Budget(programs=programs), folder=folder, log=lambda line: None), limits,
                     jobs=1)
    return stats, folder.load(), [load(p) for p in (tmp_path / "corpus").glob("*.json")]


@pytest.mark.parametrize("fault, kind, needle, where", [
    ("test-segfault", CRASH, "SIGSEGV", "_segfault (fuzzer/faults/process.py:"),
    ("test-hang", TIMEOUT, "exceeded", "_hang (fuzzer/faults/process.py:"),
    ("test-alloc", CRASH, "memory cap", "_alloc (fuzzer/faults/process.py:"),
    # glibc's words before the abort, read from the worker's own stderr
    ("test-heap-abort", CRASH, "process died: heap corruption", "_heap_abort (fuzzer/faults/process.py:"),
])
def test_campaign_outlives_the_fault_and_loses_no_program(tmp_path, fault, kind, needle, where):
    limits = {"test-hang": HANG_LIMITS, "test-alloc": ALLOC_LIMITS}.get(fault, LIMITS)
    stats, state, entries = _campaign(tmp_path, fault, limits)
    assert stats.programs == PROGRAMS
    assert (tmp_path / "state" / "torch.log").is_file()  # the workers' standard error
    assert state.programs == PROGRAMS and state.next_index == PROGRAMS and not state.done_above
    assert sum(state.statuses.values()) == PROGRAMS
    deadly = [i for i in range(PROGRAMS)
              if any(s.form == "e_log" for s in generate(program_seed(0, i)).program.body)]
    assert len(deadly) >= 2 and state.findings[kind] == len(deadly)
    # one death at one place is one bug: the first casualty is saved, later ones are hits
    casualties = [e for e in entries if e.kind == kind]
    assert len(casualties) == 1, [e.id for e in casualties]
    e = casualties[0]
    assert e.hits == len(deadly) and state.repeats == len(deadly) - 1
    assert needle in e.detail[0] and e.fault == fault
    # where the worker was: the fault's own frame, from the stack it dumped (asked
    # for before the kill when it hung or outgrew the cap)
    assert e.detail[1].startswith(f"  at {where}"), e.detail
    # the casualty's program is the one the stream says: regenerated from its seed
    assert e.seed == program_seed(0, deadly[0]) and e.case == generate(e.seed)


def test_an_error_of_dcefuzz_in_a_worker_is_counted_not_a_crash(tmp_path):
    """The worker's judge raises: the program is an internal error, and neither the
    worker's death (it does not die) nor the program is a finding."""
    stats, state, entries = _campaign(tmp_path, "test-internal-error", programs=2)
    assert stats.programs == 2 and state.statuses == {"internal-error": 2} and not state.findings
    assert state.internal == {"trial": 2} and entries == []
    assert (tmp_path / "state" / "internal-errors.jsonl").exists()


def test_a_worker_whose_device_is_lost_is_replaced_at_once(tmp_path):
    """A CUDA kernel that faulted leaves the process's context unusable: every later
    program of that worker would raise the same error, be counted, and test nothing
    (500 programs of a reduce-overhead campaign on an H100 did, 2026-12-06). The
    program is dcefuzz's own error, and its worker is replaced before the next one."""
    limits = PoolLimits(program_seconds=60, poll_seconds=0.1)   # no recycling by count
    stats, state, entries = _campaign(tmp_path, "test-device-lost", limits, programs=2)
    assert stats.programs == 2 and state.statuses == {"internal-error": 2} and entries == []
    last = json.loads((tmp_path / "state" / "stats.jsonl").read_text().splitlines()[-1])
    assert last["devices_lost"] == 2 and last["workers_replaced"] == 2   # one fresh worker per program
    assert "2 of them dcefuzz's own errors, tested by nothing" in stats.summary()
    assert stats.mostly_internal


def test_a_crash_is_shrunk_in_child_processes_and_replaces_its_unshrunk_entry(tmp_path):
    # program 0 of seed 0 calls e_log, so the fault kills the worker compiling it
    assert any(s.form == "e_log" for s in generate(program_seed(0, 0)).program.body)
    limits = PoolLimits(program_seconds=20, memory_mb=3072, poll_seconds=0.1,
                        casualty_shrink=OracleBudget(oracle_calls=8, seconds=150), casualty_queue=1)
    stats, state, entries = _campaign(tmp_path, "test-segfault", limits, programs=1, shrink=True)
    assert state.programs == 1 and state.findings == {CRASH: 1}
    assert len(entries) == 1, [e.id for e in entries]
    e = entries[0]
    original = generate(program_seed(0, 0))
    assert e.kind == CRASH and "SIGSEGV" in e.detail[0] and "_segfault" in e.detail[1]
    assert e.shrink and e.shrink["confirmed"] == "fresh process"
    assert e.shrink["original_statements"] == len(original.program.body)
    assert e.statements < len(original.program.body)
    assert any(s.form == "e_log" for s in e.case.program.body)  # what the fault needs, kept
    # the unshrunk entry is gone, script and all; nothing partial is left
    names = sorted(p.name for p in (tmp_path / "corpus").iterdir())
    assert names == [f"{e.id}.json", f"{e.id}.py"]
    assert stats.saved == [str(tmp_path / "corpus" / f"{e.id}.json")]


def test_a_shrink_candidate_that_kills_the_worker_is_the_crash_and_the_finding_is_kept(tmp_path):
    """The worker dies while shrinking a finding, on a candidate: that candidate is the
    crash (the program itself does not die), and the finding is saved as confirmed."""
    fault = "test-candidate-segfault"
    original = generate(program_seed(0, 0))  # calls e_log among other custom ops: found, not killed
    # casualty_queue=0: the crash is saved as the worker met it, not shrunk further
    limits = PoolLimits(program_seconds=60, memory_mb=3072, poll_seconds=0.1, casualty_queue=0)
    _, state, entries = _campaign(tmp_path, fault, limits, programs=1, shrink=True,
                                  shrink_budget=OracleBudget(40, 90))
    assert state.programs == 1 and state.findings == {EFFECT_LOG: 1, CRASH: 1}, state.findings
    by_kind = {e.kind: e for e in entries}
    assert sorted(by_kind) == [CRASH, EFFECT_LOG], [e.id for e in entries]
    found, crash = by_kind[EFFECT_LOG], by_kind[CRASH]
    # the finding the worker was shrinking: unshrunk, as the trial confirmed it
    assert found.case == original and found.shrink is None and found.seed == program_seed(0, 0)
    # the crash is the candidate that was running, smaller than the program
    assert crash.case != original and crash.statements < len(original.program.body)
    assert "SIGSEGV" in crash.detail[0] and crash.fault == fault and crash.seed == program_seed(0, 0)
    death = probe(crash.case, "cpu", fault=fault)
    assert death.kind == CRASH and death.detail == died_detail(-signal.SIGSEGV) and death.after_eager
    # blaming the program would have saved a crash that replays FIXED
    assert probe(original, "cpu", fault=fault).kind is None


def test_a_worker_that_dies_while_triaging_keeps_its_finding_and_counts_no_crash(tmp_path):
    """Triage compiles under switches the user never throws: a death there is not a
    finding of the program, and the finding it was triaging is saved, untriaged."""
    fault = "test-triage-segfault"  # drops e_log calls; dies with reorder_for_peak_memory off
    limits = PoolLimits(program_seconds=60, memory_mb=3072, poll_seconds=0.1)
    index = next(i for i in range(20) if any(s.form == "e_log" for s in generate(program_seed(0, i)).program.body))
    lines = []
    config = Config(seed=0, device="cpu", corpus_dir=str(tmp_path / "corpus"), fault=fault, shrink=False)
    folder = CampaignFolder(tmp_path / "state")
    run_pool(Session(config, Budget(programs=index + 1), folder=folder, log=lines.append), limits, jobs=1)
    state, entries = folder.load(), [load(p) for p in (tmp_path / "corpus").glob("*.json")]
    assert state.programs == index + 1 and CRASH not in state.findings, state.findings
    dropped = [e for e in entries if e.kind == EFFECT_LOG]
    assert dropped and all(e.culprit is None for e in dropped)
    assert any("while triaging" in line and "saved untriaged" in line for line in lines), lines


#: the --time budget of the deadline test: long enough for workers to start and a hang
#: to pass its program time limit, short enough to stop a campaign in full flight
DEADLINE_TEST_S = 20
#: seconds a ``python -m fuzzer`` process may take to import torch before its campaign
#: (and its clock) starts
STARTUP_ALLOWANCE_S = 20


def _cli_run(tmp_path, *args, within: float) -> subprocess.CompletedProcess:
    """``dcefuzz run`` under the hang fault; fails the test if it outlives ``within``."""
    command = [sys.executable, "-m", "fuzzer", "run", "--corpus", str(tmp_path / "corpus"),
               "--state", str(tmp_path / "state"), "--inject-fault", "test-hang",
               "--program-timeout", "5s", *args]
    try:
        return subprocess.run(command, capture_output=True, text=True, timeout=within, check=False)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{' '.join(args)}: still running after {within:.0f}s")


def _done(state) -> set[int]:
    """The program indices a (1/1 shard) campaign state says have run."""
    return set(range(state.next_index)) | set(state.done_above)


def test_a_campaign_ends_on_time_whatever_hangs_and_resumes_what_it_stopped(tmp_path):
    """Programs that call e_log hang in the compiler: the campaign still ends within its
    --time plus the documented grace, saves the hangs as timeouts, does not count the
    programs it stopped, and a resumed campaign runs them."""
    limit = DEADLINE_TEST_S + PoolLimits().end_grace_seconds + STARTUP_ALLOWANCE_S
    start = time.monotonic()
    r = _cli_run(tmp_path, "--time", f"{DEADLINE_TEST_S}s", "--jobs", "2", within=limit + 60)
    took = time.monotonic() - start
    assert r.returncode == 0, r.stderr
    assert took <= limit, f"{took:.0f}s for --time {DEADLINE_TEST_S}s"
    timeouts = [load(p) for p in (tmp_path / "corpus").glob("timeout-*.json")]
    assert timeouts, r.stderr
    assert all(e.fault == "test-hang" and "exceeded" in e.detail[0] for e in timeouts)
    state = CampaignFolder(tmp_path / "state").load()
    stopped = int(re.search(r"^stopped\s+(\d+)", r.stdout, re.MULTILINE)[1])
    done = _done(state)
    # every counted program is done, and the programs started were the first ones of the
    # stream: those missing from it are the ones stopped at the deadline
    assert len(done) == state.programs and done <= set(range(state.programs + stopped))
    first_left = min(set(range(state.programs + stopped + 1)) - done)
    r = _cli_run(tmp_path, "--resume", "--programs", "1", "--no-shrink", within=120)
    assert r.returncode == 0, r.stderr
    resumed = CampaignFolder(tmp_path / "state").load()
    assert resumed.programs == state.programs + 1 and _done(resumed) == done | {first_left}


def test_workers_are_recycled_without_losing_a_program(tmp_path):
    limits = PoolLimits(program_seconds=60, poll_seconds=0.1, recycle_after=1)
    stats, state, _ = _campaign(tmp_path, None, limits, programs=2)
    assert stats.programs == 2 and state.next_index == 2 and not state.done_above
    last = json.loads((tmp_path / "state" / "stats.jsonl").read_text().splitlines()[-1])
    assert last["workers_replaced"] == 2   # one fresh worker per program
    assert last["workers_alive"] == 0      # all stopped at the end
    # each program's line has the worker's own clock: its trial, and nothing after it (no finding)
    lines = [json.loads(ln) for ln in (tmp_path / "state" / "programs.jsonl").read_text().splitlines()]
    assert [(ln["trial"] > 0, ln["after_trial"]) for ln in lines if not ln["bugs"]] == [(True, 0.0)] * 2


SHAPE_ENV_SCRIPT = """
import gc, torch
from torch.fx.experimental.symbolic_shapes import ShapeEnv
from fuzzer.judge.execute import fresh_compile_state
for n in range(4):
    fresh_compile_state()
    namespace = {"torch": torch}   # as fuzzer.program.codegen builds programs: own globals
    exec("def program(x):\\n    return (torch.sin(x) * 2,)\\n", namespace)
    torch.compile(namespace["program"], dynamic=True, backend="eager")(torch.ones(n + 2, 3))
fresh_compile_state()
gc.collect()
gc.collect()   # the first pass runs dynamo's cleanup callbacks; the second frees what they let go
print(sum(1 for o in gc.get_objects() if type(o) is ShapeEnv))
"""


FREEZE_SCRIPT = """
import gc, sys, weakref, torch
from fuzzer.judge.execute import fresh_compile_state
from fuzzer.campaign.worker import freeze_heap
graphs = []
def backend(gm, example_inputs):
    graphs.append(weakref.ref(gm))   # an FX graph module is a cycle (graph <-> owning module)
    return gm.forward
def compile_one(n):
    namespace = {"torch": torch}
    exec("def program(x):\\n    return (torch.sin(x) * 2,)\\n", namespace)
    torch.compile(namespace["program"], dynamic=True, backend=backend)(torch.ones(n + 2, 3))
compile_one(0)
freeze_heap() if sys.argv[1] == "worker" else gc.freeze()
frozen = gc.get_freeze_count()
for n in range(1, 3):
    fresh_compile_state()
    compile_one(n)
fresh_compile_state()
gc.collect()
print(frozen, sum(1 for g in graphs if g() is not None))
"""


def _frozen_and_graphs_alive(how: str) -> tuple[int, int]:
    out = subprocess.run([sys.executable, "-c", FREEZE_SCRIPT, how], capture_output=True, text=True,
                         check=True, timeout=300)
    frozen, alive = map(int, out.stdout.split())
    return frozen, alive


def test_a_worker_freezes_its_heap_without_pinning_a_programs_graph():
    """What a worker freezes is never collected, so it freezes after a reset and a full
    collection: the first program's graph must still go, as it would not after a bare
    ``gc.freeze`` while the program's compiled code is alive."""
    frozen, alive = _frozen_and_graphs_alive("worker")
    assert frozen > 100_000 and alive == 0
    assert _frozen_and_graphs_alive("bare")[1] == 1


def test_the_end_of_a_campaign_finishes_or_leaves_each_casualty_shrink_never_aborts_one(monkeypatch):
    """A shrink that has started is let finish; one that has not stays queued (unshrunk)."""
    import fuzzer.campaign.casualties as casualties
    from fuzzer.isolation.process import Aborted

    from fuzzer.reduce.casualty import Reduced

    class Casualty:
        """An entry as the shrinker sees one: its reduced form is made by ``reduced``."""

        def __init__(self, n):
            self.n, self.detail = n, ["[crash] program: process died: SIGSEGV"]

        def reduced(self, case, divergences, shrink, notes):
            return f"reduced {self.n}"

    def slow_shrink(entry, limits, budget=None, stop=None):
        time.sleep(0.05)
        if stop.is_set():
            raise Aborted()
        return Reduced(case=None, divergences=[], shrink={})

    monkeypatch.setattr(casualties, "shrink_casualty", slow_shrink)
    limits = PoolLimits(poll_seconds=0.001)
    for attempt in range(20):
        shrinker = casualties.CasualtyShrinker(None, limits, log=lambda line: None)
        if attempt % 2:
            time.sleep(0.01)  # the thread is waiting for work, not starting
        entry = Casualty(attempt)
        assert shrinker.submit(entry, f"path{attempt}")
        shrinker.finish(until=None)
        finished = [shrinker.done.get_nowait() for _ in range(shrinker.done.qsize())]
        assert finished in ([], [casualties.Shrunk(entry, f"path{attempt}", f"reduced {attempt}")])
        assert len(finished) + shrinker.todo.qsize() == 1


def _casualty_entry():
    """A crash entry as a campaign saves a casualty (its program's death, detail line)."""
    from fuzzer.corpus.entry import Entry, Origin

    case = generate(program_seed(0, 0))
    return Entry.build(CRASH, case, [Divergence(CRASH, 0, "process", "process died: SIGSEGV")],
                       Origin(seed=0, device="cpu", backend="inductor"))


def test_a_casualty_that_does_not_die_again_in_a_fresh_process_is_withdrawn(monkeypatch, tmp_path):
    """A worker that ran programs and candidates before may have been corrupted by one
    of them: a casualty nothing smaller died like is run on its own, and one that does
    not die again leaves the corpus (for ``unconfirmed/``) and the findings' counts;
    one that dies again stays."""
    import fuzzer.campaign.casualties as casualties
    from fuzzer.corpus import store
    from fuzzer.reduce import casualty

    entry = _casualty_entry()
    config = Config(seed=0, device="cpu", corpus_dir=str(tmp_path / "corpus"))
    for dies, kept in ((True, True), (False, False)):
        folder = CampaignFolder(tmp_path / f"state-{dies}")
        session = Session(config, Budget(programs=1), folder=folder)
        path, _ = store.save(entry, config.corpus_dir)
        session.stats.findings[entry.kind] += 1
        monkeypatch.setattr(casualties, "shrink_casualty", lambda *a, **k: None)
        deaths = iter([Death(None, "survived"), Death(entry.kind, entry.detail[0].split(": ", 1)[1]) if dies
                       else Death(None, "survived")] + [Death(None, "survived")] * 2)
        monkeypatch.setattr(casualty, "probe", lambda *a, **k: next(deaths))
        shrinker = casualties.CasualtyShrinker(config, PoolLimits(poll_seconds=0.001), log=lambda line: None)
        assert shrinker.submit(entry, str(path))
        deadline = time.monotonic() + 30
        while shrinker.done.empty() and time.monotonic() < deadline:
            time.sleep(0.01)
        shrinker.finish(until=None)
        shrinker.adopt(session)
        assert path.exists() is kept and (folder.unconfirmed / path.name).exists() is not kept
        assert session.stats.findings[entry.kind] == (1 if kept else 0)
        store.remove(path)


def test_the_deadline_aborts_the_casualty_shrink_in_progress_and_cuts_its_budget(monkeypatch):
    """At a time budget's end a started shrink is aborted, not waited for (the entry
    stays saved unshrunk); each shrink's budget is cut to the time left."""
    import threading

    import fuzzer.campaign.casualties as casualties
    from fuzzer.isolation.process import Aborted

    started, budgets = threading.Event(), []

    def endless_shrink(entry, limits, budget=None, stop=None):
        budgets.append(budget)
        started.set()
        while not stop.wait(0.01):
            pass
        raise Aborted()

    monkeypatch.setattr(casualties, "shrink_casualty", endless_shrink)
    limits = PoolLimits(poll_seconds=0.001, casualty_shrink=OracleBudget(oracle_calls=60, seconds=300))
    shrinker = casualties.CasualtyShrinker(None, limits, log=lambda line: None, seconds_left=lambda: 7.0)
    assert shrinker.submit("entry", "path")
    assert started.wait(10)
    shrinker.finish(until=time.monotonic())   # waited for, this would never return
    assert not shrinker.thread.is_alive()
    assert shrinker.done.get_nowait() == casualties.Shrunk("entry", "path", None,
                                                          "its shrink stopped at the end of the campaign")
    assert budgets[0].seconds == 7.0 and budgets[0].oracle_calls == limits.casualty_shrink.oracle_calls


def test_a_reset_lets_old_shape_environments_go():
    """fresh_compile_state breaks the cycle through C++ that a dynamic compile leaves
    (ShapeEnv.tracked_fakes -> FakeTensor -> C++ sizes -> SymNode -> ShapeEnv).

    In a fresh process, as in a worker: a test runner's own capture of warnings and
    logs may hold on to compile-time objects by itself.
    """
    out = subprocess.run([sys.executable, "-c", SHAPE_ENV_SCRIPT], capture_output=True, text=True,
                         check=True, timeout=300)
    assert int(out.stdout.split()[-1]) <= 1   # four compiles; at most the last one may linger


DUMP = """\
Fatal Python error: Segmentation fault

Thread 0x00007f0000000001 (most recent call first):
  File "/usr/lib/python3.11/threading.py", line 327 in wait
  File "/usr/lib/python3.11/threading.py", line 629 in wait
  File "/usr/lib/python3.11/concurrent/futures/thread.py", line 81 in _worker
  File "/usr/lib/python3.11/threading.py", line 982 in run
  File "/usr/lib/python3.11/threading.py", line 1045 in _bootstrap_inner
  File "/usr/lib/python3.11/threading.py", line 1002 in _bootstrap

Current thread 0x00007f0000000002 (most recent call first):
  File "/x/site-packages/torch/_inductor/scheduler.py", line 2210 in fuse_nodes
  File "/x/site-packages/torch/_inductor/graph.py", line 901 in codegen
  File "/x/fuzzer/worker.py", line 80 in serve
"""


def test_the_stack_read_back_is_the_main_threads_innermost_first(tmp_path):
    (tmp_path / "w.stack").write_text(DUMP)
    frames = stacks.read(tmp_path / "w.stack")
    assert frames == ["fuse_nodes (torch/_inductor/scheduler.py:2210)", "codegen (torch/_inductor/graph.py:901)",
                      "serve (worker.py:80)"]
    # no line: stable across edits
    assert stacks.innermost(frames) == stacks.torch_frame(frames) == "fuse_nodes (torch/_inductor/scheduler.py)"
    assert stacks.read(tmp_path / "missing.stack") == [] and stacks.innermost([]) == ""


def test_a_casualty_is_placed_at_torchs_innermost_frame_never_at_dcefuzzs(tmp_path):
    """A corrupted heap aborts wherever the next allocation is, often in dcefuzz's own
    code making the next inputs: the title (and the bug's key) is torch's innermost
    frame, kept even when it lies deeper than the frames a stack keeps."""
    from fuzzer.campaign.pool import _title

    ours = os.path.join(os.path.dirname(stacks.__file__), "..", "program", "sizes.py")
    deep = [f'  File "/x/site-packages/sympy/core/f{i}.py", line {i} in f{i}' for i in range(ISOLATION.frames_kept)]
    dump = ("Current thread 0x1 (most recent call first):\n"
            f'  File "{os.path.abspath(ours)}", line 78 in evaluate\n' + "\n".join(deep) + "\n"
            '  File "/x/site-packages/torch/_inductor/sizevars.py", line 400 in size_hint\n'
            '  File "/x/site-packages/torch/_inductor/graph.py", line 901 in codegen\n')
    (tmp_path / "w.stack").write_text(dump)
    frames = stacks.read(tmp_path / "w.stack")
    assert frames[0] == "evaluate (fuzzer/program/sizes.py:78)" and len(frames) == ISOLATION.frames_kept + 2
    assert stacks.innermost(frames) == "evaluate (fuzzer/program/sizes.py)"
    assert stacks.torch_frame(frames) == "size_hint (torch/_inductor/sizevars.py)"
    assert _title(CRASH, "process died: SIGABRT", frames) == \
        ("crash", "process died: SIGABRT", "size_hint (torch/_inductor/sizevars.py)")
    # a stack with no frame of torch says nothing of the cause: no title, no repeat
    assert _title(CRASH, "process died: SIGABRT", frames[:3]) is None
    # frames read before they said whose file they are (``sizes.py:78``) are no torch's
    assert stacks.torch_frame(["evaluate (sizes.py:78)", "fuse_nodes (scheduler.py:2210)"]) is None


def test_a_crash_repro_script_judges_its_child_and_shows_where_it_died(tmp_path):
    from fuzzer.campaign.pool import _process_entry
    from fuzzer.isolation.process import died_detail as died

    config = Config(seed=0, device="cpu", corpus_dir=str(tmp_path))
    entry = _process_entry(CRASH, died(-signal.SIGSEGV), generate(program_seed(0, 0)), program_seed(0, 0),
                           config)
    script = repro.render(entry)
    marker = 'open(done, "w").close()\n'
    assert marker in script
    kill = "__import__('os').kill(__import__('os').getpid(), __import__('signal').{})\n"

    def variant(name, text):
        path = tmp_path / f"{name}.py"
        path.write_text(text)
        return subprocess.run([sys.executable, str(path), "cpu"], capture_output=True, text=True,
                              timeout=300)

    ok = variant("healthy", script)
    assert ok.returncode == 0 and "does not reproduce" in ok.stdout, ok.stdout + ok.stderr
    # the recorded death, once eager is done: reproduces, with the stack where it died
    bad = variant("deadly", script.replace(marker, marker + "        " + kill.format("SIGSEGV")))
    assert bad.returncode == 1 and "REPRODUCES" in bad.stdout, bad.stdout + bad.stderr
    assert "Fatal Python error: Segmentation fault" in bad.stderr and "in judge" in bad.stderr
    # another death is neither this bug nor fixed: the script cannot judge
    other = variant("other", script.replace(marker, marker + "        " + kill.format("SIGABRT")))
    assert other.returncode == 125 and "cannot judge: looking for SIGSEGV" in other.stdout, other.stdout
    # a death before eager is done says nothing about the compiler
    before_eager = "    eager_fn = _through(step, program)\n"
    assert before_eager in script
    early = variant("early", script.replace(before_eager, "    " + kill.format("SIGSEGV") + before_eager))
    assert early.returncode == 125, early.stdout + early.stderr


def test_devices_give_each_worker_its_own_gpu_and_bad_lists_are_refused(tmp_path):
    import multiprocessing

    from fuzzer.campaign.handle import WorkerHandle as _Worker

    config = Config(seed=0, device="cpu", corpus_dir=str(tmp_path))
    before = os.environ.get("CUDA_VISIBLE_DEVICES")
    w = _Worker(multiprocessing.get_context("spawn"), config, LIMITS, 0, "3")
    try:
        # the child's environment is readable once it has exec'd the interpreter
        assert w.conn.poll(LIMITS.start_seconds), "the worker never reported"
        with open(f"/proc/{w.process.pid}/environ", "rb") as fh:
            environ = fh.read().split(b"\0")
    finally:
        w.kill()
    assert b"CUDA_VISIBLE_DEVICES=3" in environ           # the worker sees only GPU 3
    assert os.environ.get("CUDA_VISIBLE_DEVICES") == before  # the parent is unchanged
    r = CliRunner().invoke(main, ["run", "--programs", "1", "--devices", "0,x",
                                  "--corpus", str(tmp_path / "c")])
    assert r.exit_code == 2 and "GPU indices" in r.output


def test_crash_bug_class_keeps_how_the_process_died():
    segv = [Divergence(CRASH, 0, "process", died_detail(-signal.SIGSEGV))]
    abrt = [Divergence(CRASH, 0, "process", died_detail(-signal.SIGABRT))]
    assert bug_class(CRASH, segv) != bug_class(CRASH, abrt)
    assert "SIGSEGV" in bug_class(CRASH, segv).text
    # a timeout is shrunk under a shorter limit than the campaign's: still one class
    assert bug_class(TIMEOUT, [Divergence(TIMEOUT, 0, "process", timeout_detail(120))]) == \
        bug_class(TIMEOUT, [Divergence(TIMEOUT, 0, "process", timeout_detail(30))])
    found = Divergence(CRASH, 0, "process", "process died: SIGSEGV")

    class E:  # the two detail lines a crash entry can carry: found, and shrunk
        kind = CRASH
        detail = ["[crash] program 7: process died: SIGSEGV"]
    assert divergence_of(E) == found
    E.detail = [found.line()]
    assert divergence_of(E) == found


def test_probe_isolates_a_crash_and_replay_reports_it_fixed_without_the_fault(tmp_path):
    case = next(generate(program_seed(0, i)) for i in range(50)
                if any(s.form == "e_log" for s in generate(program_seed(0, i)).program.body))
    death = probe(case, "cpu", fault="test-segfault")
    assert death.kind == CRASH and death.detail == died_detail(-signal.SIGSEGV) and death.after_eager
    assert probe(case, "cpu").kind is None


#: seconds a worker may take to go once its parent is killed
WORKER_EXIT_S = 5.0


def _alive(pid: int) -> bool:
    """The process exists and is not a zombie (an orphan waits there for init to reap it)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            state = fh.read().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"


def _workers_of(pid: int) -> list[int]:
    """The worker processes of campaign process ``pid``: its children started by
    multiprocessing's spawn (not its resource tracker)."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as fh:
                ppid = int(fh.read().rsplit(")", 1)[1].split()[1])
            with open(f"/proc/{name}/cmdline", "rb") as fh:
                cmdline = fh.read()
        except (FileNotFoundError, ProcessLookupError):
            continue
        if ppid == pid and b"spawn_main" in cmdline:
            found.append(int(name))
    return found


def _survivors(pids: list[int], seconds: float) -> list[int]:
    """Those of ``pids`` still alive after waiting up to ``seconds`` for them to go."""
    deadline = time.monotonic() + seconds
    while any(_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    return [p for p in pids if _alive(p)]


def test_kill_9_of_the_parent_leaves_a_corpus_that_replays_and_no_worker(tmp_path):
    corpus_dir = tmp_path / "corpus"
    proc = subprocess.Popen(
        [sys.executable, "-m", "fuzzer", "run", "--time", "5m", "--corpus", str(corpus_dir),
         "--state", str(tmp_path / "state"), "--inject-fault", "effect-dce", "--no-shrink",
         "--features", "none"],  # the stream whose first finding is the fault's
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 240
    workers: list[int] = []
    survivors: list[int] = []
    try:
        while time.monotonic() < deadline and not list(corpus_dir.glob("*.json")):
            time.sleep(0.5)
        workers = _workers_of(proc.pid)
    finally:
        os.kill(proc.pid, signal.SIGKILL)     # the parent only: workers must not outlive it
        proc.wait()
        survivors = _survivors(workers, WORKER_EXIT_S)
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # tidy up whatever is left of the group
        except ProcessLookupError:
            pass
    assert workers, "no worker found"
    assert not survivors, f"workers {survivors} outlived their parent"
    entries = list(corpus_dir.glob("*.json"))
    assert entries, "no finding saved before the deadline"
    assert not [p for p in corpus_dir.iterdir() if p.name.startswith(".")]  # no partial file
    for p in entries:
        assert p.with_suffix(".py").exists()
        json.loads(p.read_text())
    r = CliRunner().invoke(main, ["replay", str(corpus_dir), "--json"])
    assert r.exit_code == 0, r.output   # found under a fault, replayed without it: FIXED
    assert {json.loads(line)["outcome"] for line in r.output.splitlines() if line.startswith("{")} == {"FIXED"}


HUNG_PARENT = """
import multiprocessing, os, signal, sys, time
from fuzzer.campaign.handle import WorkerHandle as _Worker
from fuzzer.campaign.config import Config
from fuzzer.limits import PoolLimits
from fuzzer.campaign.avoidance import Drawn
from fuzzer.program.generate import program_seed
if __name__ == "__main__":
    config = Config(seed=0, device="cpu", corpus_dir=sys.argv[1], fault="test-hang")
    w = _Worker(multiprocessing.get_context("spawn"), config, PoolLimits(), 0, None)
    assert w.conn.recv()[0] == "ready"
    w.assign(Drawn(0, program_seed(0, 0)), PoolLimits(), None)   # program 0 calls e_log: its compile hangs
    print(w.process.pid, flush=True)
    time.sleep(3)
    os.kill(os.getpid(), signal.SIGKILL)
"""


def test_a_worker_hung_in_a_compile_dies_with_its_parent(tmp_path):
    """A hung worker never reads or writes its pipe again, so it cannot notice that its
    parent was killed outright: the kernel must tell it."""
    out, err = tmp_path / "out", tmp_path / "err"
    with open(out, "w") as fout, open(err, "w") as ferr:  # not pipes: a survivor would hold them
        parent = subprocess.Popen([sys.executable, "-c", HUNG_PARENT, str(tmp_path)], stdout=fout,
                                  stderr=ferr)
        assert parent.wait(timeout=300) == -signal.SIGKILL, err.read_text()
    pid = int(out.read_text())
    try:
        assert not _survivors([pid], WORKER_EXIT_S), "the hung worker outlived its parent"
    finally:
        if _alive(pid):
            os.kill(pid, signal.SIGKILL)


def _speak(path):
    import os
    import sys

    from fuzzer.isolation import child

    child.to_log(path)
    print("from python", file=sys.stderr, flush=True)
    os.write(2, b"from the fd\n")


def test_a_child_sends_its_standard_error_to_the_log(tmp_path, capfd):
    import multiprocessing

    log = tmp_path / "run" / "torch.log"  # the folder may not exist yet
    p = multiprocessing.get_context("spawn").Process(target=_speak, args=(str(log),))
    p.start()
    p.join(60)
    assert p.exitcode == 0
    assert log.read_text() == "from python\nfrom the fd\n"
    assert "from" not in capfd.readouterr().err


@pytest.mark.parametrize("exitcode, said, detail", [
    (-signal.SIGABRT, "free(): invalid size\n", "process died: heap corruption"),
    (-signal.SIGSEGV, "torch says something\ncorrupted size vs. prev_size\n", "process died: heap corruption"),
    (-signal.SIGABRT, "double free or corruption (out)\n", "process died: heap corruption"),
    (-signal.SIGSEGV, "", "process died: SIGSEGV"),                      # a plain segfault: its own class
    (-signal.SIGABRT, "terminate called after throwing\n", "process died: SIGABRT"),
    (-signal.SIGKILL, "free(): invalid pointer\n", "process died: SIGKILL"),  # not a heap's signal
])
def test_a_heap_corruption_is_one_death_by_either_signal(exitcode, said, detail):
    assert died_detail(exitcode, said) == detail
    assert death_of(detail) == (detail.split(": ", 1)[1], None)


@pytest.mark.parametrize("fault", ["test-heap-abort", "test-heap-segfault"])
def test_a_probe_classes_a_corrupted_heap_by_its_words_not_its_signal(fault):
    """A child that dies by SIGABRT or SIGSEGV after glibc's heap words died one death;
    a plain segfault stays SIGSEGV (``test_probe_isolates_a_crash...``)."""
    case = next(generate(program_seed(0, i)) for i in range(50)
                if any(s.form == "e_log" for s in generate(program_seed(0, i)).program.body))
    death = probe(case, "cpu", fault=fault)
    assert death.kind == CRASH and death.detail == "process died: heap corruption" and death.after_eager


def test_triage_places_a_crash_at_the_stage_whose_fresh_process_dies(tmp_path):
    """``dcefuzz triage`` walks a crash entry's backends, each in a fresh process: the
    segfault fault kills only Inductor's compile, so eager and the AOT stages run
    clean and the crash's stage is ``inductor``; the bugs listing shows it."""
    from fuzzer.campaign.pool import _process_entry
    from fuzzer.corpus import store

    config = Config(seed=0, device="cpu", corpus_dir=str(tmp_path), fault="test-segfault")
    case = next(generate(program_seed(0, i)) for i in range(50)
                if any(s.form == "e_log" for s in generate(program_seed(0, i)).program.body))
    path, _ = store.save(_process_entry(CRASH, died_detail(-signal.SIGSEGV), case, 0, config), tmp_path)
    r = CliRunner().invoke(main, ["triage", str(path)])
    assert r.exit_code == 0, r.output
    culprit = load(path).culprit
    assert (culprit.stage, culprit.oracle_calls, culprit.otherwise) == ("inductor", 4, {}), culprit
    assert "stage inductor" in r.output


def test_an_entry_a_worker_reports_that_the_campaign_cannot_read_is_its_own_error_and_kept(tmp_path):
    """A worker of another dcefuzz (a Ray actor of an older install, a process started
    after the code changed) may report a program of a form this one lacks: that is
    dcefuzz's own error, counted, with the entry's JSON kept, never the campaign's end."""
    import types

    from fuzzer.campaign.pool import _entries
    from fuzzer.corpus.entry import Entry, Origin
    from fuzzer.judge.contract import Divergence

    good = Entry.build(EFFECT_LOG, generate(3), [Divergence(EFFECT_LOG, 0, "compile", "x")],
                       Origin(seed=3, device="cpu", backend="inductor")).to_json()
    unknown = json.loads(json.dumps(good))
    unknown["program"]["body"][0]["form"] = "no_such_form"
    entries, errors = _entries(types.SimpleNamespace(entries=[good, unknown]))
    assert [e.to_json() for e in entries] == [good]
    assert len(errors) == 1 and errors[0].stage == "worker" and "no_such_form" in errors[0].message
    assert json.loads(errors[0].traceback) == unknown
