"""Each clause of the contract, with hand-written programs and stand-in 'compiled' code.

A stand-in is an ordinary Python function with the program's signature that plays
the compiler: it either does something the contract forbids (must be flagged) or
something it allows (must not be).  No torch.compile here: the clauses are judged
on exactly the records a real compile would produce.
"""

import dataclasses

import pytest
import torch
from helpers import case, prog

from fuzzer.judge import contract, numeric, observe
from fuzzer.judge.contract import BindingRuns
from fuzzer.judge.execute import execute
from fuzzer.judge.observe import Coverage, Failure, Run
from fuzzer.judge.trial import judge_case as judge
from fuzzer.program import codegen
from fuzzer.program.ir import Mode

ops = torch.ops.dcefuzz

# One program exercising every clause: x0 is written, an effect is logged,
# a pure call is dead, one value is returned.
PROGRAM = prog({"x0": ("s0", "s1")}, [
    ("p_sin", ["x0"], "v0", {"site": 0}),     # dead pure call
    ("clone", ["x0"], "v1", {}),
    ("e_log", ["v1"], None, {"site": 1}),
    ("m_scale", ["x0"], None, {"site": 2}),    # write to the input
    ("e_tap", ["x0"], "v2", {"site": 3}),      # sees the written input
    ("clone", ["v2"], "v3", {}),
    ("m_scale", ["v3"], None, {"site": 4}),    # write to an intermediate never read again
], outputs=["v2"])
CASE = case(PROGRAM)


def faithful(x0):
    v1 = x0.clone()
    ops.e_log(v1, 1)
    ops.m_scale(x0, 2)
    v2 = ops.e_tap(x0, 3)
    return (v2,)


#: the coverage of a run Dynamo compiled whole: one frame, one graph, no gaps
WHOLLY = Coverage(frames=1, graphs=1)


def verdict(stand_in, c=CASE, coverage=(WHOLLY,)):
    """Judge the stand-in's runs as if Dynamo had compiled it with ``coverage``
    (per binding; the last one repeats)."""
    runs = execute(c, "cpu", compiled=stand_in)
    for i, br in enumerate(runs):
        if br.compiled is not None:
            br.compiled.coverage = coverage[min(i, len(coverage) - 1)]
    return judge(c, runs)


def kinds(stand_in, c=CASE):
    v = verdict(stand_in, c)
    assert v.status == contract.OK, v.reason
    return v.kinds()


# ------------------------------------------------------------------ allowed

def test_faithful_compile_is_clean():
    assert kinds(faithful) == []


def test_allowed_extra_pure_call_and_dead_write_skipped():
    def stand_in(x0):
        v1 = x0.clone()
        ops.e_log(v1, 1)
        ops.m_scale(x0, 2)
        v2 = ops.e_tap(x0, 3)
        ops.p_sin(v2, 99)          # a pure op the program does not have: allowed
        return (v2,)               # and v3's write (site 4) skipped: allowed
    assert kinds(stand_in) == []


LIVE_PURE = prog({"x0": ("s0",)}, [
    ("p_sin", ["x0"], "v0", {"site": 0}),
    ("e_log", ["v0"], None, {"site": 1}),
], outputs=["v0"])


def test_allowed_live_pure_call_run_twice():
    def twice(x0):
        ops.p_sin(x0, 0)
        v0 = ops.p_sin(x0, 0)      # the same call site again: allowed
        ops.e_log(v0, 1)
        return (v0,)
    v = verdict(twice, case(LIVE_PURE))
    assert v.status == contract.OK and v.kinds() == []
    assert sum(1 for op, site in execute(case(LIVE_PURE), "cpu", compiled=twice)[0].compiled.calls
               if site == 0) == 2   # the allowance was exercised


def test_forbidden_effectful_call_run_twice():
    def twice(x0):
        v0 = ops.p_sin(x0, 0)
        ops.e_log(v0, 1)
        ops.e_log(v0, 1)           # an ORDERED effect twice: forbidden
        return (v0,)
    v = verdict(twice, case(LIVE_PURE))
    assert v.kinds() == [contract.EFFECT_LOG]
    assert v.divergences[0].symptoms == (contract.DUPLICATED,)


def test_allowed_strides_and_float_noise():
    def stand_in(x0):
        v1 = x0.clone()
        ops.e_log(v1, 1)
        ops.m_scale(x0, 2)
        v2 = ops.e_tap(x0, 3)
        noisy = (v2 * (1 + 1e-7)).t().contiguous().t()  # other strides, tiny error
        return (noisy,)
    assert kinds(stand_in) == []


