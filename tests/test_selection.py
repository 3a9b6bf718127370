"""Choosing the user's ops a campaign calls (``fuzzer.user.selection``): each library's ops
checked, those with a finding left out and said why, the rest in the op set; the example
library, opcheck left out (it compiles)."""

from pathlib import Path

import pytest

from fuzzer.user import audit, library, selection

OPSLIB = str(Path(__file__).resolve().parent.parent / "examples" / "user_ops" / "opslib.py")


@pytest.fixture
def eager_check(monkeypatch):
    real = audit.audit
    monkeypatch.setattr(audit, "audit", lambda op, device: real(op, device, opcheck=False))


def test_an_op_with_a_finding_is_left_out_and_the_rest_are_fuzzed(eager_check):
    chosen = selection.select([OPSLIB], only=True)
    assert chosen.left_out == ["opslib::clamp_into"]
    assert chosen.ops.user == ("opslib::accumulate", "opslib::log_sum", "opslib::matmul", "opslib::scaled_tanh")
    assert not chosen.ops.builtin and chosen.ops.imports[0][0] == "opslib"
    rows = {r["op"]: r for r in chosen.table()}
    assert rows["opslib::clamp_into"]["status"] == "finding" and rows["opslib::matmul"]["status"] == "used"
    assert any("clamp_into" in line for line in chosen.lines())


def test_unchecked_every_op_is_fuzzed_and_no_module_is_none():
    assert len(selection.select([OPSLIB], check=False).ops.user) == 5
    assert selection.select([]).ops.user == ()
    with pytest.raises(library.LoadError, match="needs --ops"):
        selection.select([], only=True)
