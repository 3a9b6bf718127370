"""The module-carry feature: a module whose state carries over from call to call (a KV
cache written at a position, running statistics); the state after each call is judged
as a written input (contract clause 2), and every run that judges it rebuilds it."""

import dataclasses

import pytest
import torch
from helpers import case, prog, run_pass, stays_while

from fuzzer.judge import contract
from fuzzer.judge.execute import execute, run_checks
from fuzzer.judge.observe import Coverage
from fuzzer.judge.trial import judge_case
from fuzzer.program import buffers, codegen, features, generate
from fuzzer.program.ir import InvalidProgram, Mode, Program, check
from fuzzer.reduce.signature import Signature

# x1 is the state: a KV cache written at position s0 % s1, then running statistics
BODY = [("k_put", ["x1", "x0"], None, {"site": 0, "at": "size"}),
        ("r_stat", ["x1", "x0"], None, {"site": 1, "m": 0.5}),
        ("p_sin", ["x1"], "v0", {"site": 2})]
FUNCTION = prog({"x0": ("s0",), "x1": ("s1",)}, BODY, outputs=["v0"], sym_min={"s0": 1, "s1": 4})
CARRY = dataclasses.replace(FUNCTION, mode=Mode(module=("x1",), carry=True))
#: the cache's length the same in every binding, the position another in each
PINNED = [{"s0": 3, "s1": 4}, {"s0": 5, "s1": 4}, {"s0": 2, "s1": 4}]


def _stand_in(loses_on=lambda call: False, raises_on=lambda call: False):
    """A 'compiled' module: an instance of the program's own class whose forward runs
    eagerly, except that on the calls ``loses_on(call number)`` picks it runs on a copy
    of its state, so that call's writes never reach it, and on those ``raises_on``
    picks it raises before it writes anything."""
    module, step = codegen.build_with_step(CARRY)
    forward, calls = module.forward, []

    def lossy(x0):
        calls.append(1)
        if raises_on(len(calls)):
            raise RuntimeError("the compiled call failed")
        if not loses_on(len(calls)):
            return forward(x0)
        kept = module.x1.clone()
        out = forward(x0)
        module.x1.copy_(kept)
        return out
    module.forward = lossy
    return codegen.driven(step, module)


def _verdict(compiled, c):
    runs = execute(c, "cpu", compiled=compiled)
    for br in runs:
        br.compiled.coverage = Coverage(frames=1, graphs=1)
    return judge_case(c, runs, "cpu")


def test_the_mode_round_trips_and_a_carry_needs_a_module():
    assert Program.from_json(CARRY.to_json()) == CARRY
    assert "carry" not in dataclasses.replace(FUNCTION, mode=Mode(module=("x1",))).to_json()["mode"]
    with pytest.raises(InvalidProgram):
        check(dataclasses.replace(FUNCTION, mode=Mode(carry=True)))


def test_the_step_loads_the_draw_at_the_first_call_only():
    module, step = codegen.build_with_step(CARRY)
    first, second = torch.zeros(4), torch.full((4,), 100.0)
    step(module, torch.ones(2), first)
    after_one = first.clone()                      # what the first call left: judged as x1
    assert torch.equal(after_one, module.x1)
    step(module, torch.ones(2), second)            # its draw is not loaded: the state carries
    fresh, fresh_step = codegen.build_with_step(CARRY)
    again = after_one.clone()
    fresh_step(fresh, torch.ones(2), again)
    assert torch.equal(second, again) and not torch.equal(second, torch.full((4,), 100.0))
    loaded, loaded_step = codegen.build_with_step(dataclasses.replace(CARRY, mode=Mode(module=("x1",))))
    loaded_step(loaded, torch.ones(2), torch.zeros(4))
    reloaded = torch.full((4,), 100.0)
    loaded_step(loaded, torch.ones(2), reloaded)   # without carry the draw is loaded each call
    assert reloaded.min() > 20


def test_an_honest_module_is_clean():
    verdict = _verdict(_stand_in(), case(CARRY, PINNED))
    assert verdict.status == contract.OK and verdict.kinds() == [], verdict.reason


def test_a_state_that_diverges_only_at_call_2_is_wrong_mutation_there():
    verdict = _verdict(_stand_in(lambda call: call == 2), case(CARRY, PINNED))
    assert verdict.kinds() == [contract.WRONG_MUTATION]
    assert [(d.binding, d.where) for d in verdict.divergences] == [(1, "input x1")]  # call 3 is not judged


