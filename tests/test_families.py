"""The families of ops and forms beyond the first library (``fuzzer.program.families``),
by public behaviour: their ops and forms gathered in library order, and why this torch
cannot run one."""

import importlib

from fuzzer.program import families
from fuzzer.program import form as kit


def _modules():
    return [importlib.import_module(f"fuzzer.program.families.{name}") for name in families.MODULES]


def test_the_ops_and_forms_are_each_familys_in_library_order():
    assert families.ops() == tuple(op for m in _modules() for op in m.OPS)
    assert [f.name for f in families.forms(kit)] == [f.name for m in _modules() for f in m.forms(kit)]
    names = [op.name for op in families.ops()]
    assert len(names) == len(set(names))


def test_a_family_says_why_this_torch_cannot_run_it_and_an_unknown_feature_has_no_reason():
    assert families.unavailable("no-such-feature") is None
    tagged = importlib.import_module("fuzzer.program.families.tagged")
    assert families.unavailable(tagged.FEATURE) == tagged.unavailable()
