"""The feature registry (``fuzzer.program.features``): the records declared beside their
forms, read in the draw order ``ORDER``; ``--features``; the draw; what a program uses."""

import dataclasses

import pytest
from helpers import prog

from fuzzer.program import features, forms
from fuzzer.program.feature_record import Feature
from fuzzer.program.ir import Mode

#: the features and their weights in draw order, as ``features.py`` listed them by hand
#: before each was declared beside its forms: programs drawn with them stay the same
DRAWN = [
    ("autograd", 0.3), ("graph-break", 0.25), ("dynamic-mode", 0.35), ("data-dependent", 0.3), ("signatures", 0.4),
    ("identical-calls", 0.25), ("dtypes", 0.2), ("strided", 0.2), ("aliased-inputs", 0.15), ("hops", 0.15),
    ("views", 0.3), ("indexing", 0.3), ("module-state", 0.25), ("tagged-ops", 0.3), ("schemas", 0.3),
    ("schema-alias", 0.3), ("op-calls", 0.3), ("hop-effects", 0.25), ("autograd-function", 0.25),
    ("strided-views", 0.25), ("layouts", 0.2), ("overlapping-inputs", 0.15), ("storage-swaps", 0.2),
    ("int-tensors", 0.25), ("dtype-views", 0.2), ("module-carry", 0.2), ("function-shapes", 0.2), ("func-grad", 0.15),
    ("index-writes", 0.25), ("dtype-reads", 0.2), ("input-swaps", 0.2),
    ("base-offsets", 0.2), ("transposed-writes", 0.2), ("matmuls", 0.2), ("view-scatters", 0.2),
    ("layout-tags", 0.3), ("layout-default", 0.2),
    ("opaque-objects", 0.2), ("tensor-subclass", 0.25), ("vmap-rules", 0.2), ("autocast-rules", 0.2),
]


def test_the_features_are_drawn_in_order_with_the_weights_they_had():
    assert [(f.name, f.weight) for f in features.FEATURES] == DRAWN
    assert tuple(name for name, _ in DRAWN) == features.ORDER


def test_a_family_appended_to_the_registry_draws_its_features_after_every_earlier_one():
    new = type("Family", (), {"FEATURES": (Feature("late", 0.1, "a family's"), Feature("later", 0.1, "its second"))})
    old = type("Family", (), {"FEATURES": (Feature("func-grad", 0.1, "named in the frozen order"),)})
    assert features.draw_order(("a", "func-grad"), (new, old)) == ("a", "func-grad", "late", "later")


def test_every_feature_is_declared_once_beside_what_it_turns_on():
    declared = [f.name for module in features.DECLARING for f in module.FEATURES]
    assert sorted(declared) == sorted(features.ORDER)
    on_forms = {f.feature for f in forms.FORMS.values()} - {None}
    assert on_forms <= set(features.BY_NAME)


def test_what_a_feature_implies_or_excludes_is_a_feature():
    for f in features.FEATURES:
        assert set(f.implies) | set(f.excludes) <= set(features.BY_NAME), f.name
    assert features.FUNC_GRAD_EXCLUDES == features.BY_NAME[features.FUNC_GRAD].excludes


def test_a_drawn_feature_brings_what_it_implies_and_drops_what_it_excludes():
    table = {features.FUNC_GRAD: 1.0, features.GRAPH_BREAK: 1.0, features.HOPS: 1.0, features.VIEWS: 1.0}
    for seed in range(5):
        on = features.draw(seed, table)
        assert on == {features.FUNC_GRAD, features.AUTOGRAD, features.VIEWS}


def test_a_feature_added_at_the_end_leaves_the_draws_of_those_before_it(monkeypatch):
    """The rule above ``ORDER``: a new feature goes at the end, so every earlier program
    draws as before."""
    before = [features.draw(seed, features.ALL) for seed in range(60)]
    new = Feature("a-new-one", 0.5, "a feature added after all others")
    monkeypatch.setattr(features, "FEATURES", features.FEATURES + (new,))
    after = [features.draw(seed, {**features.ALL, new.name: new.weight}) for seed in range(60)]
    assert [on - {new.name} for on in after] == before
    assert any(new.name in on for on in after)


