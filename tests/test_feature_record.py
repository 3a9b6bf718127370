"""One feature as a record (``fuzzer.program.feature_record``): what a feature says of
itself where it says nothing (every torch runs it, a program shows it only by its forms),
and that every declared one is a chance with words for its help; no program drawn."""

import dataclasses

import pytest
from helpers import prog

from fuzzer.program import features
from fuzzer.program.feature_record import Feature, always_available, shown_by_forms


def test_a_feature_that_says_nothing_runs_everywhere_and_shows_by_its_forms_only():
    plain = Feature("a-feature", 0.5, "what a program with it has")
    assert plain.unavailable is always_available and plain.unavailable() is None
    assert plain.seen_in is shown_by_forms and not plain.seen_in(prog({"x0": ("s0",)}, []))
    assert plain.implies == () and plain.excludes == ()
    with pytest.raises(dataclasses.FrozenInstanceError):
        plain.weight = 1.0


def test_every_declared_feature_has_a_weight_that_is_a_chance_and_words_for_its_help():
    for feature in features.FEATURES:
        assert 0.0 < feature.weight <= 1.0 and feature.doc.strip(), feature.name
