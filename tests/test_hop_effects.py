"""Effects and writes inside control flow and backward (``families.control``) and custom
ops inside ``autograd.Function`` (``families.function``): what the IR says of them, how
the contract judges them, how they shrink.

The clauses are judged on stand-in 'compiled' functions (as in ``test_contract``); the
few real compiles use the ``aot_eager`` backend and are marked ``compile``.
"""

import dataclasses

import pytest
import torch
from helpers import case, prog, run_pass, stays_while
from test_contract import verdict

from fuzzer.judge import contract, observe, trial
from fuzzer.program import codegen, features, forms, liveness
from fuzzer.program.generate import generate
from fuzzer.program.ir import InvalidProgram, Mode, check
from fuzzer.reduce.passes.rewrite import statement_edits

ops = torch.ops.dcefuzz

COND_TAP = case(prog({"x0": ("s0",)}, [("cond_tap", ["x0"], "v0", {"site": 0, "site2": 1})], outputs=["v0"]))


def branch_eager_takes(x0):
    return (ops.e_tap(x0, 0) if x0.sum() > 0 else ops.e_tap(x0 * 0.5, 1),)


def other_branch(x0):
    return (ops.e_tap(x0 * 0.5, 1) if x0.sum() > 0 else ops.e_tap(x0, 0),)


def effect_dropped(x0):
    return (torch.cos(x0) if x0.sum() > 0 else torch.cos(x0 * 0.5),)


# ------------------------------------------------------- effects in a branch

def test_the_effect_of_the_branch_eager_took_is_the_one_expected():
    assert verdict(branch_eager_takes, COND_TAP).divergences == []


@pytest.mark.parametrize("stand_in", [other_branch, effect_dropped])
def test_an_effect_of_the_other_branch_or_none_breaks_the_effect_log(stand_in):
    found = verdict(stand_in, COND_TAP)
    assert contract.EFFECT_LOG in found.kinds()


# ------------------------------------------------------- a limit torch documents

def _rows_case(form: str):
    return case(prog({"x0": ("s0", "s1")}, [(form, ["x0"], "v0", {"site": 0})], outputs=["v0"],
                     sym_min={"s0": 1, "s1": 1}))


def _tap_rows_without_log(x0):
    return (torch.cos(x0),)


def test_a_scan_with_an_effect_is_untested_for_the_limit_torch_documents_whatever_it_does():
    scan = _rows_case("scan_tap")
    assert trial.asks_of(scan.program).limits == {forms.form("scan_tap").limit}
    found = verdict(_tap_rows_without_log, scan)
    assert found.divergences == [] and [u.reason for u in found.untested] == [observe.HOP_LIMIT]


def test_the_same_dropped_effects_in_a_map_torch_documents_no_limit_for_are_a_finding():
    found = verdict(_tap_rows_without_log, _rows_case("map_tap"))
    assert contract.EFFECT_LOG in found.kinds() and found.untested == []


# ------------------------------------------------------- the IR

def test_calls_inside_a_branch_or_a_function_and_what_they_read_are_never_called_dead():
    program = prog({"x0": ("s0",)}, [
        ("p_sin", ["x0"], "v0", {"site": 5}),
        ("fn_pure", ["v0"], "v1", {"site": 0, "site2": 1}),
        ("p_sin", ["x0"], "v2", {"site": 6}),
        ("while_scale", ["v2"], "v3", {"site": 2}),
        ("p_sin", ["x0"], "v4", {"site": 4}),
    ])
    assert liveness.dead_pure_sites(program) == {4}


def _dirty_program(body, grad=True):
    return dataclasses.replace(prog({"x0": ("s0",)}, body), mode=Mode(grad=grad))


def test_a_function_that_marks_its_input_dirty_may_write_a_fresh_value_that_requires_grad():
    typing = check(_dirty_program([("scale", ["x0"], "v0", {"c": 2.0}),
                                   ("fn_dirty", ["v0"], "v1", {"site": 0, "site2": 1})]))
    assert typing.root["v1"] == "v0"


@pytest.mark.parametrize("body", [
    [("fn_dirty", ["x0"], "v1", {"site": 0, "site2": 1})],                        # a leaf
    [("scale", ["x0"], "v0", {"c": 2.0}), ("head", ["v0"], "v1", {"dim": 0}),
     ("fn_dirty", ["v1"], "v2", {"site": 0, "site2": 1})],                        # a view
    [("scale", ["x0"], "v0", {"c": 2.0}), ("p_sin", ["v0"], "v1", {"site": 2}),
     ("fn_dirty", ["v0"], "v2", {"site": 0, "site2": 1})],                        # read by grad
])
def test_autograd_refuses_what_marking_dirty_does_not_allow(body):
    with pytest.raises(InvalidProgram, match="autograd forbids writing"):
        check(_dirty_program(body))


def test_an_op_whose_backward_logs_is_called_once_at_most():
    once = [("p_gradlog", ["x0"], "v0", {"site": 0})]
    check(prog({"x0": ("s0",)}, once))
    with pytest.raises(InvalidProgram, match="once at most"):
        check(prog({"x0": ("s0",)}, once + [("p_gradlog", ["v0"], "v1", {"site": 1})]))


