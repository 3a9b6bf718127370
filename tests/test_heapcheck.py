"""A checked heap for a confirming child (``fuzzer.isolation.heapcheck``): glibc's knobs
added to what the environment holds, and put back in the child; no child started."""

import json
import os

from fuzzer.isolation import heapcheck


def test_the_knobs_are_added_to_what_the_environment_holds(monkeypatch):
    monkeypatch.setenv("GLIBC_TUNABLES", "glibc.a=1")
    monkeypatch.setenv("LD_PRELOAD", "libx.so")
    knobs = heapcheck._knobs(check=True)
    assert knobs["GLIBC_TUNABLES"] == "glibc.a=1:glibc.malloc.tcache_count=0:glibc.malloc.perturb=165:" \
                                      "glibc.malloc.check=3"
    assert knobs["LD_PRELOAD"] == "libx.so libc_malloc_debug.so.0"
    assert "LD_PRELOAD" not in heapcheck._knobs(check=False)


def test_a_glibc_too_old_or_none_gets_no_knobs(monkeypatch):
    monkeypatch.setattr(heapcheck, "glibc_version", lambda: (2, 17))
    assert heapcheck.environment() == {}
    monkeypatch.setattr(heapcheck, "glibc_version", lambda: None)
    assert heapcheck.environment() == {}


def test_the_child_puts_back_what_its_environment_held(monkeypatch):
    monkeypatch.setattr(heapcheck, "glibc_version", lambda: (2, 36))
    monkeypatch.setattr(heapcheck, "check_takes_effect", lambda: False)
    monkeypatch.setenv("GLIBC_TUNABLES", "glibc.a=1")
    env = heapcheck.environment()
    assert json.loads(env[heapcheck.RESTORE_ENV]) == {"GLIBC_TUNABLES": "glibc.a=1"}
    monkeypatch.setattr(os, "environ", {**os.environ, **env})
    assert heapcheck.restore()
    assert os.environ["GLIBC_TUNABLES"] == "glibc.a=1" and heapcheck.RESTORE_ENV not in os.environ
    assert not heapcheck.restore()  # nothing held: not a checked child


def test_this_processs_glibc_is_read():
    version = heapcheck.glibc_version()
    assert version is None or (isinstance(version[0], int) and version >= (2, 0))
