"""The hash seed of dcefuzz's processes (``fuzzer.hashseed``): a process that runs
without one starts again with it, one that has one carries on; ``os.execve`` stood in."""

import pytest

from fuzzer import hashseed


@pytest.fixture
def execs(monkeypatch):
    started = []
    monkeypatch.setattr(hashseed.os, "execve", lambda exe, argv, env: started.append((argv, env["PYTHONHASHSEED"])))
    return started


def test_a_command_without_a_seed_starts_again_with_it(execs, monkeypatch):
    monkeypatch.setattr(hashseed, "AT_START", None)
    hashseed.pin(["run", "--seed", "3"])
    (argv, seed), = execs
    assert argv[1:] == ["-m", "fuzzer", "run", "--seed", "3"] and seed == hashseed.SEED
    hashseed.restart()
    assert len(execs) == 2 and execs[1][1] == hashseed.SEED


def test_a_process_with_a_seed_carries_on(execs, monkeypatch):
    monkeypatch.setattr(hashseed, "AT_START", "7")
    hashseed.pin(["run"])
    hashseed.restart()
    assert execs == []
