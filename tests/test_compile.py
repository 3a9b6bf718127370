"""The ``compile`` target (``fuzzer.judge.targets.compile``): ``torch.compile`` with the
program's dynamic mode, the backend and the target's mode; the call is recorded, not
compiled."""

import torch
from helpers import case, prog

from fuzzer.judge.targets import compile as compile_target


def _compiled_with(monkeypatch, target, **build) -> dict:
    seen = {}

    def fake_compile(fn, **kwargs):
        seen.update(kwargs)
        return fn

    monkeypatch.setattr(torch, "compile", fake_compile)
    target.build(case(prog({"x0": ("s0",)}, [])), **build)
    return seen


def test_it_compiles_with_the_backend_and_the_programs_dynamic_mode(monkeypatch):
    seen = _compiled_with(monkeypatch, compile_target.TARGET, backend="aot_eager")
    assert seen["backend"] == "aot_eager" and "mode" not in seen
    assert seen["dynamic"] is not False


def test_static_shapes_when_triage_asks_and_a_mode_where_the_target_has_one(monkeypatch):
    assert _compiled_with(monkeypatch, compile_target.TARGET, dynamic=False)["dynamic"] is False

    class WithMode(compile_target.CompileTarget):
        mode = "max-autotune"

    assert _compiled_with(monkeypatch, WithMode())["mode"] == "max-autotune"


def test_it_runs_everything_and_judges_dead_calls():
    target = compile_target.TARGET
    assert target.unsupported == () and target.required == () and target.judges_dce
    assert target.unavailable("cpu") is None and compile_target.PIECES == ()