# ------------------------------------------------------------------ clause 1

def test_wrong_output_values_are_flagged():
    def stand_in(x0):
        (v2,) = faithful(x0)
        return (v2 + 0.01,)
    assert kinds(stand_in) == [contract.WRONG_OUTPUT]


def test_wrong_output_shape_and_count():
    def shape(x0):
        (v2,) = faithful(x0)
        return (v2[:1],)
    def count(x0):
        return faithful(x0) + (x0,)
    v = verdict(shape)
    assert v.kinds() == [contract.WRONG_OUTPUT] and "shape" in v.divergences[0].detail
    assert kinds(count) == [contract.WRONG_OUTPUT]


# ------------------------------------------------------------------ clause 2

def test_lost_input_mutation_is_flagged():
    def stand_in(x0):
        v1 = x0.clone()
        ops.e_log(v1, 1)
        y = x0.clone()
        ops.m_scale(y, 2)            # write applied to a copy, never copied back
        v2 = ops.e_tap(y, 3)
        return (v2,)
    v = verdict(stand_in)
    assert v.kinds() == [contract.WRONG_MUTATION]
    assert v.divergences[0].where == "input x0"


# ------------------------------------------------------------------ clause 3

def test_missing_effect_is_flagged():
    def stand_in(x0):
        ops.m_scale(x0, 2)
        return (ops.e_tap(x0, 3),)
    v = verdict(stand_in)
    assert v.kinds() == [contract.EFFECT_LOG]
    assert "missing e_log@1" in v.divergences[0].detail


def test_duplicated_and_reordered_effects_are_flagged():
    def dup(x0):
        v1 = x0.clone()
        ops.e_log(v1, 1)
        ops.e_log(v1, 1)
        ops.m_scale(x0, 2)
        return (ops.e_tap(x0, 3),)
    def reorder(x0):
        v1 = x0.clone()
        ops.m_scale(x0, 2)
        v2 = ops.e_tap(x0, 3)
        ops.e_log(v1, 1)
        return (v2,)
    d = verdict(dup)
    assert d.kinds() == [contract.EFFECT_LOG] and "duplicated e_log@1" in d.divergences[0].detail
    r = verdict(reorder)
    assert r.kinds() == [contract.EFFECT_LOG] and r.divergences[0].detail.startswith("reordered")


def test_effect_seeing_other_data_is_flagged():
    def stand_in(x0):
        v1 = x0.clone()
        ops.e_log(v1, 1)
        ops.e_tap(x0, 3)             # effect ran before the write it should see
        ops.m_scale(x0, 2)
        return (torch.cos(x0),)      # output and input still right
    v = verdict(stand_in)
    assert v.kinds() == [contract.EFFECT_LOG]
    assert "saw different data" in v.divergences[0].detail


# ------------------------------------------------------------------ clause 4

def test_runtime_error_in_compiled_is_flagged():
    def stand_in(x0):
        raise RuntimeError("boom")
    v = verdict(stand_in)
    assert v.kinds() == [contract.RUNTIME_ERROR]


def test_compile_stage_errors_are_compile_errors():
    from torch._inductor.exc import InductorError

    def stand_in(x0):
        raise InductorError(ValueError("Invalid ranges"), None)
    assert kinds(stand_in) == [contract.COMPILE_ERROR]


def test_eager_error_makes_the_case_invalid_not_a_finding():
    p = prog({"x0": ("s0",)}, [("narrow", ["x0"], "v0", {"dim": 0})], outputs=["v0"])
    bad = case(p, [{"s0": 0}])   # bypasses the generator's minimum: eager raises
    v = verdict(lambda x0: (x0,), bad)
    assert v.status == contract.INVALID and v.divergences == []


def test_nondeterministic_eager_is_skipped():
    t = torch.ones(3)
    run = Run(outputs=[t], inputs_after=[t])
    other = Run(outputs=[t + 1], inputs_after=[t])
    compiled = Run(outputs=[t + 2], inputs_after=[t])
    br = BindingRuns({"s0": 3}, eager=run, eager_again=other, reference=run, compiled=compiled)
    assert judge(CASE, [br]).status == contract.NONDETERMINISTIC
    # a compiled run identical to eager needs no determinism check: nothing to judge
    same = BindingRuns({"s0": 3}, eager=run, eager_again=other, reference=run, compiled=run)
    assert judge(CASE, [same]) == contract.Verdict(contract.OK, [])


