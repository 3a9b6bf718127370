"""The form table (``fuzzer.program.forms``): every form, read off the modules that declare
them in ``MODULES`` order, by name; a user's form joins it at run time."""

import dataclasses

import pytest

from fuzzer.program import custom_ops, forms
from fuzzer.program.form_record import Illegal


def test_the_table_is_each_module_s_forms_in_module_order():
    """A category's forms are drawn in the table's order: a module goes at the end of
    ``MODULES``, so earlier programs draw as before."""
    assert [m.__name__.rsplit(".", 1)[1] for m in forms.MODULES] == [
        "aten_forms", "tensor_forms", "library_forms", "families", "strided_forms", "swap_forms", "int_forms",
        "width_forms", "index_writes", "dtype_reads", "input_swaps",
        "offset_forms", "transposed_forms", "matmul_forms", "scatter_forms"]
    assert list(forms.FORMS)[:sum(len(m.FORMS) for m in forms.MODULES)] == [
        f.name for module in forms.MODULES for f in module.FORMS]


def test_every_library_op_has_a_form_and_every_form_a_feature_declared_in_a_module():
    assert {f.custom for f in forms.FORMS.values()} - {None} >= set(custom_ops.BY_NAME)
    declared = {f.name for module in forms.MODULES for f in module.FEATURES}
    assert {f.feature for module in forms.MODULES for f in module.FORMS} - {None} <= declared


def test_an_unknown_form_is_illegal_with_a_hint_for_a_user_s_op():
    with pytest.raises(Illegal, match="unknown statement form 'nope'$"):
        forms.form("nope")
    with pytest.raises(Illegal, match="--ops"):
        forms.form("mylib::op")


def test_a_form_joins_once_and_a_taken_name_stays_taken(monkeypatch):
    monkeypatch.setattr(forms, "FORMS", dict(forms.FORMS))
    mine = dataclasses.replace(forms.form("p_sin"), name="mylib::sin", custom="mylib::sin")
    forms.add(mine)
    forms.add(mine)
    assert forms.form("mylib::sin") is mine
    with pytest.raises(ValueError, match="taken"):
        forms.add(dataclasses.replace(mine, name="p_mix"))


def test_the_marks_an_eager_run_cannot_take():
    def body(*names):
        return [type("S", (), {"form": n})() for n in names]

    assert forms.mark_substitutes(body("p_sin")) == {}
    assert forms.mark_substitutes(body("p_sin", "cond_tap")) == {"unbacked": "dynamic"}
    assert forms.mark_substitutes(body("scan_tap", "cond_tap")) == {"dynamic": "maybe", "unbacked": "maybe"}
    assert forms.eager_traces(body("map_tap")) and not forms.eager_traces(body("in_region_p_sin"))
