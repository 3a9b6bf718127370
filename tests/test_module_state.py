"""The module-state feature: a program that is an ``nn.Module`` whose forward writes its
buffers; its state after each call is judged as a written input (contract clause 2)."""

import dataclasses

import pytest
import torch
from helpers import case, prog, run_pass, stays_while

from fuzzer.judge import contract
from fuzzer.judge.execute import execute
from fuzzer.judge.observe import Coverage
from fuzzer.judge.trial import judge_case
from fuzzer.program import codegen, features, generate
from fuzzer.program.ir import InvalidProgram, Mode, Program, check

# x1 is the module's buffer: the forward scales it in place, then reads it
BODY = [("m_scale", ["x1"], None, {"site": 0}),
        ("p_sin", ["x1"], "v0", {"site": 1}),
        ("add", ["v0", "x0"], "v1", {})]
FUNCTION = prog({"x0": ("s0",), "x1": ("s0",)}, BODY, outputs=["v1"])
MODULE = dataclasses.replace(FUNCTION, mode=Mode(module=("x1",)))
#: a buffer of a fixed shape over the bindings: the same tensor on every call
FIXED = [{"s0": 5}, {"s0": 5}, {"s0": 5}]


def _stand_in(loses_on=lambda calls: False):
    """A 'compiled' module: an instance of the program's own class whose forward runs
    eagerly, except that on the calls ``loses_on(call number)`` picks it runs on a copy
    of its buffer, so the write never reaches the module's state."""
    module, step = codegen.build_with_step(MODULE)
    forward, calls = module.forward, []

    def lossy(x0):
        calls.append(1)
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


def test_the_mode_round_trips_and_old_json_has_no_module():
    assert Program.from_json(MODULE.to_json()) == MODULE
    assert "module" not in FUNCTION.to_json().get("mode", {}) and FUNCTION.mode.module == ()
    assert Program.from_json(FUNCTION.to_json()).mode == Mode()


@pytest.mark.parametrize("mode", [Mode(module=("x9",)), Mode(module=("x1", "x1")), Mode(module=("x1",), grad=True),
                                  Mode(module=("x1",), strided=("x1",)), Mode(module=("x1",), aliases=(("x1", "x0"),)),
                                  Mode(module=("x1",), marks=(("x1", 0, "dynamic"),))])
def test_a_buffer_the_step_cannot_hand_over_as_it_is_is_refused(mode):
    with pytest.raises(InvalidProgram):
        check(dataclasses.replace(FUNCTION, mode=mode))


def test_the_program_is_a_module_whose_step_loads_and_reads_its_buffers():
    text = codegen.source(MODULE)
    assert "class Program(torch.nn.Module):" in text and "self.register_buffer('x1', None)" in text
    assert "def forward(self, x0):" in text and "x1 = self.x1" in text and "program = Program()" in text
    assert "outs = fn(x0)" in text and "x1.copy_(fn.x1)" in text
    module, step = codegen.build_with_step(MODULE)
    x0, x1 = torch.ones(3), torch.full((3,), 4.0)
    step(module, x0, x1)
    assert torch.equal(x1, module.x1) and torch.equal(x1, torch.full((3,), 3.0))  # 4 * 0.5 + 1
    buffer = module.x1
    step(module, x0, torch.full((3,), 4.0))
    assert module.x1 is buffer                     # the same tensor on the next call
    step(module, torch.ones(4), torch.ones(4))
    assert module.x1.shape == (4,)                 # a new one where the shape changed


def test_an_honest_module_is_clean():
    verdict = _verdict(_stand_in(), case(MODULE, FIXED))
    assert verdict.status == contract.OK and verdict.kinds() == [], verdict.reason


def test_a_lost_buffer_write_is_wrong_mutation_on_each_call_it_is_lost():
    verdict = _verdict(_stand_in(lambda call: call == 2), case(MODULE, FIXED))
    assert verdict.kinds() == [contract.WRONG_MUTATION]
    assert [(d.binding, d.where) for d in verdict.divergences] == [(1, "input x1")]


def test_the_shrinker_turns_a_module_into_a_function_where_the_bug_allows():
    assert run_pass("mode", case(MODULE), stays_while(lambda c: True)).best.program.mode == Mode()
    kept = run_pass("mode", case(MODULE), stays_while(lambda c: bool(c.program.mode.module)))
    assert kept.best.program.mode.module == ("x1",)


def test_the_feature_draws_modules_whose_buffers_a_custom_op_writes_first():
    drawn = [generate.generate(seed, features={features.MODULE_STATE: 1.0}) for seed in range(30)]
    modules = [c for c in drawn if c.program.mode.module]
    assert len(modules) >= 20
    for c in modules:
        c.validate()
        assert features.MODULE_STATE in c.program.features()
    assert not any(generate.generate(seed).program.mode.module for seed in range(30))


@pytest.mark.compile
def test_inductor_keeps_a_module_s_state_and_a_planted_lost_write_is_caught():
    from fuzzer import faults
    from fuzzer.judge.trial import run_trial

    honest = run_trial(case(MODULE, FIXED), "cpu")
    assert honest.status == "clean" and not honest.findings, honest.verdict.reason
    with faults.planted("mutation-lost"):
        planted = run_trial(case(MODULE, FIXED), "cpu")
    # the forward reads the buffer after the lost write: its result is wrong as well
    by_kind = {f.kind: f for f in planted.findings}
    assert sorted(by_kind) == [contract.WRONG_MUTATION, contract.WRONG_OUTPUT]
    assert {d.where for d in by_kind[contract.WRONG_MUTATION].divergences} == {"input x1"}


def test_every_check_run_of_a_module_takes_one_path_through_its_loads():
    """A module's check runs each start from a module of their own: the float64 and noisy
    references of a float16 program record one path, so the noisy ones are used."""
    from fuzzer.judge.execute import run_checks

    c = case(dataclasses.replace(MODULE, mode=Mode(module=("x1",), dtype="float16")), FIXED)
    runs = run_checks(c, "cpu", execute(c, "cpu", compiled=_stand_in()), [0, 1, 2])
    for br in runs:
        assert br.checks.eager_again.path == br.checks.reference.path
        assert [n.path == br.checks.reference.path for n in br.checks.noisy] == [True] * 3
