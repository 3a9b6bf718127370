"""The ``func-grad`` target and feature: programs whose gradients ``torch.func.grad`` takes,
compiled as ``torch.compile(torch.func.grad(...))`` (``fuzzer.judge.targets.FuncGradTarget``).

The fast tests run eagerly (functorch, no compile); those marked ``compile`` share two
small hand-written programs.
"""

import dataclasses

import pytest
import torch
from helpers import case, prog

from fuzzer.judge import contract, targets
from fuzzer.judge.execute import eager_fn, make_inputs, run_eager
from fuzzer.judge.observe import SKIPPED_FRAME
from fuzzer.judge.trial import CLEAN, FINDING, UNTESTED, run_trial
from fuzzer.program import codegen, features, forms
from fuzzer.program.generate import generate
from fuzzer.program.ir import InvalidProgram
from fuzzer.program.mode import Mode
from fuzzer.reduce.signature import Signature

FUNC = Mode(grad=True, func_grad=True)


def _func_grad(body, outputs, inputs=None, bindings=None):
    program = dataclasses.replace(prog(inputs or {"x0": ("s0", "s1")}, body, outputs=outputs), mode=FUNC)
    return case(program, bindings or [{"s0": 3, "s1": 4}, {"s0": 5, "s1": 2}])


# a mutating custom op on an intermediate that requires no grad (a clone made under
# no_grad), read into a value that does; a view of an input and a pure op under no_grad
CLEAN_CASE = _func_grad([
    ("scale", ["x0"], "v0", {"c": 2.0}),
    ("clone", ["x0"], "v1", {"no_grad": True}),
    ("m_scale", ["v1"], None, {"site": 0}),
    ("add", ["v0", "v1"], "v2", {}),
    ("head", ["v2"], "v3", {"dim": 0}),
    ("p_sin", ["x0"], "v4", {"site": 1, "no_grad": True}),
], ["v3", "v4"])
# the same body with a graph break in it: Dynamo cannot resume inside the transform
BROKEN_CASE = _func_grad([("scale", ["x0"], "v0", {"c": 2.0}), ("graph_break", [], None, {}),
                          ("scale", ["v0"], "v1", {"c": 1.5})], ["v1"])


def _drawn(seeds=range(20), table=features.NONE):
    return [generate(s, features=targets.drawn_for(targets.FUNC_GRAD, table)) for s in seeds]


def test_programs_drawn_for_it_take_gradients_by_func_grad_without_what_it_cannot_run():
    for table in (features.NONE, features.ALL):
        for c in _drawn(range(12), table):
            assert c.program.mode.grad and c.program.mode.func_grad
            assert not set(c.program.features()) & set(features.FUNC_GRAD_EXCLUDES)
            assert features.FUNC_GRAD in c.program.features()
    assert targets.get(targets.FUNC_GRAD).unsupported == features.FUNC_GRAD_EXCLUDES


def test_the_feature_alone_implies_autograd_and_drops_what_it_excludes():
    on = features.draw(0, {features.FUNC_GRAD: 1.0, features.GRAPH_BREAK: 1.0, features.HOPS: 1.0})
    assert on == {features.FUNC_GRAD, features.AUTOGRAD}
    assert features.draw(0, {features.GRAPH_BREAK: 1.0}) == {features.GRAPH_BREAK}


def test_no_custom_op_reads_a_value_that_requires_grad_under_func_grad():
    # torch.func.grad raises eagerly for such a call (register_autograd's Function has
    # no setup_context): the checker refuses the program, as the generator never draws it
    body = [("p_sin", ["x0"], "v0", {"site": 0})]
    with pytest.raises(InvalidProgram, match="torch.func.grad refuses"):
        _func_grad(body, ["v0"]).validate()
    plain = dataclasses.replace(_func_grad(body, ["v0"]).program, mode=Mode(grad=True))
    case(plain).validate()  # with backward() the op's formula runs
    with pytest.raises(InvalidProgram, match="func.grad takes gradients only"):
        case(dataclasses.replace(plain, mode=Mode(func_grad=True))).validate()


def test_drawn_programs_run_eagerly_under_func_grad():
    """Every drawn program is valid eagerly (92 of the first 100 were not before the
    generator kept custom ops off values that require grad)."""
    for c in _drawn(range(15), features.ALL):
        assert not [br.eager.failure.line() for br in run_eager(c, "cpu") if br.eager.failure], \
            codegen.source(c.program)