def test_the_program_text_holds_its_helpers_and_plain_text_drops_their_sites():
    program = prog({"x0": ("s0",)}, [("fn_pure", ["x0"], "v0", {"site": 0, "site2": 1}),
                                     ("cond_log", ["v0"], "v1", {"site": 2, "site2": 3})], outputs=["v1"])
    text = codegen.source(program)
    assert text.index("class SinFunction0(torch.autograd.Function)") < text.index("def log_then_sin2") \
        < text.index("def program(")
    assert "grad * torch.ops.dcefuzz.p_mix(x, x, 1)" in text and "e_log(t, 2)" in text
    plain = codegen.source(program, plain=True)
    assert "p_mix(x, x)" in plain and "e_log(t)" in plain and "SinFunction0.apply(x0)" in plain
    assert program.custom_ops() == ["p_sin", "p_mix", "e_log"]


def test_generated_programs_with_the_features_are_legal_and_use_them():
    table = features.parse("hop-effects=1.0,autograd-function=1.0")
    used = set()
    for seed in range(30):
        program = generate(seed, features=table).program
        check(program)
        used |= {s.form for s in program.body}
    assert {"cond_tap", "while_tap", "fn_pure", "fn_dirty", "p_gradlog"} <= used


def test_a_program_with_a_scan_is_drawn_with_maybe_marks_only():
    """Eager ``scan`` compiles its combine function, which a ``mark_dynamic`` reaches
    (``forms.mark_substitutes``): a drawn program with one marks no dim dynamic or
    unbacked."""
    table = features.parse("hop-effects=1.0,dynamic-mode=1.0")
    marks = []
    for seed in range(80):
        program = generate(seed, features=table).program
        if any(s.form == "scan_tap" for s in program.body):
            marks += [how for _, _, how in program.mode.marks]
    assert marks and set(marks) == {"maybe"}


@pytest.mark.parametrize("how,dim,raised", [("dynamic", 1, "ConstraintViolationError"), ("maybe", 1, None),
                                            ("maybe", 0, None)])
def test_eager_scan_refuses_a_dim_marked_dynamic_and_takes_a_maybe_mark(how, dim, raised):
    """Why the generator marks a program with a scan ``maybe`` only: with a dim marked
    dynamic its eager run raises, so the program would be invalid."""
    from fuzzer.judge.execute import run_eager
    program = dataclasses.replace(_rows_case("scan_tap").program, mode=Mode(marks=(("x0", dim, how),)))
    torch._dynamo.reset()  # a scan compiled by an earlier test would be reused unchecked
    failure = run_eager(case(program, [{"s0": 3, "s1": 4}]), "cpu")[0].eager.failure
    assert (failure and failure.type) == raised


def test_a_torch_without_while_loop_has_no_hop_effects(monkeypatch):
    import torch._higher_order_ops as hops
    monkeypatch.delattr(hops, "while_loop")
    assert "while_loop" in features.unavailable(features.HOP_EFFECTS)


# ------------------------------------------------------- shrinking

@pytest.mark.parametrize("form,bare", [("cond_tap", "e_tap"), ("fn_pure", "p_sin"), ("while_tap", "e_tap")])
def test_a_wrapped_call_shrinks_to_the_bare_call(form, bare):
    sites = {"site": 0, "site2": 1} if forms.form(form).sites == 2 else {"site": 0}
    c = case(prog({"x0": ("s0",)}, [(form, ["x0"], "v0", sites)], outputs=["v0"]))
    assert bare in {s.form for e in statement_edits(c) for s in e.program.body}
    run = run_pass("rewrite", c, stays_while(lambda cc: len(cc.program.body) == 1))
    assert [s.form for s in run.best.program.body] == [bare]


# ------------------------------------------------------- real compiles

def _grad_case(body, outputs):
    program = dataclasses.replace(prog({"x0": ("s0",)}, body, outputs=outputs), mode=Mode(grad=True))
    return case(program, [{"s0": 3}])


@pytest.mark.compile
def test_functions_and_a_logging_backward_compile_with_gradients_as_eager_runs_them():
    c = _grad_case([("scale", ["x0"], "v0", {"c": 2.0}),
                    ("fn_dirty", ["v0"], "v1", {"site": 0, "site2": 1}),
                    ("fn_scale", ["v1"], "v2", {"site": 2, "site2": 3}),
                    ("p_gradlog", ["v2"], "v3", {"site": 4})], ["v3"])
    result = trial.run_trial(c, "cpu", backend="aot_eager", confirm=False)
    assert result.status == "clean", result.verdict


@pytest.mark.compile
def test_an_effect_in_backward_is_in_the_log_of_eager_and_of_compiled_code():
    from fuzzer.judge.execute import execute
    runs = execute(_grad_case([("p_gradlog", ["x0"], "v0", {"site": 0})], ["v0"]), "cpu", backend="aot_eager")
    assert [event.call for event in runs[0].eager.effects] == [("e_log", 0)]
    assert [event.call for event in runs[0].compiled.effects] == [("e_log", 0)]


def test_a_scan_over_a_strided_value_runs_eagerly():
    """Eager ``scan`` compiles its combine function and refuses a carry whose strides
    differ from the initial value's: the form carries a contiguous value from a
    contiguous start, whatever the layout of the rows it scans (an empty one too)."""
    from fuzzer.judge.execute import run_eager
    program = prog({"x0": ("s0", "s1")}, [("narrow", ["x0"], "v0", {"dim": 1}), ("transpose", ["v0"], "v1", {}),
                                          ("scan_tap", ["v1"], "v2", {"site": 0})], outputs=["v2"],
                   sym_min={"s0": 0, "s1": 2})
    for binding_runs in run_eager(case(program, [{"s0": 3, "s1": 4}, {"s0": 0, "s1": 3}]), "cpu"):
        assert binding_runs.eager.failure is None, binding_runs.eager.failure.message
