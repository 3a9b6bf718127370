"""The declaration check of a user's op (``fuzzer.user.audit``), its eager part: a write
not declared is a finding naming the argument, a declared write never made a warning,
honest ops pass; the example library, opcheck left out (it compiles)."""

import dataclasses
from pathlib import Path

from fuzzer.user import audit, library

OPSLIB = str(Path(__file__).resolve().parent.parent / "examples" / "user_ops" / "opslib.py")


def _op(name):
    library.load(OPSLIB)
    return library.op(name)


def test_an_undeclared_write_is_a_finding_naming_the_argument():
    checked = audit.audit(_op("opslib::clamp_into"), "cpu", opcheck=False)
    (problem,) = checked.findings
    assert (problem.check, problem.argument, problem.severity) == ("undeclared-write", "out", audit.FINDING)
    assert problem.line.startswith("finding opslib::clamp_into (out): writes argument 'out'")


def test_honest_ops_pass_and_a_declared_write_never_made_is_a_warning():
    for name in ("opslib::accumulate", "opslib::log_sum", "opslib::matmul", "opslib::scaled_tanh"):
        assert audit.audit(_op(name), "cpu", opcheck=False).problems == (), name
    acc = _op("opslib::accumulate")
    claims_more = dataclasses.replace(acc, arguments=tuple(dataclasses.replace(a, written=True)
                                                          for a in acc.arguments))
    (warning,) = audit.audit(claims_more, "cpu", opcheck=False).problems
    assert (warning.check, warning.argument, warning.severity) == ("unused-declaration", "x", audit.WARNING)
    assert not audit.audit(claims_more, "cpu", opcheck=False).findings


def test_the_kernels_an_op_has_say_where_it_runs():
    assert "CompositeExplicitAutograd" in audit.kernels("opslib::matmul")
    assert audit.has_kernel("opslib::matmul", "cpu")
