"""The command line: exit codes, bad input, and the commands that need a compile.

Compiles here use the stand-in backends of ``backends.py`` (dynamo only, fast).
"""

import json

import backends
import click
import pytest
import torch
from click.testing import CliRunner
from test_corpus import make_entry

from fuzzer.campaign.config import Budget, Config
from fuzzer.campaign.session import Session, run_campaign
from fuzzer.cli import main, parse_duration
from fuzzer.corpus.store import load, save


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_durations():
    assert parse_duration("90s") == 90
    assert parse_duration("10m") == 600
    assert parse_duration("2h") == 7200
    assert parse_duration("15") == 15
    for bad in ("", "10x", "-5m", "0s", "m"):
        with pytest.raises(click.BadParameter):
            parse_duration(bad)


def test_the_budget_options_read_their_defaults_from_limits_and_check_alike():
    from fuzzer.cli.options import BudgetType, spelled
    from fuzzer.limits import SHRINK, TRIAGE, OracleBudget

    assert spelled(120.0) == "2m" and spelled(90.0) == "90s" and spelled(7200.0) == "2h"
    for default in (SHRINK.budget, TRIAGE.budget):
        kind = BudgetType(default)
        assert kind.convert(kind.spell(), None, None) == default
        assert kind.convert("7", None, None) == OracleBudget(7, default.seconds)
        assert kind.convert("30s", None, None) == OracleBudget(default.oracle_calls, 30.0)
        with pytest.raises(click.BadParameter, match="at least 1"):
            kind.convert("0", None, None)
    for command, option, default in (("run", "--shrink-budget", SHRINK.budget),
                                      ("shrink", "--shrink-budget", SHRINK.budget),
                                      ("run", "--triage-budget", TRIAGE.budget)):
        param = next(p for p in main.commands[command].params if option in p.opts)
        assert param.type.convert(param.default, None, None) == default


@pytest.mark.parametrize("args, needle", [
    (["run", "--time", "ten minutes"], "is not a duration"),
    (["run", "--programs", "0"], "0"),
    (["run", "--device", "tpu", "--programs", "1"], "device"),
    (["run", "--device", "cuda", "--programs", "1"], "CUDA"),
    (["gen"], "--seed"),
    (["replay"], "PATHS"),
])
def test_usage_errors_exit_2(args, needle):
    import torch
    if "cuda" in args and torch.cuda.is_available():
        pytest.skip("CUDA is present")
    r = invoke(*args)
    assert r.exit_code == 2, r.output
    assert needle in r.output


def test_show_and_repro(tmp_path):
    path, _ = save(make_entry(), tmp_path)
    shown = invoke("show", path)
    assert shown.exit_code == 0
    assert "effect-log" in shown.output and "def program(x0):" in shown.output
    script = invoke("repro", path)
    assert script.exit_code == 0
    assert script.output == path.with_suffix(".py").read_text()
    assert invoke("show", tmp_path / "nope.json").exit_code == 2