def test_func_grad_gives_the_values_and_gradients_backward_gives():
    """The loss is ``backward()``'s (``codegen.loss_of``, one definition): the same
    program through its step with backward() and through torch.func.grad agrees."""
    for c in [CLEAN_CASE] + _drawn(range(6)):
        by_backward = dataclasses.replace(c, program=dataclasses.replace(
            c.program, mode=dataclasses.replace(c.program.mode, func_grad=False)))
        assert "program_grad" in codegen.source(c.program) and "backward" not in codegen.source(c.program)
        assert "program_grad" not in codegen.source(by_backward.program)
        for i in range(len(c.bindings)):
            got = eager_fn(c)(*make_inputs(c, i, "cpu"))
            want = eager_fn(by_backward)(*make_inputs(by_backward, i, "cpu"))
            assert len(got) == len(want) == len(c.program.outputs) + len(c.program.inputs)
            for g, w in zip(got, want):
                torch.testing.assert_close(g.detach(), w.detach())


def test_a_loss_that_reaches_no_input_gives_zero_gradients():
    c = _func_grad([("scale", ["x0"], "v0", {"c": 2.0, "no_grad": True})], ["v0"])
    values = eager_fn(c)(*make_inputs(c, 0, "cpu"))
    assert torch.count_nonzero(values[1]) == 0 and values[1].shape == values[0].shape


def test_the_mode_round_trips_and_old_modes_read_as_before():
    assert Mode.from_json(FUNC.to_json()) == FUNC
    assert "func_grad" not in Mode(grad=True).to_json()


@pytest.mark.compile
def test_a_clean_program_is_clean_and_a_wrong_traced_gradient_is_caught(monkeypatch):
    """Through the target the honest program is clean, wholly compiled; with a planted
    fault in the composition's own area (functorch's ``_autograd_grad`` doubles the
    gradient while Dynamo traces it: eager is untouched) it is a wrong-output finding."""
    honest = run_trial(CLEAN_CASE, "cpu", target=targets.FUNC_GRAD)
    assert honest.status == CLEAN, [d.line() for d in honest.verdict.divergences]
    from torch._functorch import eager_transforms

    original = eager_transforms._autograd_grad

    def doubled(*args, **kwargs):
        grads = original(*args, **kwargs)
        return tuple(2 * g for g in grads) if torch.compiler.is_compiling() else grads

    monkeypatch.setattr(eager_transforms, "_autograd_grad", doubled)
    planted = run_trial(CLEAN_CASE, "cpu", target=targets.FUNC_GRAD)
    assert planted.status == FINDING and [f.kind for f in planted.findings] == [contract.WRONG_OUTPUT]
    # the values are right; the gradients (outputs past the program's own) are wrong
    n = len(CLEAN_CASE.program.outputs)
    wrong = {int(d.where.split()[1]) for d in planted.findings[0].divergences}
    assert wrong and min(wrong) >= n, planted.findings[0].divergences


@pytest.mark.compile
def test_a_graph_break_inside_the_transform_is_untested_not_clean():
    """Dynamo cannot resume inside ``torch.func.grad``: the whole call runs eagerly, a
    skipped frame (why
    ``graph-break`` is never drawn for the target)."""
    result = run_trial(BROKEN_CASE, "cpu", target=targets.FUNC_GRAD)
    # the break the program asks for leaves nothing untested elsewhere (``REQUESTED_BREAK``);
    # here Dynamo gives up the whole frame, so the run is not compiled at all
    assert result.status == UNTESTED and result.untested.reason == SKIPPED_FRAME, result.untested
    assert forms.form("graph_break").feature == features.GRAPH_BREAK


# ``y = zeros; y += relu(x)`` twice (pytorch/pytorch#136662's shape, the whole buffer)
ZEROS_WRITTEN = [("clone", ["x0"], "v0", {"no_grad": True}), ("zero_", ["v0"], None, {}),
                 ("unary", ["x0"], "v1", {"fn": "relu"}), ("add_", ["v0", "v1"], None, {}),
                 ("add_", ["v0", "v1"], None, {})]


