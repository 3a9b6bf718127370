"""Runs under compiled autograd (``fuzzer.judge.compiled_autograd``): the entry point read
off this torch, and what is declined at either stage; no compile."""

import pytest

from fuzzer.judge import compiled_autograd
from fuzzer.judge.observe import COMPILE, RUNTIME


def test_this_torch_has_an_entry_point_and_nothing_is_said_against_it():
    assert callable(compiled_autograd.entry_point())
    assert compiled_autograd.unavailable() is None


def test_a_torch_without_one_says_why(monkeypatch):
    from torch._dynamo import compiled_autograd as torchs

    monkeypatch.delattr(torchs, "_enable", raising=False)
    monkeypatch.delattr(torchs, "enable", raising=False)
    assert compiled_autograd.entry_point() is None
    assert "no torch._dynamo.compiled_autograd._enable" in compiled_autograd.unavailable()


@pytest.mark.parametrize("stage", [COMPILE, RUNTIME])
def test_what_it_documents_it_does_not_support_is_declined_at_either_stage(stage):
    assert ("NotImplementedError", stage, "compiled_args nyi") in compiled_autograd.DECLINES
    assert ("RuntimeError", stage, "Re-entrant into Compiled Autograd") in compiled_autograd.DECLINES


def test_the_function_runs_inside_the_entry_point_with_the_compiler():
    entered = []

    class Enable:
        def __init__(self, compiler):
            entered.append(compiler)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            entered.append("left")

    assert compiled_autograd._run_under(Enable, "compiler", lambda a, b: a + b, 1, 2) == 3
    assert entered == ["compiler", "left"]