def test_a_call_after_one_that_diverged_is_not_judged():
    """STATE CARRIED: call 3 starts from the state a failed call 2 left, another than
    eager's; what it then does is no further finding (the allowed side), where a module
    loaded before each call is judged at every call (the forbidden side)."""
    c = case(CARRY, PINNED)
    verdict = _verdict(_stand_in(raises_on=lambda call: call == 2), c)
    assert verdict.kinds() == [contract.RUNTIME_ERROR] and {d.binding for d in verdict.divergences} == {1}
    runs = execute(c, "cpu", compiled=_stand_in(raises_on=lambda call: call == 2))
    for br in runs:
        br.compiled.coverage = Coverage(frames=1, graphs=1)
    unguarded = contract.judge_runs(["x0", "x1"], {}, run_checks(c, "cpu", runs, [0, 1, 2]), contract.Asks())
    assert contract.WRONG_MUTATION in unguarded.kinds()   # what the clause keeps out


def test_every_check_run_rebuilds_the_state_of_the_calls_before_it():
    """Eager again and the float64 reference of binding k run bindings 0..k-1 first: they
    end where eager ended, and their traces hold binding k's calls only."""
    c = case(CARRY, PINNED)
    runs = run_checks(c, "cpu", execute(c, "cpu", compiled=_stand_in()), [0, 1, 2])
    for br in runs:
        assert torch.equal(br.checks.eager_again.inputs_after[1], br.eager.inputs_after[1])
        assert torch.allclose(br.checks.reference.inputs_after[1].float(), br.eager.inputs_after[1], atol=1e-4)
        assert br.checks.eager_again.calls == br.eager.calls


def test_the_shrinker_drops_the_carry_then_the_module_where_the_bug_allows():
    assert run_pass("mode", case(CARRY, PINNED), stays_while(lambda c: True)).best.program.mode == Mode()
    kept = run_pass("mode", case(CARRY, PINNED), stays_while(lambda c: c.program.mode.carry))
    assert kept.best.program.mode == Mode(module=("x1",), carry=True)


def test_the_feature_draws_a_pinned_state_written_by_a_kv_cache_and_running_statistics():
    drawn = [generate.generate(seed, features={features.MODULE_CARRY: 1.0}) for seed in range(30)]
    for c in drawn:
        c.validate()
        program = c.program
        (name,) = program.mode.module
        assert program.mode.carry and features.MODULE_CARRY in program.features()
        dims = dict((i.name, i.dims) for i in program.inputs)[name]
        shapes = {tuple(b[d] for d in dims) for b in c.bindings}
        assert len(shapes) == 1 and min(shapes.pop()) in buffers.STATE_LENGTHS  # one shape for every call
        writes = [s.form for s in program.body if s.args[:1] == (name,) and s.form in buffers.STATE_WRITES]
        assert writes[:1] == ["k_put"] and writes[-1:] == ["r_stat"], writes
        assert len({tuple(sorted(b.items())) for b in c.bindings}) > 1
    assert generate.generate(7, features={features.MODULE_CARRY: 1.0}) == drawn[7]
    assert not any(generate.generate(seed).program.mode.carry for seed in range(30))


def test_the_brief_runs_earlier_bindings_through_eager_s_module_too():
    from fuzzer.corpus.entry import Entry
    from fuzzer.render import brief

    entry = Entry(id="x", kind=contract.WRONG_MUTATION, signature=Signature.parse("wrong-mutation|values :: x"),
                  seed=None,
                  device="cpu", backend="inductor", torch_version=torch.__version__, case=case(CARRY, PINNED),
                  detail=["[wrong-mutation] binding 2, input x1: values differ"])
    text = brief.render(entry)
    assert text.count("step(program, ") == 2, text


@pytest.mark.compile
def test_inductor_keeps_a_carried_state_and_a_planted_lost_write_is_caught():
    from fuzzer import faults
    from fuzzer.judge.trial import run_trial

    honest = run_trial(case(CARRY, PINNED), "cpu")
    assert honest.status == "clean" and not honest.findings, honest.verdict.reason
    with faults.planted("mutation-lost"):
        planted = run_trial(case(CARRY, PINNED), "cpu")
    by_kind = {f.kind: f for f in planted.findings}
    assert contract.WRONG_MUTATION in by_kind
    assert {d.where for d in by_kind[contract.WRONG_MUTATION].divergences} == {"input x1"}