def test_replay_exit_codes(tmp_path):
    broken = make_entry(signature="effect-log|missing :: a", backend=backends.DROP_LOG)
    faithful = make_entry(signature="effect-log|missing :: b", backend=backends.FAITHFUL)
    p_broken, _ = save(broken, tmp_path / "one")
    p_faithful, _ = save(faithful, tmp_path / "two")

    r = invoke("replay", p_broken)
    assert r.exit_code == 1, r.output
    assert r.output.startswith(f"REPRODUCES {broken.id}  [effect-log] binding "), r.output  # the kind once

    r = invoke("replay", p_faithful, "--json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.output.strip())["outcome"] == "FIXED"

    (tmp_path / "two" / "garbage.json").write_text("{")
    r = invoke("replay", tmp_path / "one", tmp_path / "two")
    assert r.exit_code == 2
    assert "REPRODUCES" in r.output and "FIXED" in r.output
    assert "garbage.json" in r.output

    r = invoke("replay", tmp_path / "no-such-thing")
    assert r.exit_code == 2 and "no-such-thing" in r.output


def _config(tmp_path, backend, **kw):
    return Config(seed=3, device="cpu", corpus_dir=str(tmp_path), backend=backend, **kw)


@pytest.mark.compile
def test_campaign_shrinks_and_buckets_one_bug_into_one_entry(tmp_path):
    stats = run_campaign(Session(_config(tmp_path, backends.DROP_LOG), Budget(programs=12), log=lambda line: None))
    assert stats.programs == 12
    assert stats.findings["effect-log"] >= 2
    entries = [load(p) for p in tmp_path.glob("*.json")]
    effect = [e for e in entries if e.kind == "effect-log"]
    # every program that loses an e_log shrinks to the same one-call program
    assert len(effect) == 1, [e.signature for e in effect]
    assert effect[0].hits == stats.findings["effect-log"]
    assert effect[0].statements == 1
    assert effect[0].shrink["statements"] == 1
    assert effect[0].shrink["original_statements"] >= 1
    assert sum(e.hits for e in entries) == sum(stats.findings.values())
    assert stats.repeats == sum(e.hits for e in entries) - len(entries)


@pytest.mark.compile
def test_campaign_without_shrinking_saves_as_found(tmp_path):
    stats = run_campaign(Session(_config(tmp_path, backends.DROP_LOG, shrink=False), Budget(programs=6),
                                 log=lambda line: None))
    entries = [load(p) for p in tmp_path.glob("*.json")]
    assert entries and all(e.shrink is None for e in entries)
    assert len(entries) == len(stats.saved)


@pytest.mark.compile
def test_campaign_on_a_faithful_backend_finds_no_correctness_bug(tmp_path):
    stats = run_campaign(Session(_config(tmp_path, backends.FAITHFUL), Budget(programs=12), log=lambda line: None))
    assert stats.programs == 12
    assert not set(stats.findings) - {"missed-dce"}


@pytest.mark.compile
def test_shrink_command_reduces_a_saved_entry_in_place(tmp_path, monkeypatch):
    """The test backend is registered in this process only, so the shrink runs here."""
    import fuzzer.isolation.once as once_mod
    from fuzzer.campaign.entries import entry_for
    from fuzzer.corpus import store as corpus_mod
    from fuzzer.judge.trial import run_trial
    from fuzzer.program.generate import generate, program_seed

    config = _config(tmp_path, backends.DROP_LOG, shrink=False)
    for i in range(20):
        result = run_trial(generate(program_seed(3, i)), "cpu", backends.DROP_LOG)
        found = [f for f in result.findings if f.kind == "effect-log" and len(f.case.program.body) > 2]
        if found:
            break
    assert found, "no effect-log finding in 20 programs"
    path, _ = corpus_mod.save(entry_for(found[0], 123, config), tmp_path)
    before = load(path).statements
    monkeypatch.setattr(once_mod, "run_once", _in_this_process)
    r = invoke("shrink", path)
    assert r.exit_code == 0, r.output
    after = [load(p) for p in tmp_path.glob("*.json")]
    assert len(after) == 1
    assert after[0].statements == 1 < before
    assert after[0].shrink["original_statements"] == before
    assert after[0].seed == 123
    assert sorted(p.suffix for p in tmp_path.iterdir()) == [".json", ".py"]


@pytest.mark.compile
def test_a_shrink_candidate_that_kills_the_shrinking_process_is_reported_and_the_entry_kept(tmp_path):
    """``dcefuzz shrink`` judges a plain entry's candidates in a child process: the planted
    fault kills the process that judges a candidate whose only custom-op calls are
    ``e_log``, and the command says so and leaves the entry byte for byte as it was."""
    from fuzzer import faults
    from fuzzer.campaign.entries import entry_for
    from fuzzer.judge.trial import run_trial
    from fuzzer.program.generate import generate, program_seed

    fault = "test-candidate-segfault"
    config = _config(tmp_path, "inductor", shrink=False, triage=False, fault=fault)
    with faults.planted(fault):  # the whole program mixes ops: found, not killed
        result = run_trial(generate(program_seed(0, 0)), "cpu")
    found = [f for f in result.findings if f.kind == "effect-log"]
    assert found, [f.kind for f in result.findings]
    path, _ = save(entry_for(found[0], program_seed(0, 0), config), tmp_path)
    before = path.read_bytes()
    r = invoke("shrink", path)
    assert r.exit_code == 1, r.output
    assert "died (process died: SIGSEGV) on a candidate program" in r.output
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([path.name, path.with_suffix(".py").name])


# ------------------------------------------------------------------ the entry's device

needs_no_cuda = pytest.mark.skipif(torch.cuda.is_available(), reason="needs a machine without CUDA")


def _cuda_entry():
    entry = make_entry(signature="effect-log|missing :: on cuda", backend=backends.FAITHFUL)
    entry.device = "cuda"
    return entry


@pytest.fixture
def cuda_by_default(monkeypatch):
    """As on a GPU machine: a command left to pick a device would pick CUDA."""
    import fuzzer.judge.execute as execute_mod

    monkeypatch.setattr(execute_mod, "default_device", lambda: "cuda")


def test_replay_runs_an_entry_on_its_recorded_device(tmp_path, monkeypatch, cuda_by_default):
    import fuzzer.trials.program as judges  # a plain entry replays through its kind's oracle

    devices = []
    real = judges.judge_fresh
    monkeypatch.setattr(judges, "judge_fresh",
                        lambda c, device, backend, **kw: (devices.append(device), real(c, device, backend, **kw))[1])
    path, _ = save(make_entry(backend=backends.FAITHFUL), tmp_path)
    r = invoke("replay", path)
    assert r.exit_code == 0, r.output
    assert r.output.startswith("FIXED")
    assert devices == ["cpu"]


def _in_this_process(handler, message):
    """``run_once`` without the child: what the handler sends, here."""
    sent = []
    handler(message, sent.append)
    return sent[0]


def test_shrink_keeps_an_entry_on_its_recorded_device(tmp_path, monkeypatch, cuda_by_default):
    import fuzzer.isolation.once as once_mod
    import fuzzer.replay.reshrink as reshrink_mod

    devices = []
    monkeypatch.setattr(reshrink_mod, "reshrink", lambda e, p, device, budget, target=None: devices.append(device))
    monkeypatch.setattr(once_mod, "run_once", _in_this_process)
    path, _ = save(make_entry(), tmp_path)
    r = invoke("shrink", path)
    assert r.exit_code == 1 and "does not reproduce" in r.output   # what the stand-in returned
    assert devices == ["cpu"]


@needs_no_cuda
def test_an_entry_found_on_cuda_is_an_error_here_not_a_crash(tmp_path):
    path, _ = save(_cuda_entry(), tmp_path)
    r = invoke("replay", path, "--json")
    assert r.exit_code == 2, r.output
    result = json.loads(r.stdout)
    assert result["outcome"] == "ERROR"
    assert result["detail"].startswith("cannot run on cuda (the device it was found on;")
    assert "CUDA is not available" in result["detail"]
    shrink = invoke("shrink", path)
    assert shrink.exit_code == 2
    assert "was found on cuda, which cannot run here: CUDA is not available" in shrink.output
    assert load(path).device == "cuda"


@needs_no_cuda
def test_the_repro_script_of_a_cuda_entry_cannot_judge_here(tmp_path):
    import subprocess
    import sys

    path, _ = save(_cuda_entry(), tmp_path)
    done = subprocess.run([sys.executable, str(path.with_suffix(".py"))], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 125, done.stdout + done.stderr
    assert "device cuda is not available here" in done.stdout