@pytest.mark.parametrize("body, why", [
    # what backward saved may not change: sigmoid keeps its own result
    ([("unary", ["x0"], "v0", {"fn": "sigmoid"}), ("clone", ["x0"], "v1", {"no_grad": True}),
      ("add_", ["v0", "v1"], None, {})], "autograd forbids writing v0"),
    # a view made under no_grad of the storage a write gives a gradient
    ([("clone", ["x0"], "v0", {"no_grad": True}), ("select", ["v0"], "v2", {"dim": 1, "no_grad": True}),
      ("unary", ["x0"], "v1", {"fn": "relu"}), ("add_", ["v0", "v1"], None, {})], "autograd forbids writing v0"),
    # a write whose backward keeps what it wrote (mul_ by a tensor) leaves it unwritable
    ([("clone", ["x0"], "v0", {"no_grad": True}), ("unary", ["x0"], "v1", {"fn": "relu"}),
      ("add_", ["v0", "v1"], None, {}), ("lerp_", ["v0", "v1"], None, {}), ("add_", ["v0", "v1"], None, {})],
     "autograd forbids writing v0"),
    # an input is a leaf
    ([("unary", ["x0"], "v1", {"fn": "relu"}), ("add_", ["x0", "v1"], None, {})], "autograd forbids writing x0"),
    # a vmap's result made under no_grad is a view where out_dims moves the batch dim
    ([("vmap_sin", ["x0"], "v0", {"site": 0, "dim": 1, "out": 1, "no_grad": True}),
      ("unary", ["x0"], "v1", {"fn": "relu"}), ("add_", ["v0", "v1"], None, {})], "autograd forbids writing v0"),
])
def test_a_write_with_grad_under_func_grad_is_legal_only_where_autograd_takes_it(body, why):
    _func_grad(ZEROS_WRITTEN, ["v0"]).validate()
    with pytest.raises(InvalidProgram, match=why):
        _func_grad(body, ["v0"]).validate()


def test_a_write_back_through_sin_of_a_storage_that_requires_grad_is_refused():
    """``v0.copy_(torch.sin(v0.mT).mT)``: ``sin`` saves ``v0.mT`` for backward and the
    write changes it (eager raises "modified by an inplace operation"; a campaign drew
    one, logged invalid); through ``* 0.5``, which saves nothing, it is legal."""
    back = {"order": [1, 0], "back": [1, 0]}
    _func_grad(ZEROS_WRITTEN + [("copy_back_", ["v0"], None, {**back, "via": "half"})], ["v0"]).validate()
    with pytest.raises(InvalidProgram, match="saves for backward what it overwrites"):
        _func_grad(ZEROS_WRITTEN + [("copy_back_", ["v0"], None, {**back, "via": "sin"})], ["v0"]).validate()

    def by_hand(x0):  # the refused program written plain
        with torch.no_grad():
            v0 = torch.zeros_like(x0)
        v0.add_(x0.relu())
        v0.copy_(torch.sin(v0.mT).mT)
        return v0.sum()

    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        torch.func.grad(by_hand)(torch.randn(3, 4))


# a view of a buffer made before a write gave the buffer a gradient, written after it
STALE_VIEW = [("clone", ["x0"], "v0", {"no_grad": True}), ("unsqueeze", ["v0"], "v2", {"dim": 0}),
              ("unary", ["x0"], "v1", {"fn": "relu"}), ("add_", ["v0", "v1"], None, {}),
              ("div_", ["v2"], None, {"c": -1.0})]


def test_a_view_made_before_its_base_required_grad_is_never_written_after():
    """Such a view is a leaf that requires grad: eager refuses the write (a 15-minute
    campaign drew one, logged invalid), and a write of a view of it.  Only read, it is
    legal, and eager runs it."""
    stale = _func_grad(STALE_VIEW, ["v0"])
    with pytest.raises(InvalidProgram, match="made before its base required grad"):
        stale.validate()

    def by_hand(x0):  # the program written plain (the IR lets no code be made of it)
        with torch.no_grad():
            v0 = x0.clone()
        v2 = v0.unsqueeze(0)
        v0.add_(x0.relu())
        v2.div_(-1.0)
        return v0.sum()

    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        torch.func.grad(by_hand)(torch.rand(3, 4))
    of_stale = STALE_VIEW[:4] + [("head", ["v2"], "v3", {"dim": 1}), ("div_", ["v3"], None, {"c": -1.0})]
    with pytest.raises(InvalidProgram, match="made before its base required grad"):
        _func_grad(of_stale, ["v0"]).validate()
    read = _func_grad(STALE_VIEW[:4] + [("unary", ["v2"], "v3", {"fn": "relu"})], ["v0", "v3"])
    read.validate()
    eager_fn(read)(*make_inputs(read, 0, "cpu"))