# ------------------------------------------------------------------ performance

def test_dead_pure_call_executed_is_missed_dce_only():
    def stand_in(x0):
        ops.p_sin(x0, 0)
        return faithful(x0)
    v = verdict(stand_in)
    assert v.kinds() == [contract.MISSED_DCE]
    assert "p_sin@0" in v.divergences[0].detail


# ------------------------------------------------------------------ untested

BREAK = Coverage(frames=2, graphs=2, gaps=((observe.GRAPH_BREAK, "planted"),))


def test_not_wholly_compiled_is_untested_and_never_missed_dce():
    def runs_dead_call(x0):
        ops.p_sin(x0, 0)
        return faithful(x0)
    v = verdict(runs_dead_call, coverage=(BREAK,))
    assert v.status == contract.OK and v.kinds() == []
    assert v.untested == [(observe.GRAPH_BREAK, "planted")]
    # from the break on: binding 0 is judged for missed-dce, bindings 1 and 2 are not
    late = verdict(runs_dead_call, coverage=(WHOLLY, BREAK))
    assert [d.binding for d in late.of_kind(contract.MISSED_DCE)] == [0]


def test_correctness_clauses_still_hold_across_a_graph_break():
    def drops_log(x0):
        ops.m_scale(x0, 2)
        return (ops.e_tap(x0, 3),)
    v = verdict(drops_log, coverage=(BREAK,))
    assert v.kinds() == [contract.EFFECT_LOG] and v.untested


def test_no_graph_at_all_is_untested():
    v = verdict(faithful, coverage=(Coverage(frames=1, graphs=0),))
    assert v.kinds() == [] and v.untested[0][0] == observe.NO_GRAPH
    assert verdict(faithful).untested == []


def test_stage_is_read_from_the_exception_and_the_frame_in_progress():
    from torch._inductor.exc import InductorError

    idle = observe.Counts(frames_total=3, frames_ok=3)
    converting = observe.Counts(frames_total=4, frames_ok=3)
    assert observe.stage_of(RuntimeError("x"), idle, idle) == observe.RUNTIME
    assert observe.stage_of(RuntimeError("x"), idle, converting) == observe.COMPILE
    assert observe.stage_of(InductorError(ValueError("x"), None), idle, idle) == observe.COMPILE


# ------------------------------------------------------------------ bug class

def test_bug_class_is_the_kind_and_its_symptoms():
    def reorder(x0):
        v1 = x0.clone()
        ops.m_scale(x0, 2)
        v2 = ops.e_tap(x0, 3)
        ops.e_log(v1, 1)
        return (v2,)
    v = verdict(reorder)
    assert contract.bug_class(contract.EFFECT_LOG, v.divergences) == "effect-log|reordered"
    err = [contract.Divergence(contract.COMPILE_ERROR, 0, "compile", "InductorError: x s12 at 0x1f, 35")]
    assert contract.bug_class(contract.COMPILE_ERROR, err) == "compile-error|InductorError: x # at 0x#, #"


# ------------------------------------------------------------------ numbers

@pytest.mark.parametrize("ref, eager, comp, flagged", [
    ([1.0, 2.0], [1.0, 2.0], [1.0, 2.0], False),
    ([1.0, 2.0], [1.0, 2.0], [1.0, 2.1], True),
    ([1.0, float("nan")], [1.0, float("nan")], [1.0, float("nan")], False),
    ([1.0, 2.0], [1.0, 2.0], [1.0, float("nan")], True),       # compiled invents a NaN
    ([1.0, 1e39], [1.0, float("inf")], [1.0, 3e38], False),    # eager itself overflowed
    ([1.0, float("inf")], [1.0, float("inf")], [1.0, float("-inf")], True),
    ([1.0, 2.0], [1.0, 2.0 + 1e-3], [1.0, 2.0 + 2e-3], False),  # within 3x eager's error
])
def test_tensor_difference(ref, eager, comp, flagged):
    why = numeric.tensor_difference(torch.tensor(ref, dtype=torch.float64),
                                    torch.tensor(eager), torch.tensor(comp))
    assert bool(why) is flagged, why


