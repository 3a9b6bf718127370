"""Mutations of the IR (``fuzzer.feedback.mutate``): every mutant legal, deterministic
for its seed, runnable eagerly, and changed in the way its mutation says."""

import random

import pytest

from fuzzer.feedback.mutate import MUTATIONS, Context, mutate
from fuzzer.judge.execute import run_eager
from fuzzer.program import features as feats
from fuzzer.program import forms
from fuzzer.program.generate import generate, program_seed

CASES = [generate(program_seed(3, i), features=feats.ALL) for i in range(24)]
CTX = Context(on=frozenset(feats.ALL))


def _mutants(name: str, tries: int = 3):
    out = []
    for j, case in enumerate(CASES):
        for r in range(tries):
            donor = CASES[(j + 1) % len(CASES)]
            ctx = Context(on=CTX.on, donor=donor)
            mutant = mutate(name, case, random.Random(f"{name}-{j}-{r}"), ctx)
            if mutant is not None:
                out.append((case, mutant, (name, j, r, donor)))
    return out


@pytest.mark.parametrize("name", sorted(MUTATIONS))
def test_each_mutation_gives_legal_mutants_the_same_for_the_same_seed(name):
    mutants = _mutants(name)
    # a mutation that never applies would be a dead arm of the schedule
    assert len(mutants) >= len(CASES), (name, len(mutants))
    for case, mutant, (_, j, r, donor) in mutants:
        mutant.validate()
        assert mutant != case
        again = mutate(name, case, random.Random(f"{name}-{j}-{r}"), Context(on=CTX.on, donor=donor))
        assert again == mutant and again.program.digest() == mutant.program.digest()


@pytest.mark.parametrize("name", sorted(MUTATIONS))
def test_mutants_run_eagerly(name):
    """Legal for the IR is legal for eager torch too: no mutant is invalid by itself."""
    for _, mutant, _ in _mutants(name, tries=1)[:8]:
        failures = [br.eager.failure for br in run_eager(mutant, "cpu") if br.eager.failure]
        assert not failures, (name, failures[0])


def _sizes(case):
    return len(case.program.body)


def test_each_mutation_changes_what_it_says():
    for case, m, _ in _mutants("delete"):
        assert _sizes(m) < _sizes(case) and m.program.mode == case.program.mode
    for case, m, _ in _mutants("insert"):
        assert _sizes(m) == _sizes(case) + 1
    for case, m, _ in _mutants("swap"):
        changed = [(a, b) for a, b in zip(case.program.body, m.program.body) if a != b]
        assert _sizes(m) == _sizes(case) and len(changed) == 1
        old, new = changed[0]
        assert old.form != new.form and old.args == new.args and old.out == new.out
    for case, m, _ in _mutants("write"):
        added = [s for s in m.program.body if s not in case.program.body]
        assert len(added) == 1 and forms.form(added[0].form).mutates
    for case, m, _ in _mutants("view-write"):
        added = [s for s in m.program.body if s not in case.program.body]
        view, write = added
        assert forms.form(view.form).is_view and write.args[0] == view.out
        assert 0 in forms.form(write.form).mutates
    for case, m, _ in _mutants("resize"):
        assert m.program.body == case.program.body and m.program.mode == case.program.mode
        assert (m.bindings, m.program.sym_min) != (case.bindings, case.program.sym_min)
    for case, m, _ in _mutants("remark"):
        assert m.program.body == case.program.body and m.bindings == case.bindings
        assert (m.program.mode.marks, m.program.mode.dynamic) != (case.program.mode.marks, case.program.mode.dynamic)
    for case, m, _ in _mutants("remode"):
        assert m.program.mode != case.program.mode or any(s.form == "graph_break" for s in m.program.body)
    for case, m, (_, _, _, donor) in _mutants("splice"):
        assert _sizes(m) == _sizes(case) + _sizes(donor)


def test_a_mutant_that_breaks_a_rule_is_discarded():
    """The IR decides: a mutation whose result fails ``Case.validate`` gives None."""
    from fuzzer.feedback import mutate as mod
    from fuzzer.program.ir import Stmt

    def broken(case, rng, ctx):  # reads a value nobody defined
        return mod._with(case, body=case.program.body + (Stmt("clone", ("nowhere",), "v999", {}),))

    MUTATIONS["broken"] = mod.Mutation("broken", broken)
    try:
        assert mutate("broken", CASES[0], random.Random(0), CTX) is None
    finally:
        del MUTATIONS["broken"]
