"""``autograd.Function`` shapes as libraries write them (``families.fnshapes``, feature
``function-shapes``): what the generator draws, the text, what autograd allows, how they
shrink, and (marked ``compile``) that compiled code runs them as eager does and that a
lost write inside one is caught."""

import dataclasses

import pytest
import torch
from helpers import case, prog, run_pass, stays_while

from fuzzer.program import codegen, features, forms
from fuzzer.program.generate import generate
from fuzzer.program.ir import InvalidProgram, Mode, check
from fuzzer.reduce.passes.rewrite import statement_edits

SHAPES = ("fn_pair", "fn_linear", "fn_gradbuf", "fn_saved")
PAIRS = ("fn_pair", "fn_linear")


def _grad(body, outputs=("v0",)):
    return dataclasses.replace(prog({"x0": ("s0",)}, body, outputs=list(outputs)), mode=Mode(grad=True))


def test_drawn_programs_are_legal_use_every_shape_and_may_give_one_value_as_both_arguments():
    table = features.parse("function-shapes=1.0,autograd=1.0")
    calls = []
    for seed in range(60):
        program = generate(seed, features=table).program
        check(program)
        calls += [s for s in program.body if s.form in SHAPES]
        assert features.FUNCTION_SHAPES in program.features() or not any(s.form in SHAPES for s in program.body)
    assert {s.form for s in calls} == set(SHAPES)
    pairs = [s for s in calls if s.form in PAIRS]
    assert any(s.args[0] == s.args[1] for s in pairs) and any(s.args[0] != s.args[1] for s in pairs)


def test_without_the_feature_no_shape_is_drawn():
    for seed in range(30):
        assert not {s.form for s in generate(seed, features=features.ALL | {features.FUNCTION_SHAPES: 0.0})
                    .program.body} & set(SHAPES)


def test_the_text_holds_each_class_and_a_call_that_gives_one_value_twice():
    program = _grad([("fn_pair", ["x0", "x0"], "v0", {"site": 0, "site2": 1}),
                     ("fn_linear", ["v0", "x0"], "v1", {"site": 2, "site2": 3}),
                     ("fn_gradbuf", ["v1"], "v2", {"site": 4, "site2": 5}),
                     ("fn_saved", ["v2"], "v3", {"site": 6, "site2": 7})], outputs=["v3"])
    text = codegen.source(program)
    assert "v0 = PairFunction0.apply(x0, x0)" in text and "v1 = AddFunction2.apply(v0, x0)" in text
    assert "return grad * torch.ops.dcefuzz.p_mix(y, x, 1), grad * x" in text
    assert "out += y" in text and "g = grad.clone()" in text and "torch.ops.dcefuzz.m_addto(g, grad * x, 5)" in text
    assert "ctx.buf = buf" in text and "torch.ops.dcefuzz.m_scale(buf, 7)" in text
    assert "grad.mul_" not in text and "m_addto(grad" not in text  # never the gradient it is given
    assert "m_scale(buf)" in codegen.source(program, plain=True)
    assert set(program.custom_ops()) == {"p_mix", "p_sin", "m_addto", "m_scale"}


def test_autograd_admits_every_shape_on_an_input_since_none_writes_a_value_of_the_program():
    for form in SHAPES:
        args = ["x0", "x0"] if form in PAIRS else ["x0"]
        typing = check(_grad([(form, args, "v0", {"site": 0, "site2": 1})]))
        assert typing.root["v0"] == "v0" and not forms.form(form).mutates


def test_a_pair_takes_operands_of_one_shape():
    program = prog({"x0": ("s0",), "x1": ("s1",)}, [("fn_pair", ["x0", "x1"], "v0", {"site": 0, "site2": 1})])
    with pytest.raises(InvalidProgram, match="shapes differ"):
        check(program)


def _eager(program, x):
    """The program's step run eagerly on ``x``: its outputs, then the input's gradient."""
    fn, step = codegen.build_with_step(program)
    return step(fn, x)


def test_one_value_given_as_both_arguments_gets_the_sum_of_both_gradients_in_eager():
    x = torch.tensor([0.5, -1.0, 2.0])
    both = _eager(_grad([("fn_pair", ["x0", "x0"], "v0", {"site": 0, "site2": 1})]), x.clone())
    y = x.clone().requires_grad_(True)  # what the backward returns for each slot, by hand
    grad = torch.ones_like(y)
    expected = grad * (y * 0.5 + torch.tanh(y)) + grad * y
    torch.testing.assert_close(both[-1], expected.detach())


FUNCTIONS = [f.name for f in forms.FORMS.values() if f.helpers is not None and f.name.startswith("fn_")]