def test_failure_line_is_short():
    f = Failure("RuntimeError", "first\nsecond", "runtime")
    assert f.line() == "RuntimeError: first"
    # a backend wrapper's first line names no error: the line it introduces comes with it
    wrapped = Failure("BackendCompilerFailed", "backend='inductor' raised:\nKeyError: 'u0'\n\nmore", "compile")
    assert wrapped.line() == "BackendCompilerFailed: backend='inductor' raised: KeyError: 'u0'"


def test_an_error_message_loses_the_names_and_numbers_of_its_program():
    assert contract.normalise_message("InductorError: KeyError: 'op10'") == "InductorError: KeyError: 'op#'"
    assert contract.normalise_message("buf12 and  s0 at torch.ops.dcefuzz.m_scale.default, 3 x") \
        == "buf# and # at dcefuzz.<op>, # x"
    # a size symbol is a size like any number; a FakeTensor's dtype and grad_fn are the program's
    one = ("PendingUnbackedSymbolNotFound: Pending unbacked symbols {u1} not in returned outputs "
           "FakeTensor(..., size=(0,), dtype=torch.float16) ((1,), 0).")
    other = ("PendingUnbackedSymbolNotFound: Pending unbacked symbols {u3} not in returned outputs "
             "FakeTensor(..., size=(0,), grad_fn=<SliceBackward0>) ((s33,), 0).")
    assert contract.normalise_message(one) == contract.normalise_message(other)
    # an object's address is another in every process
    assert contract.normalise_message("<Tracer object at 0x7f3a9c>") == \
        contract.normalise_message("<Tracer object at 0x7f11d0>")
    assert contract.normalise_message("operation op") == "operation op"  # a word, not a name


# ---------------------------------------------------------------- stale cache

def _loses_write(x0):
    v1 = x0.clone()
    ops.e_log(v1, 1)
    v2 = ops.e_tap(x0 * 0.5 + 1.0, 3)  # sees what m_scale would have written, not written
    return (v2,)


def _drops_log(x0):
    ops.m_scale(x0, 2)
    return (ops.e_tap(x0, 3),)


def test_stale_cache_forbidden_warm_breaks_what_cold_keeps():
    warm, cold = verdict(_loses_write), verdict(faithful)
    found = contract.check_stale(warm, cold, "mutates-fixed")
    assert found and {d.kind for d in found} == {contract.STALE_CACHE}
    assert all(d.detail.startswith("mutates-fixed: [wrong-mutation]") for d in found)
    cls = contract.bug_class(contract.STALE_CACHE, found)
    assert cls == "stale-cache|mutates-fixed,values,wrong-mutation", cls


def test_stale_cache_forbidden_only_the_kinds_cold_does_not_share():
    # warm loses a write and an effect; cold loses the same effect (an ordinary bug):
    # only the lost write is the cache's
    def both(x0):
        return (ops.e_tap(x0 * 0.5 + 1.0, 3),)

    found = contract.check_stale(verdict(both), verdict(_drops_log), "effect-added")
    assert {d.symptoms[1] for d in found} == {contract.WRONG_MUTATION}


def test_stale_cache_allowed_same_bug_cold_and_warm():
    assert contract.check_stale(verdict(_loses_write), verdict(_loses_write), "mutates-fixed") == []


def test_stale_cache_allowed_warm_right_where_cold_is_wrong():
    assert contract.check_stale(verdict(faithful), verdict(_loses_write), "mutates-fixed") == []


def test_stale_cache_allowed_missed_dce_is_not_judged():
    def runs_dead_call(x0):
        ops.p_sin(x0, 0)
        return faithful(x0)

    warm = verdict(runs_dead_call)
    assert warm.of_kind(contract.MISSED_DCE)
    assert contract.check_stale(warm, verdict(faithful), "effect-removed") == []


# ------------------------------------------------------------------ features

REQUESTED = Coverage(frames=2, graphs=2, gaps=((observe.REQUESTED_BREAK, "Call to `torch._dynamo.graph_break()`"),))


def test_a_requested_graph_break_leaves_the_case_tested_but_stops_missed_dce():
    def runs_dead_call(x0):
        ops.p_sin(x0, 0)
        return faithful(x0)
    v = verdict(runs_dead_call, coverage=(REQUESTED,))
    assert v.status == contract.OK and v.kinds() == [] and v.untested == []
    # the correctness clauses hold across it, as anywhere
    def drops_log(x0):
        ops.m_scale(x0, 2)
        return (ops.e_tap(x0, 3),)
    assert verdict(drops_log, coverage=(REQUESTED,)).kinds() == [contract.EFFECT_LOG]


