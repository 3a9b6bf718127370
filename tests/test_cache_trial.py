"""A cache pair's trial (``fuzzer.cache.trial``): its programs and variants drawn from the
seed, the jobs its sides run, and a stale cache confirmed on a second pair; pairs stood
in, no process started."""

import pytest

from fuzzer.cache import pair, trial
from fuzzer.judge import contract
from fuzzer.judge.observe import Gap
from fuzzer.limits import CACHE
from fuzzer.program import forms

STALE = contract.Divergence(contract.STALE_CACHE, 0, "output 0", "x", ("mutates-fixed", "wrong-output", "values"))


def test_a_pairs_program_and_variant_are_drawn_from_its_seed_without_effects():
    for pseed in range(8):
        c = trial.cache_case(pseed)
        assert c == trial.cache_case(pseed) and len(c.bindings) <= CACHE.bindings
        assert not any(forms.form(s.form).is_effectful for s in c.program.body)
        assert trial.variant_for(c, pseed) == trial.variant_for(c, pseed)


def test_each_side_gets_its_library_the_program_and_what_draws_its_inputs():
    c = trial.cache_case(3)
    variant = trial.variant_for(c, 3)
    assert variant is not None
    jobs = trial.jobs_of(c, variant, "cpu", "inductor", fault="f", threads=2)
    assert set(jobs) == {pair.OLD, pair.NEW}
    assert all(job["fault"] == "f" and job["threads"] == 2 for job in jobs.values())
    assert trial.spec_of(c, "inductor") == {"input_seed": c.input_seed, "bindings": [dict(b) for b in c.bindings],
                                            "input_dims": [list(i.dims) for i in c.program.inputs],
                                            "backend": "inductor"}


@pytest.fixture
def pairs(monkeypatch):
    """The verdicts the pairs give, in order."""
    given = []
    monkeypatch.setattr(trial, "judge_pair", lambda *a, **k: given.pop(0))
    return given


@pytest.mark.parametrize("verdicts, status", [
    ([contract.Verdict(contract.OK, [STALE]), contract.Verdict(contract.OK, [STALE])], "finding"),
    ([contract.Verdict(contract.OK, [STALE]), contract.Verdict(contract.OK)], "flaky"),
    ([contract.Verdict(contract.OK)], "clean"),
    ([contract.Verdict(contract.OK, untested=[Gap(pair.CACHE_MISS)])], "untested"),
    ([contract.Verdict(contract.INVALID, reason="a side failed")], "invalid"),
])
def test_a_stale_cache_is_a_finding_only_if_a_second_pair_shows_it_again(pairs, verdicts, status):
    pairs.extend(verdicts)
    c = trial.cache_case(3)
    result = trial.run_cache_trial(c, trial.variant_for(c, 3), "cpu")
    assert result.status == status and pairs == []
    if status == "finding":
        assert result.findings[0].variant == trial.variant_for(c, 3).to_json()