@pytest.mark.parametrize("form", FUNCTIONS)
def test_every_function_s_backward_gives_nothing_for_a_zero_gradient(form):
    """Autograd hands a backward zeros for an output no gradient reached, and compiled
    code may run one where eager does not (``families.fnshapes``): every class's
    backward must give zeros there; the new shapes' are linear in the gradient too."""
    args = ["x0", "x1"][:forms.form(form).arity]
    program = prog({"x0": ("s0",), "x1": ("s0",)}, [(form, args, "v0", {"site": 0, "site2": 1})], outputs=["v0"])
    space = {"torch": torch}
    exec(codegen.source(program), space)
    inputs = [torch.tensor([0.5, -1.0, 2.0], requires_grad=True), torch.tensor([1.5, 0.25, -0.5], requires_grad=True)]

    def grads(scale):  # of copies, which fn_dirty may write
        out = space["program"](*[t * 1.0 for t in inputs])[0]
        return torch.autograd.grad(out, inputs, torch.full_like(out, scale), allow_unused=True, materialize_grads=True)

    assert all(torch.count_nonzero(g) == 0 for g in grads(0.0))
    if form in SHAPES:
        for one, two in zip(grads(1.0), grads(2.0)):
            torch.testing.assert_close(two, 2 * one)


@pytest.mark.parametrize("form,simpler", [("fn_pair", "fn_pure"), ("fn_linear", "fn_pair"),
                                          ("fn_gradbuf", "fn_pure"), ("fn_saved", "fn_scale")])
def test_a_shape_shrinks_toward_a_function_of_one_argument_that_writes_nothing_in_backward(form, simpler):
    args = ["x0", "x0"] if form in PAIRS else ["x0"]
    c = case(prog({"x0": ("s0",)}, [(form, args, "v0", {"site": 0, "site2": 1})], outputs=["v0"]))
    edits = [e.program.body[0] for e in statement_edits(c)]
    assert any(s.form == simpler for s in edits)
    run = run_pass("rewrite", c, stays_while(lambda cc: any(s.form.startswith("fn_") for s in cc.program.body)))
    assert [s.form for s in run.best.program.body] == [{"fn_pair": "fn_pure", "fn_linear": "fn_pure",
                                                        "fn_gradbuf": "fn_pure", "fn_saved": "fn_scale"}[form]]


# ------------------------------------------------------- real compiles

@pytest.mark.compile
def test_every_shape_compiles_with_gradients_as_eager_runs_it_and_a_lost_write_in_backward_is_caught():
    from fuzzer import faults
    from fuzzer.judge import contract, trial

    honest = case(_grad([("scale", ["x0"], "v0", {"c": 2.0}),
                         ("fn_pair", ["v0", "x0"], "v1", {"site": 0, "site2": 1}),
                         ("fn_linear", ["v1", "x0"], "v2", {"site": 2, "site2": 3}),
                         ("fn_gradbuf", ["v2"], "v3", {"site": 4, "site2": 5}),
                         ("fn_saved", ["v3"], "v4", {"site": 6, "site2": 7})], outputs=["v4"]), [{"s0": 3}])
    result = trial.run_trial(honest, "cpu", confirm=False)
    assert result.status == "clean", result.verdict
    # the backward's write to the gradient it returns is lost: the gradient is wrong
    gradbuf = case(_grad([("fn_gradbuf", ["x0"], "v0", {"site": 0, "site2": 1})]), [{"s0": 3}])
    assert trial.run_trial(gradbuf, "cpu", confirm=False).status == "clean"
    with faults.planted("mutation-lost"):
        planted = trial.run_trial(gradbuf, "cpu", confirm=False)
    assert [(f.kind, [d.where for d in f.divergences]) for f in planted.findings] == [
        (contract.WRONG_OUTPUT, ["output 1"])]


def test_a_rewrite_never_gives_a_function_one_value_as_both_arguments():
    """One tensor given as two arguments is a shape with bugs of its own (autograd adds
    both slots' gradients into it): a shrink of a call of two keeps two."""
    c = case(prog({"x0": ("s0",), "x1": ("s0",)}, [("fn_linear", ["x0", "x1"], "v0", {"site": 0, "site2": 1})],
                  outputs=["v0"]))
    calls = [e.program.body[0] for e in statement_edits(c)]
    assert calls and not any(s.args[0] == s.args[1] for s in calls if len(s.args) == 2)
    mixed = case(prog({"x0": ("s0",), "x1": ("s0",)}, [("p_mix", ["x0", "x1"], "v0", {"site": 0})], outputs=["v0"]))
    assert any(e.program.body[0].args == ("x0", "x0") for e in statement_edits(mixed))  # an op's may


@pytest.mark.compile
def test_a_function_whose_output_the_loss_never_reads_adds_nothing_to_a_gradient_across_a_graph_break():
    """The graph before the break returns ``v1`` for the graph after it, so its backward
    runs ``fn_pure``'s backward on a zero gradient, which eager never calls: a backward
    that is not zero there (``p_mix(grad, x)``, as ``fn_pure`` had) made this a false
    ``wrong-output``."""
    from fuzzer.judge import trial

    c = case(_grad([("clone", ["x0"], "v0", {}), ("fn_pure", ["x0"], "v1", {"site": 0, "site2": 1}),
                    ("graph_break", [], None, {}), ("p_sin", ["v1"], "v2", {"site": 2})]), [{"s0": 3}])
    result = trial.run_trial(c, "cpu", backend="aot_eager", confirm=False)
    assert result.status == "clean", result.verdict
