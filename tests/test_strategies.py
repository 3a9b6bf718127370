"""Hypothesis strategies of cases (``fuzzer.strategies``): legal cases of the features
asked for, each of at most the statements asked for; names checked before any draw."""

import pytest
from hypothesis import HealthCheck, given, settings

from fuzzer import strategies
from fuzzer.program import features as feats


def test_feature_names_are_none_all_or_those_named_and_known():
    assert strategies._feature_names("none") == [] and strategies._feature_names(None) == []
    assert strategies._feature_names("all") == list(feats.BY_NAME)
    assert strategies._feature_names("views") == ["views"]
    with pytest.raises(ValueError, match="unknown features"):
        strategies._feature_names(["views", "no-such-feature"])
    with pytest.raises(ValueError, match="at least 1"):
        strategies.cases(max_statements=0)


@settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))
@given(strategies.cases(features=["views", "hops"], max_statements=4))
def test_every_case_is_legal_and_of_the_features_asked(c):
    c.validate()
    assert len(c.program.body) <= 4
    assert set(c.program.features()) <= {"views", "hops"}


@settings(max_examples=5, deadline=None, suppress_health_check=list(HealthCheck))
@given(strategies.programs(max_statements=2))
def test_programs_are_the_cases_programs(p):
    assert len(p.body) <= 2 and not p.features()
