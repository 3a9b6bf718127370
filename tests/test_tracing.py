"""Logging a user's effectful ops (``fuzzer.user.tracing``): every call, eager, logged in
the op library's trace with what it saw; the example library's logging op, no compile."""

from pathlib import Path

import pytest
import torch

from fuzzer.program import custom_ops
from fuzzer.user import library, tracing

OPSLIB = str(Path(__file__).resolve().parent.parent / "examples" / "user_ops" / "opslib.py")


@pytest.mark.skipif(not tracing.supported(), reason="this torch has no torch.library.get_kernel")
def test_an_effectful_ops_calls_are_logged_with_what_they_saw():
    library.load(OPSLIB)
    tracing.trace_effects(["opslib::log_sum"])
    tracing.trace_effects(["opslib::log_sum"])  # once is enough: not logged twice
    trace = custom_ops.install().TRACE
    trace["calls"].clear()
    trace["effects"].clear()
    x = torch.tensor([1.0, 2.0])
    torch.ops.opslib.log_sum(x)
    assert trace["calls"] == [("opslib::log_sum", None)]
    ((op, site, (seen,)),) = trace["effects"]
    assert (op, site) == ("opslib::log_sum", None) and torch.equal(seen, x)
    trace["calls"].clear()
    trace["effects"].clear()
