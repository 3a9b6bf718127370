"""The op families' registry (``fuzzer.program.families``): each family module carries
its ops, its forms and its features, and the library, the form table and the feature
registry read them in ``MODULES`` order."""

import dataclasses

from fuzzer.program import custom_ops, families, features, forms
from fuzzer.program.families import tagged
from fuzzer.program.op_snippets import FIRST_LIBRARY


def test_the_library_is_the_first_library_then_each_family_in_order():
    assert custom_ops.CUSTOM_OPS == FIRST_LIBRARY + tuple(op for m in families.MODULES for op in m.OPS)
    assert [m.__name__.rsplit(".", 1)[1] for m in families.MODULES] == [
        "tagged", "schemas", "calls", "control", "function", "swaps", "state", "fnshapes", "layout_tags"]
    names = [op.name for op in custom_ops.CUSTOM_OPS]
    assert len(names) == len(set(names)), "an op's name is its own"


def test_every_family_form_and_feature_reaches_the_registries():
    for module in families.MODULES:
        for form in module.FORMS:
            assert forms.form(form.name) is form
        for feature in module.FEATURES:
            assert features.BY_NAME[feature.name] is feature


def test_a_family_op_of_a_feature_is_of_a_feature_its_family_declares():
    """So ``families.unavailable`` answers for it, and a torch that cannot run the
    feature does not register the op (``custom_ops.registrable``)."""
    declared = {f.name for f in families.FEATURES}
    for module in families.MODULES:
        for op in module.OPS:
            assert op.feature is None or op.feature in {f.name for f in module.FEATURES}, op.name
            assert op.feature is None or op.feature in declared


def test_the_ops_of_a_family_feature_this_torch_cannot_run_are_not_registered(monkeypatch):
    assert families.unavailable("no-such-feature") is None
    assert families.unavailable(tagged.FEATURE) == tagged.unavailable()
    off = tuple(dataclasses.replace(f, unavailable=lambda: "no tags here") if f.name == tagged.FEATURE else f
                for f in families.FEATURES)
    monkeypatch.setattr(families, "FEATURES", off)
    assert families.unavailable(tagged.FEATURE) == "no tags here"
    assert not {op.name for op in tagged.OPS} & set(custom_ops.registrable())
