"""A bug class's family (``fuzzer.triage.family``): wrong values wherever they land are
one, an effect log's order is its own, an error is its class; bug classes written as
their text (``helpers.klass``)."""

import pytest
from helpers import klass

from fuzzer.triage import family as fam


@pytest.mark.parametrize("bug_class, expected", [
    ("wrong-output|values", "corrupted-value|values"),
    ("wrong-mutation|non-finite,values", "corrupted-value|values"),
    ("effect-log|data", "corrupted-value|values"),
    ("effect-log|data,reordered", "effect-log|reordered"),
    ("effect-log|missing", "effect-log|missing"),
    ("wrong-output|shape", "wrong-output|shape"),        # a shape is no wrong value
    ("missed-dce", "missed-dce"),
    ("compile-error|raised KeyError in torch._inductor.scheduler:compute_ancestors",
     "compile-error|raised KeyError in torch._inductor.scheduler:compute_ancestors"),
    ("runtime-error|RuntimeError: buf12 has 3 elements", "runtime-error|RuntimeError: buf# has # elements"),
])
def test_the_family_of_a_bug_class(bug_class, expected):
    assert fam.family(klass(bug_class)) == klass(expected)


def test_a_stale_cache_family_drops_a_fake_impls_aspect_and_makes_wrong_values_one():
    assert fam.family(klass("stale-cache|fake-changed:shape,wrong-output,values")) == \
        fam.family(klass("stale-cache|fake-changed:stride,wrong-mutation,values")) == \
        klass("stale-cache|corrupted-value,fake-changed")
    # a setting a key missed is part of the bug; an order change keeps its words
    assert fam.family(klass("stale-cache|config-changed:a,wrong-output,values")) != \
        fam.family(klass("stale-cache|config-changed:b,wrong-output,values"))
    assert fam.family(klass("stale-cache|effect-log,reordered,x")) == klass("stale-cache|effect-log,reordered,x")


def test_what_is_left_once_a_familys_part_is_gone():
    found = klass("effect-log|data,reordered")
    assert fam.leftover(found, klass("effect-log|data"))          # the order went, the value stayed
    assert not fam.leftover(found, klass("effect-log|reordered"))  # the same family: nothing gone
    assert not fam.leftover(found, klass("wrong-output|values"))   # another kind
    assert not fam.leftover(klass("compile-error|x"), klass("compile-error|y"))


def test_symptoms_are_a_kind_and_a_set_of_words():
    assert fam.symptoms(klass("effect-log|reordered,data")) == ("effect-log", {"reordered", "data"})
