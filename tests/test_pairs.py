"""Inputs handed over as a tensor subclass (``fuzzer.program.pairs``, ``Mode.pairs``): the
IR's rules for them, the step that makes the pair and writes a module's pair back, the
generator's draws, and clause 2 judging what a write through the pair left."""

import dataclasses

import pytest
import torch
from helpers import case, prog

from fuzzer.judge import contract
from fuzzer.judge.execute import execute
from fuzzer.judge.observe import Coverage
from fuzzer.judge.trial import judge_case as judge
from fuzzer.program import codegen, features, generate, pairs
from fuzzer.program.dtypes import SUBCLASS
from fuzzer.program.families import subclass
from fuzzer.program.ir import InvalidProgram, Mode, Program, Stmt, check


def verdict(stand_in, c):
    runs = execute(c, "cpu", compiled=stand_in)
    for br in runs:
        br.compiled.coverage = Coverage(frames=1, graphs=1)
    return judge(c, runs, "cpu")


# x0 handed over as PairTensor(x0, x2): written in place through the pair, folded, returned
HANDED = dataclasses.replace(prog({"x0": ("s0",), "x1": ("s0",), "x2": ("s0",)}, [
    ("w_update", ["x0"], None, {"site": 0}),
    ("w_addto_plain", ["x0", "x1"], None, {"site": 1}),
    ("w_fold", ["x0"], "v0", {"site": 2}),
], outputs=["v0"]), mode=Mode(pairs=(("x0", "x2"),)))


def test_a_paired_input_is_a_pair_and_its_partner_no_value_of_the_program():
    typing = check(HANDED)
    assert typing.dtypes["x0"] == SUBCLASS and typing.dtypes["x2"] is None
    assert Program.from_json(HANDED.to_json()) == HANDED
    for body, outputs in (([("p_sin", ["x2"], "v0", {"site": 0})], ["v0"]), ([], ["x2"])):
        with pytest.raises(InvalidProgram):      # the partner is read as the pair's part only
            check(dataclasses.replace(HANDED, body=tuple(Stmt(f, tuple(a), o, at) for f, a, o, at in body),
                                      outputs=tuple(outputs)))
    for mode in (Mode(pairs=(("x0", "x2"),), grad=True, func_grad=True), Mode(pairs=(("x0", "x2"),), marks=(("x2", 0, "dynamic"),)),
                 Mode(pairs=(("x0", "x2"),), module=("x2",)), Mode(pairs=(("x0", "x2"), ("x1", "x2")))):
        with pytest.raises(InvalidProgram):
            check(dataclasses.replace(HANDED, mode=mode))
    assert "def program(x0, x1):" in codegen.source(HANDED) and "fn(PairTensor(x0, x2), x1)" in codegen.source(HANDED)


def test_the_step_hands_the_pair_over_and_its_writes_reach_both_drawn_tensors():
    fn, step = codegen.build_with_step(HANDED)
    x0, x1, x2 = torch.randn(4), torch.randn(4), torch.randn(4)
    a, b = x0.clone(), x2.clone()
    (folded,) = step(fn, x0, x1, x2)
    a = a * 1.5 - 0.5 + x1 * 0.5                    # w_update's part a, then w_addto's
    b = b + (a - x1 * 0.5) - x1                     # b += a (as w_update left it), then b -= y
    assert torch.allclose(x0, a) and torch.allclose(x2, b)
    assert torch.allclose(folded, a * 2 - 1 + b)


def test_a_module_s_buffer_that_is_a_pair_is_loaded_as_one_and_written_back_by_its_parts():
    module = dataclasses.replace(HANDED, mode=Mode(pairs=(("x0", "x2"),), module=("x0",), carry=True))
    fn, step = codegen.build_with_step(module)
    x0, x1, x2 = torch.zeros(4), torch.zeros(4), torch.zeros(4)
    step(fn, x0, x1, x2)
    assert type(fn.x0).__name__ == subclass.CLASS
    assert torch.equal(x0, fn.x0.a) and torch.equal(x2, fn.x0.b) and not torch.equal(x0, torch.zeros(4))
    again = (x0.clone(), x2.clone())
    step(fn, torch.full((4,), 9.0), x1, torch.full((4,), 9.0))   # carried: the draw is not loaded again
    assert torch.allclose(fn.x0.a, again[0] * 1.5 - 0.5)


def test_a_write_to_the_pair_s_second_part_lost_is_wrong_mutation_of_the_partner():
    """The forbidden side: a 'compiled' step that hands the op a copy of the partner
    loses what the pair's part b was written with (clause 2, judged as the input x2); the
    allowed side: the same step writing the copy back."""
    fn, step = codegen.build_with_step(HANDED)

    def losing(write_back: bool):
        def stand_in(x0, x1, x2):
            kept_b = x2.clone()
            outs = step(fn, x0, x1, kept_b)
            if write_back:
                x2.copy_(kept_b)
            return outs
        return stand_in

    c = case(HANDED, [{"s0": n} for n in (4, 7, 2)])
    v = verdict(losing(False), c)
    assert v.kinds() == [contract.WRONG_MUTATION] and {d.where for d in v.divergences} == {"input x2"}
    assert verdict(losing(True), c).kinds() == []