def test_a_feature_this_torch_cannot_run_is_never_drawn(monkeypatch):
    off = dataclasses.replace(features.BY_NAME[features.VIEWS], unavailable=lambda: "no views here")
    monkeypatch.setattr(features, "FEATURES", tuple(off if f.name == off.name else f for f in features.FEATURES))
    monkeypatch.setitem(features.BY_NAME, off.name, off)
    assert features.unavailable(features.VIEWS) == "no views here"
    assert not any(features.VIEWS in features.draw(seed, {features.VIEWS: 1.0}) for seed in range(10))


def test_a_program_uses_the_features_of_its_forms_and_of_its_mode_in_draw_order():
    p = prog({"x0": ("s0",)}, [("permute", ["x0"], "v0", {}), ("graph_break", [], None, {})])
    p = dataclasses.replace(p, mode=Mode(grad=True, dtype="float16"))
    assert features.used_by(p) == ["autograd", "graph-break", "dtypes", "views"]


@pytest.mark.parametrize("text, table", [
    ("none", {}),
    ("views,hops", {"views": 0.3, "hops": 0.15}),
    ("graph-break=0.8", {"graph-break": 0.8}),
])
def test_features_switch_by_name(text, table):
    assert features.parse(text) == table


def test_all_but_one_and_unknown_names():
    assert features.parse("-dtypes") == {n: w for n, w in features.ALL.items() if n != "dtypes"}
    with pytest.raises(features.FeatureError, match="unknown feature"):
        features.parse("no-such-feature")
    with pytest.raises(features.FeatureError, match="within"):
        features.parse("views=2")


def test_an_empty_value_is_none_a_weight_must_be_a_number_and_a_table_describes_itself():
    assert features.parse("") == features.parse("none") == features.NONE
    with pytest.raises(features.FeatureError, match="not a number"):
        features.parse("views=lots")
    assert features.describe({"views": 0.5, "hops": 0.15}) == "views=0.5, hops=0.15"
    assert features.describe({}) == "none"


def test_features_are_drawn_by_weight_the_same_for_the_same_seed():
    assert features.draw(5, {}) == frozenset()
    assert all(features.draw(s, {"views": 1.0, "hops": 0.0}) == {"views"} for s in range(20))
    drawn = [features.draw(s, {"views": 0.5}) for s in range(40)]
    assert drawn == [features.draw(s, {"views": 0.5}) for s in range(40)] and 5 < sum(map(bool, drawn)) < 35


def test_a_feature_of_no_form_is_read_off_the_calls_and_the_mode():
    """``Feature.seen_in``: two calls at one site are identical calls; a module that
    carries its state is module-carry, not module-state."""
    p = prog({"x0": ("s0", "s1")}, [("p_sin", ["x0"], "v1", {"site": 0}), ("p_sin", ["x0"], "v2", {"site": 0})])
    assert features.used_by(p) == [features.IDENTICAL_CALLS]
    carried = dataclasses.replace(p, mode=Mode(module=("x0",), carry=True))
    assert features.MODULE_CARRY in features.used_by(carried)
    assert features.MODULE_STATE not in features.used_by(carried)


def test_a_captured_size_and_a_write_beside_a_view_are_asked_for_by_their_features():
    assert features.needs_capture(prog({"x0": ("s0",)}, [("p_pos", ["x0"], "v0", {"site": 0, "size": "u0"})]))
    # a size from data in a form of another feature (int-tensors' nonzero) asks for it too
    assert features.needs_capture(prog({"x0": ("s0",)}, [("nonzero", ["x0"], "v0", {"size": "u0"})]))
    assert not features.needs_capture(prog({"x0": ("s0",)}, [("p_sin", ["x0"], "v0", {"site": 0})]))
    assert features.writes_beside({features.STRIDED_VIEWS}) and features.writes_beside({features.OVERLAPPING})
    assert not features.writes_beside({features.VIEWS})
