"""The statement the generator tries right after one that asks for it
(``fuzzer.program.follow_ups``): where a follow-up may start, which forms it tries,
and that what it offers is a legal statement of them."""

import dataclasses
import random

from helpers import prog

from fuzzer.program import features, follow_ups, forms
from fuzzer.program.form_record import INTEGER
from fuzzer.program.generate import draft_at, propose
from fuzzer.program.ir import Mode, check

X = {"x0": ("s0", "s1"), "x1": ("s0", "s1")}
ON = frozenset({features.INDEX_WRITES, features.DTYPE_READS, features.INPUT_SWAPS})


def _after(body, seed=0, **mode):
    """The generator's state after ``body`` and its last statement (with its form)."""
    p = prog(X, body)
    p = dataclasses.replace(p, mode=Mode(**mode)) if mode else p
    st = draft_at(p, len(body), random.Random(seed))
    st.inputs = frozenset(X)
    return st, p.body[-1], forms.form(p.body[-1].form)


def test_a_write_is_followed_on_the_tensor_it_wrote():
    st, stmt, form = _after([("clone", ["x1"], "v0", {}), ("put_perm", ["v0", "x1"], None, {"dim": 0})])
    assert follow_ups.firsts(stmt, form, st) == ["v0"]
    for seed in range(10):
        st.rng = random.Random(seed)
        again = follow_ups.then(stmt, form, st, ON, propose)
        assert again is not None and again.form in form.then and again.args[0] == "v0"


def test_a_swap_is_followed_on_the_views_of_the_storage_it_left():
    st, stmt, form = _after([("head", ["x0"], "v0", {"dim": 0}), ("set_scaled", ["x0"], None, {"c": 2.0})])
    assert follow_ups.firsts(stmt, form, st) == ["v0"]  # x0 itself is not read again
    again = follow_ups.then(stmt, form, st, ON, propose)
    assert again is not None and again.args[0] == "v0" and again.form in form.then
    check(prog(X, [("head", ["x0"], "v0", {"dim": 0}), ("set_scaled", ["x0"], None, {"c": 2.0}),
                   (again.form, again.args, again.out, again.attrs)]))


def test_a_follow_up_of_a_feature_the_program_lacks_is_never_offered():
    st, stmt, form = _after([("sign_clear", ["x0"], "v0", {})])
    assert follow_ups.then(stmt, form, st, ON, propose) is not None
    assert follow_ups.then(stmt, form, st, frozenset(), propose) is None  # slice_set, slice_fill: dtype-reads


def test_an_integer_just_made_is_used_by_a_form_that_reads_its_dtype():
    st, stmt, form = _after([("positive", ["x0"], "v0", {})])
    users = [f for f in forms.FORMS.values() if f.drawn_as == INTEGER]
    used = follow_ups.use(stmt, st, users, propose)
    assert used is not None and st.dtypes["v0"] in forms.form(used.form).operand_dtypes