def test_the_feature_hands_inputs_over_as_pairs_and_modules_keep_them_as_state():
    drawn = [generate.generate(seed, features={**features.ALL, subclass.FEATURE: 1.0}) for seed in range(60)]
    paired = [c.program for c in drawn if c.program.mode.pairs]
    assert paired and any(n in p.mode.module for p in paired for n, _ in p.mode.pairs)
    assert any(p.mode.grad for p in paired) and not any(p.mode.func_grad for p in paired)
    for p in paired:
        assert subclass.FEATURE in p.features()
        partner = p.mode.pairs[0][1]
        assert not any(partner in s.args for s in p.body) and partner not in p.outputs


def test_the_helpers_say_how_the_step_hands_a_pair_over_and_writes_it_back():
    mode = Mode(pairs=(("x0", "x2"),))
    assert pairs.value("x0", mode) == "PairTensor(x0, x2)" and pairs.value("x1", mode) == "x1"
    assert pairs.partners(mode) == {"x2"} and pairs.kinds(mode) == {"x0": SUBCLASS}
    assert pairs.written_back("x0", "fn.x0", mode) == ["x0.copy_(fn.x0.a)", "x2.copy_(fn.x0.b)"]
    assert pairs.written_back("x1", "fn.x1", mode) == ["x1.copy_(fn.x1)"]


# x0 handed over as PairTensor(x0, x2) and trained: scaled, added to itself, returned beside a plain value
TRAINED = dataclasses.replace(prog({"x0": ("s0",), "x1": ("s0",), "x2": ("s0",)}, [
    ("pair_scale", ["x0"], "v0", {"c": 1.5}),
    ("pair_add", ["v0", "x0"], "v1", {}),
    ("p_sin", ["x1"], "v2", {"site": 0}),
], outputs=["v1", "v2"]), mode=Mode(pairs=(("x0", "x2"),), grad=True))


def test_a_trained_pair_is_the_leaf_and_its_gradient_s_parts_are_the_drawn_tensors_gradients():
    text = codegen.source(TRAINED)
    assert "pair_x0 = PairTensor(x0, x2).requires_grad_(True)" in text and "x0.requires_grad_" not in text
    fn, step = codegen.build_with_step(TRAINED)
    x0, x1, x2 = torch.randn(4), torch.randn(4), torch.randn(4)
    pair, plain, g0, g1, g2 = step(fn, x0, x1, x2)
    assert type(pair).__name__ == subclass.CLASS and pair.requires_grad and not x0.requires_grad
    assert torch.allclose(pair.a, x0 * 2.5) and torch.allclose(pair.b, x2 * 2.5)
    # the loss reads the pair as the sum of its parts: each part's gradient is 2.5
    assert torch.equal(g0, torch.full((4,), 2.5)) and torch.equal(g2, torch.full((4,), 2.5))
    assert torch.allclose(g1, torch.cos(x1))


def test_a_trained_pair_s_gradient_part_lost_is_wrong_output_of_that_part():
    """The forbidden side: a 'compiled' step whose pair's gradient lost its part b (a
    zero gradient where eager's is 2.5) differs in that gradient only; the allowed side:
    the step as it is."""
    fn, step = codegen.build_with_step(TRAINED)

    def stand_in(lose: bool):
        def run(x0, x1, x2):
            *outs, g2 = step(fn, x0, x1, x2)
            return (*outs, torch.zeros_like(g2) if lose else g2)
        return run

    c = case(TRAINED, [{"s0": n} for n in (4, 7)])
    v = verdict(stand_in(True), c)
    assert v.kinds() == [contract.WRONG_OUTPUT], [d.line() for d in v.divergences]
    # the gradients follow the two values returned, in the inputs' order: x2's is output 4
    assert {d.where for d in v.divergences} == {"output 4"}
    assert verdict(stand_in(False), c).kinds() == []


def test_a_trained_pair_s_gradient_that_lost_its_class_is_wrong_output_even_where_values_agree():
    """The forbidden side: a 'compiled' step whose pair's gradient is a plain tensor holding
    part a's values (a backward that lost the class, as one on an empty pair may) shows
    part b's gradient missing, not two tensors that agree; the allowed side: the class kept."""
    fn, step = codegen.build_with_step(TRAINED)

    class Declassed(torch.autograd.Function):
        @staticmethod
        def forward(ctx, pair):
            return pair.clone()

        @staticmethod
        def backward(ctx, grad):
            return grad.a.clone()

    def stand_in(lose: bool):
        return lambda x0, x1, x2: step(lambda p, x: fn(Declassed.apply(p) if lose else p, x), x0, x1, x2)

    c = case(TRAINED, [{"s0": n} for n in (4, 0)])
    v = verdict(stand_in(True), c)
    assert v.kinds() == [contract.WRONG_OUTPUT] and {d.where for d in v.divergences} == {"output 4"}, \
        [d.line() for d in v.divergences]
    assert verdict(stand_in(False), c).kinds() == []


@pytest.mark.compile
def test_an_honest_compile_of_a_trained_pair_is_clean():
    """The allowed side with a real compile: Inductor's forward and backward of a pair
    that requires grad, scaled, sliced, reduced and added, keep its gradient's parts."""
    from fuzzer.judge.observe import caches_off
    from fuzzer.judge.trial import run_trial
    program = dataclasses.replace(TRAINED, body=TRAINED.body + tuple(
        Stmt(f, tuple(a), o, at) for f, a, o, at in (("pair_head", ["v1"], "v3", {"dim": 0}), ("pair_sum", ["v3"], "v4", {"dim": 0}))),
        outputs=("v1", "v2", "v4"))
    c = case(program, [{"s0": n} for n in (4, 5)])
    with caches_off():
        result = run_trial(c, "cpu", confirm=False)
    assert result.status == "clean", result.verdict.divergences
