"""Storage swaps (feature ``storage-swaps``): ``set_`` and ``resize_`` in a program
(``fuzzer.program.swap_forms``) and inside custom ops (``fuzzer.program.families.swaps``).

What the IR says of a swap (``storage.Swaps``: the swapped value's storage and
footprint, the name not read again, the old storage not written), both sides; the
contract judging writes made through a swapped tensor, on stand-in 'compiled'
functions (as in ``test_contract``); generation, shrinking; one real compile.
"""

import dataclasses
import random

import pytest
import torch
from helpers import case, prog
from test_contract import verdict

from fuzzer.judge import contract
from fuzzer.program import codegen, features, forms
from fuzzer.program.generate import draft_at, generate
from fuzzer.program.ir import InvalidProgram, Mode, check
from fuzzer.reduce.passes.rewrite import statement_edits

ops = torch.ops.dcefuzz
X = {"x0": ("s0", "s1"), "x1": ("s0", "s1")}


def _program(body, outputs=()):
    return prog(X, body, outputs=outputs)


# ------------------------------------------------------------- the storage model

#: v0 a fresh result, swapped onto x1's storage as v1
SWAPPED = [("clone", ["x0"], "v0", {}), ("swap", ["x1", "v0"], "v1", {})]


def test_a_swapped_value_is_a_view_of_the_storage_it_was_set_onto():
    typing = check(_program(SWAPPED, ["v1"]))
    assert typing.root["v1"] == "x1" and typing.prints["v1"] == typing.prints["x1"]
    assert typing.root["v0"] == "v0"  # the old storage keeps its name


def test_a_write_through_a_swapped_value_beside_a_read_of_its_new_storage_is_refused():
    check(_program(SWAPPED + [("m_addto", ["v1", "x0"], None, {"site": 0})]))
    with pytest.raises(InvalidProgram, match="shares storage"):
        check(_program(SWAPPED + [("m_addto", ["v1", "x1"], None, {"site": 0})]))


@pytest.mark.parametrize("later,outputs", [
    ([("p_sin", ["v0"], "v2", {"site": 0})], ()),   # the swapped name read again
    ([], ("v0",)),                                   # or returned
])
def test_a_swapped_name_is_not_read_again(later, outputs):
    check(_program(SWAPPED + [("p_sin", ["v1"], "v2", {"site": 0})], ["v1"]))
    with pytest.raises(InvalidProgram, match="swapped"):
        check(_program(SWAPPED + later, outputs))


def test_the_old_storage_is_read_after_a_swap_but_never_written():
    """Functionalization freezes the storage a tensor was set away from."""
    before = [("clone", ["x0"], "v0", {}), ("head", ["v0"], "v2", {"dim": 0}), ("swap", ["x1", "v0"], "v1", {})]
    check(_program(before + [("p_sin", ["v2"], "v3", {"site": 0})], ["v3"]))
    with pytest.raises(InvalidProgram, match="frozen"):
        check(_program(before + [("m_scale", ["v2"], None, {"site": 0})]))


@pytest.mark.parametrize("body", [
    [("swap", ["x1", "x0"], "v1", {})],                                              # an input
    [("clone", ["x0"], "v0", {}), ("alias", ["v0"], "v2", {}), ("swap", ["x1", "v2"], "v1", {})],  # a view
    [("clone", ["x0"], "v0", {}), ("alias", ["v0"], "v2", {}), ("swap", ["v2", "v0"], "v1", {})],  # its own
])
def test_only_a_fresh_result_is_swapped_onto_another_storage(body):
    check(_program(SWAPPED))
    with pytest.raises(InvalidProgram, match="set_ swaps"):
        check(_program(body))


def test_a_tensor_set_onto_a_storage_shares_it_and_a_resized_buffer_is_its_own():
    aliased = _program([("set_alias", ["x0"], "v0", {}), ("m_addto", ["v0", "x0"], None, {"site": 0})])
    with pytest.raises(InvalidProgram, match="shares storage"):
        check(aliased)
    for fresh in ("set_clone", "resize_copy"):
        typing = check(_program([(fresh, ["x0"], "v0", {}), ("m_addto", ["v0", "x0"], None, {"site": 0})]))
        assert typing.root["v0"] == "v0"
    assert check(_program([("resize_head", ["x0"], "v0", {})])).dims["v0"] == ("s0 // 2", "s1")


# ------------------------------------------------------------- the contract

