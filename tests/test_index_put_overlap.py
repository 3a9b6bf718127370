"""The index-put-overlap fault (``fuzzer.faults.index_put_overlap``): what its patched
``index_put_impl_`` hands the lowering, and its undo.  Planted on a real compile:
``tests/test_faults.py`` (its program on the ``index-writes`` path)."""

import torch

from fuzzer import faults
from fuzzer.faults import index_put_overlap


def _patched(dynamic: bool, symbolic: bool, monkeypatch):
    """The replacement built over a stand-in original, which records the ``may_realize``
    it is given; ``symbolic``: whether the written tensor has symbolic sizes."""
    seen = []
    monkeypatch.setattr(index_put_overlap._patching, "has_free_symbols", lambda value: symbolic)
    impl = index_put_overlap._build(dynamic)(lambda target: lambda *a, may_realize: seen.append(may_realize))
    return impl[index_put_overlap.IMPL], seen


def test_the_values_are_never_realized_first(monkeypatch):
    impl, seen = _patched(False, False, monkeypatch)
    impl("self", [None], "values", False, True, may_realize=True)
    assert seen == [False]


def test_the_dynamic_twin_leaves_a_tensor_of_static_sizes_alone(monkeypatch):
    impl, seen = _patched(True, False, monkeypatch)
    impl("self", [None], "values", False, True, may_realize=True)
    impl, seen_symbolic = _patched(True, True, monkeypatch)
    impl("self", [None], "values", False, True, may_realize=True)
    assert seen == [True] and seen_symbolic == [False]


def test_both_draw_index_writes_and_the_undo_restores_the_lowering():
    from torch._inductor import lowering

    assert all(dict(faults.get(n).features) == {"index-writes": 1.0}
               for n in ("index-put-overlap", "index-put-overlap-dynamic"))
    original = lowering.index_put_impl_
    undo = faults.get("index-put-overlap").install()
    try:
        assert lowering.index_put_impl_ is not original
    finally:
        undo()
    assert lowering.index_put_impl_ is original and torch.ops.aten.index_put_.default is not None