def test_a_requested_break_is_told_apart_by_dynamos_message():
    before = observe.Counts()
    asked = observe.Counts(frames_total=2, frames_ok=2, graphs=2,
                           graph_breaks=(("Call to `torch._dynamo.graph_break()`\n  Explanation: ...", 1),))
    other = observe.Counts(frames_total=2, frames_ok=2, graphs=2, graph_breaks=(("Unsupported builtin", 1),))
    assert Coverage.between(before, asked, False).gaps[0][0] == observe.REQUESTED_BREAK
    assert Coverage.between(before, other, False).gaps[0][0] == observe.GRAPH_BREAK


def _failing(failure: Failure):
    runs = execute(CASE, "cpu", compiled=faithful)
    for br in runs:
        br.compiled = Run(outputs=None, inputs_after=br.eager.inputs_after, failure=failure,
                          coverage=Coverage(frames=0, graphs=0))
    return judge(CASE, runs)


def test_dynamo_declining_a_mark_is_refused_not_a_finding():
    v = _failing(Failure("ConstraintViolationError", "Constraints violated (L['x0'].size()[0])!", observe.COMPILE))
    assert v.status == contract.OK and v.kinds() == []
    assert v.untested[0][0] == observe.REFUSED


def test_the_same_error_from_a_backend_is_a_compile_error():
    msg = "backend='inductor' raised: GuardOnDataDependentSymNode: Could not guard on u0 < 0"
    v = _failing(Failure("BackendCompilerFailed", msg, observe.COMPILE))
    assert v.kinds() == [contract.COMPILE_ERROR] and v.untested == []
    # and a refusal type raised by code that ran is no refusal either
    v = _failing(Failure("ConstraintViolationError", "x", observe.RUNTIME))
    assert v.kinds() == [contract.RUNTIME_ERROR]


GRAD = prog({"x0": ("s0",)}, [("p_sin", ["x0"], "v0", {"site": 0})], outputs=["v0"])
GRAD = case(dataclasses.replace(GRAD, mode=Mode(grad=True)))


def _grad_stand_in(scale: float):
    """Runs the program's step with a backward that is ``scale`` times the true one."""
    _, step = codegen.build_with_step(GRAD.program)

    def program(x0):
        v0 = ops.p_sin(x0, 0)
        return (v0 * 1.0 + (v0 - v0.detach()) * (scale - 1.0),)
    return lambda x0: step(program, x0)


def test_gradients_are_judged_like_returned_values():
    assert verdict(_grad_stand_in(1.0), GRAD).kinds() == []
    wrong = verdict(_grad_stand_in(2.0), GRAD)
    assert wrong.kinds() == [contract.WRONG_OUTPUT]
    assert {d.where for d in wrong.divergences} == {"output 1"}  # the gradient, after the value


IDENTICAL = case(prog({"x0": ("s0",)}, [
    ("p_sin", ["x0"], "v0", {"site": 0}), ("p_sin", ["x0"], "v1", {"site": 0}),
    ("e_log", ["v0"], None, {"site": 1}), ("e_log", ["v0"], None, {"site": 1}),
], outputs=["v0", "v1"]))


def test_identical_pure_calls_may_merge_identical_effectful_calls_may_not():
    def merged_pure(x0):
        v0 = ops.p_sin(x0, 0)
        ops.e_log(v0, 1)
        ops.e_log(v0, 1)
        return (v0, v0)
    assert verdict(merged_pure, IDENTICAL).kinds() == []

    def merged_effect(x0):
        v0 = ops.p_sin(x0, 0)
        ops.e_log(v0, 1)
        return (v0, v0)
    v = verdict(merged_effect, IDENTICAL)
    assert v.kinds() == [contract.EFFECT_LOG]
    assert v.divergences[0].symptoms == (contract.MISSING,)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_low_precision_is_judged_with_its_own_tolerances(dtype):
    ref = torch.linspace(-2, 2, 50, dtype=torch.float64)
    eager = ref.to(dtype)
    ulp = torch.finfo(dtype).eps
    near = (ref * (1 + 2 * ulp)).to(dtype)  # two ulps off, as a fused kernel may be
    assert numeric.tensor_difference(ref, eager, near) is None
    assert numeric.tensor_difference(ref, eager, (ref * 1.1).to(dtype)) is not None
