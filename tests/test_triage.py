"""Triage: the stage of the compiler a finding's bug first appears in."""

from pathlib import Path

import backends
from helpers import case, prog

from fuzzer.corpus.store import load
from fuzzer.judge import contract
from fuzzer.triage.stage import STAGES, first_stage

LOG = prog({"x0": ("s0",)}, [("p_sin", ["x0"], "v0", {"site": 0}),
                              ("e_log", ["v0"], None, {"site": 1})], outputs=["v0"])
CORPUS = Path(__file__).resolve().parent.parent / "corpus"


def test_the_first_stage_that_shows_the_bug_class_is_the_culprit():
    c = case(LOG)
    found = first_stage(c, contract.EFFECT_LOG, "effect-log|missing", "cpu",
                        stages=(backends.FAITHFUL, backends.DROP_LOG, backends.DROP_LOG_AND_MUTATION))
    assert (found.stage, found.oracle_calls) == (backends.DROP_LOG, 2)
    # another bug class of the same kind is not this bug: no stage shows it
    other = first_stage(c, contract.EFFECT_LOG, "effect-log|reordered", "cpu",
                        stages=(backends.FAITHFUL, backends.DROP_LOG))
    assert (other.stage, other.oracle_calls) == (None, 2)


def test_a_real_reordering_bug_lives_in_inductor():
    entry = load(CORPUS / "effect-log-915158cff0e3.json")
    found = first_stage(entry.case, entry.kind, entry.bug_class, "cpu")
    assert found.stage == "inductor" and found.oracle_calls == len(STAGES)
