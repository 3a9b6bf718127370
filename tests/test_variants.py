"""Declaration variants of a cache pair (``fuzzer.cache.variants``): each edit of an op's
snippet, the variants a program has, and the one drawn; snippets as text, no pair run."""

import random

from helpers import prog

from fuzzer.cache import variants
from fuzzer.cache.variants import Variant
from fuzzer.program.custom_ops import BY_NAME

ADDTO = BY_NAME["m_addto"].source     # mutates a, reads b
SIN = BY_NAME["p_sin"].source         # pure
LOG = BY_NAME["e_log"].source         # effectful


def test_a_declaration_is_read_and_rewritten():
    assert variants._declared(ADDTO) == ["a"] and variants._tensor_args(ADDTO, "m_addto") == ["a", "b"]
    assert 'mutates_args=("a", "b")' in variants._with_mutates(ADDTO, ["a", "b"])
    assert 'mutates_args=("a",)' in variants._with_mutates(ADDTO, ["a"])
    assert "mutates_args=()" in variants._with_mutates(ADDTO, [])


def test_an_effect_is_added_to_a_pure_op_and_removed_from_an_effectful_one():
    added = variants._add_effect(SIN, "p_sin")
    assert added.rstrip().endswith("_register_ordered(p_sin)") and "effect=True)" in added
    removed = variants._remove_effect(LOG, "e_log")
    assert "_register_ordered(e_log)" not in removed and "effect=True" not in removed


def test_a_fake_or_a_body_is_edited_and_nothing_else():
    for aspect in variants.FAKE_ASPECTS:
        edited = variants._edit_fake(SIN, "p_sin", aspect)
        real, fake = variants._real_and_fake(edited, "p_sin")
        assert real == variants._real_and_fake(SIN, "p_sin")[0] and fake != variants._real_and_fake(SIN, "p_sin")[1]
    body = variants._edit_body(SIN, "p_sin")
    assert f"* {variants.EAGER_SCALE}" in variants._real_and_fake(body, "p_sin")[0]
    assert variants._real_and_fake(body, "p_sin")[1] == variants._real_and_fake(SIN, "p_sin")[1]


def test_a_label_names_the_fakes_aspect_and_the_setting_and_a_variant_round_trips():
    fake = Variant(variants.FAKE_CHANGED, "p_sin", "p_sin: fake impl wrong -> right in stride")
    config = Variant(variants.CONFIG_CHANGED, "", "x", config_new={"torch._functorch.config.donated_buffer": False})
    assert fake.label == "fake-changed:stride" and config.label == "config-changed:donated_buffer"
    assert Variant.from_json(config.to_json()) == config and Variant.from_json(fake.to_json()) == fake


def test_a_programs_variants_are_those_of_its_ops_and_gradients_only_without_writes():
    reads = prog({"x0": ("s0",)}, [("p_sin", ["x0"], "v0", {"site": 0})])
    writes = prog({"x0": ("s0",), "x1": ("s0",)}, [("m_addto", ["x0", "x1"], None, {"site": 0})])
    assert variants.grad_applicable(reads) and not variants.grad_applicable(writes)
    kinds = {v.kind for v in variants.variants_of(writes) if v.op}
    assert {variants.MUTATES_FIXED, variants.MUTATES_NARROWED, variants.MUTATES_WIDENED} <= kinds
    assert variants.BACKWARD_CHANGED in {v.kind for v in variants.variants_of(reads)}
    assert not any(v.twice for v in variants.variants_of(writes))  # a backward twice needs gradients


def test_a_draw_is_the_same_for_its_seed_and_none_where_nothing_applies():
    p = prog({"x0": ("s0",)}, [("p_sin", ["x0"], "v0", {"site": 0})])
    assert [variants.draw(p, random.Random(k)) for k in range(10)] == \
        [variants.draw(p, random.Random(k)) for k in range(10)]
    plain = prog({"x0": ("s0",)}, [("clone", ["x0"], "v0", {})])
    assert all(v.kind == variants.CONFIG_CHANGED for v in variants.variants_of(plain))