#: x0 written through a tensor set onto its storage; x1 by an op that writes it through one
WRITES = case(_program([("set_alias", ["x0"], "v0", {}), ("mul_", ["v0"], None, {"c": 2.0}),
                        ("r_setw", ["x1"], None, {"site": 0}), ("r_resize", ["v0", "x1"], None, {"site": 1})]))


def _writes(x0, x1):
    v0 = x0.new_empty(0).set_(x0)
    v0.mul_(2.0)
    ops.r_setw(x1, 0)
    ops.r_resize(v0, x1, 1)
    return ()


def _writes_a_copy(x0, x1):
    v0 = x0.clone()  # the set_ read as a clone: the writes miss x0
    v0.mul_(2.0)
    ops.r_setw(x1, 0)
    ops.r_resize(v0, x1, 1)
    return ()


def _drops_the_op_write(x0, x1):
    v0 = x0.new_empty(0).set_(x0)
    v0.mul_(2.0)
    ops.r_setw(x1.clone(), 0)
    ops.r_resize(v0, x1, 1)
    return ()


def test_writes_through_a_swapped_tensor_are_judged_on_the_inputs():
    assert verdict(_writes, WRITES).kinds() == []
    assert verdict(_writes_a_copy, WRITES).kinds() == [contract.WRONG_MUTATION]
    assert verdict(_drops_the_op_write, WRITES).kinds() == [contract.WRONG_MUTATION]


# ------------------------------------------------------------- generation, shrinking

def test_generated_programs_with_the_feature_are_legal_and_use_every_form():
    table = features.parse("storage-swaps=1.0")
    used = set()
    for seed in range(120):
        program = generate(seed, features=table).program
        check(program)
        used |= {s.form for s in program.body}
    assert {f.name for f in forms.FORMS.values() if f.feature == features.STORAGE_SWAPS} <= used


def test_the_feature_is_read_off_a_program_and_programs_without_it_are_as_before():
    assert features.used_by(_program(SWAPPED)) == [features.STORAGE_SWAPS]
    names = [f.name for f in features.FEATURES]  # appended after those before it: their draws stay
    assert names.index(features.STORAGE_SWAPS) > names.index(features.OVERLAPPING)


@pytest.mark.parametrize("form,plain", [("swap", "set_alias"), ("set_alias", "alias"), ("resize_head", "head"),
                                        ("r_setw", "m_scale"), ("r_workspace", "p_sin")])
def test_a_swap_shrinks_toward_the_plain_form(form, plain):
    arity = forms.form(form).arity
    args = ["x1", "v0"][:arity] if form == "swap" else ["x0", "x1"][:arity]
    attrs = {"site": 1} if forms.form(form).is_custom else {}
    out = "v1" if forms.form(form).returns else None
    c = case(_program([("clone", ["x0"], "v0", {}), (form, args, out, attrs)]))
    assert plain in {s.form for e in statement_edits(c) for s in e.program.body}


# ------------------------------------------------------------- a real compile

@pytest.mark.compile
def test_swaps_compile_whole_and_as_eager_runs_them():
    """Dynamo traces ``set_`` on a tensor the function made (onto an input's storage, or
    a fresh result's), and the ops' kernels run as they are: one graph, no finding."""
    from fuzzer.judge.execute import execute
    from fuzzer.judge.trial import judge_case
    body = [("clone", ["x0"], "v0", {}), ("swap", ["x1", "v0"], "v1", {}), ("mul_", ["v1"], None, {"c": 2.0}),
            ("set_alias", ["x0"], "v2", {}), ("r_setw", ["v2"], None, {"site": 0}),
            ("r_workspace", ["x1"], "v3", {"site": 1}), ("r_resize", ["x0", "v3"], None, {"site": 2})]
    program = dataclasses.replace(_program(body, ["v3"]), mode=Mode(module=("x1",)))
    c = case(program, [{"s0": 3, "s1": 4}, {"s0": 5, "s1": 2}])
    assert "self.x1.set_" not in codegen.source(program)  # the buffer is swapped onto, never swapped
    found = judge_case(c, execute(c, "cpu"), "cpu")
    assert found.status == contract.OK and found.divergences == [] and found.untested == [], found


def test_a_mutation_grows_a_program_past_a_swap_without_its_swapped_values():
    """The generator's state after a swap (``generate.draft_at``) offers neither the
    swapped name nor a view of the storage it left."""
    program = _program([("clone", ["x0"], "v0", {}), ("head", ["v0"], "v2", {"dim": 0}),
                        ("swap", ["x1", "v0"], "v1", {})])
    assert draft_at(program, 3, random.Random(0)).order == ["x0", "x1", "v1"]