def test_the_writes_func_grad_allows_are_autograds_and_give_backwards_gradients():
    """The same program through plain autograd, ``backward()`` of its loss: the relaxed
    rule is autograd's, not functorch's alone (GradRules keep such writes out of other
    programs only so that those stay as they were drawn)."""
    c = _func_grad(ZEROS_WRITTEN, ["v0"])
    namespace = {"torch": torch}
    exec(codegen.source(c.program), namespace)
    got = eager_fn(c)(*make_inputs(c, 0, "cpu"))
    (x0,) = make_inputs(c, 0, "cpu")
    x0.requires_grad_(True)
    outs = namespace["program"](x0)
    namespace["loss_of"](outs).backward()
    torch.testing.assert_close(got[0], outs[0].detach())
    torch.testing.assert_close(got[1], x0.grad)
    assert torch.count_nonzero(got[1]) > 0  # the loss reaches x0 through the writes


def _entry(c, kind=contract.WRONG_OUTPUT):
    from fuzzer.corpus.entry import Entry

    return Entry(id="func-grad-x", kind=kind, signature=Signature.parse(f"{kind}|values :: x"), seed=None, device="cpu",
                 backend="inductor", torch_version=torch.__version__, case=c, detail=["x"],
                 target=targets.FUNC_GRAD)


def test_a_repro_script_runs_program_grad_through_its_step():
    from fuzzer.render import repro

    script = repro.render(_entry(CLEAN_CASE))
    assert script.rstrip().endswith("sys.exit(main(SPEC, program_grad, TRACE, step=step))")
    assert "# compiled = torch.compile(program_grad," in codegen.header(CLEAN_CASE.program)


@pytest.mark.compile
def test_a_repro_script_of_a_clean_program_says_it_does_not_reproduce(tmp_path):
    """Exit 0 needs the program judged whole and wholly compiled: the script compiled
    program_grad, its gradients among the values judged."""
    import subprocess
    import sys

    from fuzzer.render import repro

    path = tmp_path / "x.py"
    path.write_text(repro.render(_entry(CLEAN_CASE)))
    run = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr


# ------------------------------------------------------ the module's own rules
def test_func_grad_rules_refuse_a_custom_op_on_a_value_that_requires_grad_and_a_refused_features_form():
    from fuzzer.program import func_grad
    from fuzzer.program.forms import Illegal
    from fuzzer.program.ir import Stmt

    rules = func_grad.grad_rules(True)
    assert isinstance(rules, func_grad.FuncGradRules) and not isinstance(func_grad.grad_rules(False),
                                                                         func_grad.FuncGradRules)
    rules.add_input("x0")
    root = {"x0": "x0", "v0": "v0"}
    with pytest.raises(Illegal, match="custom op"):
        rules.admit(Stmt("p_sin", ("x0",), "v0", {"site": 0}), forms.form("p_sin"), root, {"x0"})
    rules.admit(Stmt("p_sin", ("x0",), "v0", {"site": 0, "no_grad": True}), forms.form("p_sin"), root, {"x0"})
    refused = next(f for f in forms.FORMS.values() if f.feature in func_grad.REFUSED)
    with pytest.raises(Illegal, match="cannot run"):
        rules.admit(Stmt(refused.name, ("x0",) * refused.arity, None, {"no_grad": True}), refused, root, {"x0"})


def test_func_grad_rules_let_a_write_of_values_that_require_grad_make_its_storage_require_grad():
    from fuzzer.program import func_grad
    from fuzzer.program.forms import Illegal
    from fuzzer.program.ir import Stmt

    rules = func_grad.FuncGradRules()
    rules.add_input("x0")
    root = {"x0": "x0", "v0": "v0", "v1": "v0"}
    rules.admit(Stmt("clone", ("x0",), "v0", {"no_grad": True}), forms.form("clone"), root, {"x0"})
    rules.admit(Stmt("head", ("v0",), "v1", {"dim": 0}), forms.form("head"), root, {"x0"})
    assert not rules.requires["v0"]
    rules.admit(Stmt("add_", ("v0", "x0"), None, {}), forms.form("add_"), root, {"x0"})
    assert rules.requires["v0"] and rules.requires["v1"] and "v1" in rules.stale_views
    with pytest.raises(Illegal, match="view made before its base required grad"):
        rules.admit(Stmt("mul_", ("v1",), None, {"c": 2.0}), forms.form("mul_"), root, {"x0"})
    with pytest.raises(Illegal, match="forbids writing x0"):
        rules.admit(Stmt("mul_", ("x0",), None, {"c": 2.0}), forms.form("mul_"), root, {"x0"})
