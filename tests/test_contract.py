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

from fuzzer.judge import contract, numeric, observe, raised
from fuzzer.judge import guarded as guards
from fuzzer.judge.execute import execute, run_checks
from fuzzer.judge.observe import BindingRuns, Checks, Coverage, Failure, Run
from fuzzer.judge.trial import asks_of, judge_fresh
from fuzzer.judge.trial import judge_case as judge
from fuzzer.program import codegen
from fuzzer.program.ir import Mode
from fuzzer.triage import family

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
    return judge(c, runs, "cpu")


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


def _fake(t):
    """``t`` as a ``FakeTensor``: what ``torch.export`` of a program under
    ``torch.func.grad`` returned from its ``.module()`` (2.13.0)."""
    from torch._subclasses.fake_tensor import FakeTensorMode

    return FakeTensorMode().from_tensor(t)


def _leaked(t):
    """``t`` as a functorch wrapper whose transform is over: what escapes ``torch.func.grad``."""
    out = []

    def loss(x):
        out.append(x * 1.0)
        return x.sum()
    torch.func.grad(loss)(t)
    return out[0]


NOT_REAL = {"fake": _fake, "none": lambda t: None, "meta": lambda t: t.to("meta"),
            "functional": torch._to_functional_tensor, "functorch": _leaked}


@pytest.mark.parametrize("make", NOT_REAL.values(), ids=list(NOT_REAL))
def test_forbidden_a_returned_value_that_is_not_a_real_tensor(make):
    """A tracing artifact where eager returned a tensor is a ``wrong-output`` of its own
    symptom, not our crash: its sizes are symbols and its elements cannot be compared."""
    def stand_in(x0):
        (v2,) = faithful(x0)
        return (make(v2),)
    v = verdict(stand_in)
    assert v.status == contract.OK and v.kinds() == [contract.WRONG_OUTPUT]
    assert {d.symptoms for d in v.divergences} == {(contract.NOT_REAL,)}
    assert contract.bug_class(contract.WRONG_OUTPUT, v.divergences).text == "wrong-output|not-real"


def test_allowed_a_real_tensor_in_another_layout_and_a_real_wrong_value_is_values():
    def laid_otherwise(x0):
        (v2,) = faithful(x0)
        return (v2.mT.contiguous().mT,)

    def wrong(x0):
        (v2,) = faithful(x0)
        return (v2 + 1.0,)
    assert kinds(laid_otherwise) == []
    assert [d.symptoms for d in verdict(wrong).divergences] == [(contract.VALUES,)] * len(CASE.bindings)


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
    assert v.divergences[0].at == (contract.Place(contract.INPUT, "x0"),)


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
    # where each shows (``Divergence.at``): the calls the change is about, not the ones in place
    assert d.divergences[0].at == (contract.Place(contract.CALL, ("e_log", 1)),)
    assert {p.key for p in r.divergences[0].at} == {("e_log", 1), ("e_tap", 3)}
    assert contract.changed_calls([("a", 0), ("b", 1), ("c", 2)], [("a", 0), ("c", 2), ("b", 1)]) == (
        ("b", 1), ("c", 2))
    assert contract.changed_calls([("a", 0), ("b", 1)], [("b", 1)]) == (("a", 0),)


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
    assert v.divergences[0].at == (contract.Place(contract.CALL, ("e_tap", 3)),)


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


def test_only_a_binding_whose_compiled_run_differs_gets_check_runs():
    """The contract names the bindings it must judge against eager again and the
    float64 reference (``needs_checks``), the trial runs those only, and judging one
    without them is refused: a bit-identical binding costs one eager run."""
    def wrong_on_seven(x0):
        (v2,) = faithful(x0)
        return (v2 + 1,) if x0.shape[0] == 7 else (v2,)
    runs = execute(CASE, "cpu", compiled=wrong_on_seven)
    assert [br.binding["s0"] for br in runs] == [4, 7, 2]
    assert contract.needs_checks(runs) == [1]
    with pytest.raises(ValueError, match="no check runs"):
        contract.judge_runs(["x0"], set(), runs)
    for br in runs:
        br.compiled.coverage = WHOLLY
    assert judge(CASE, runs, "cpu").kinds() == [contract.WRONG_OUTPUT]
    assert [br.checks is not None for br in runs] == [False, True, False]
    assert [(event.op, event.site) for event in runs[1].checks.reference.effects] == [("e_log", 1), ("e_tap", 3)]


def test_nondeterministic_eager_is_skipped():
    t = torch.ones(3)
    run = Run(outputs=[t], inputs_after=[t])
    other = Run(outputs=[t + 1], inputs_after=[t])
    compiled = Run(outputs=[t + 2], inputs_after=[t])
    br = BindingRuns({"s0": 3}, eager=run, compiled=compiled, checks=Checks(eager_again=other, reference=run))
    assert judge(CASE, [br], "cpu").status == contract.NONDETERMINISTIC
    # a compiled run identical to eager needs no determinism check: nothing to judge
    same = BindingRuns({"s0": 3}, eager=run, compiled=run)
    assert contract.needs_checks([same]) == []
    assert judge(CASE, [same], "cpu") == contract.Verdict(contract.OK, [])


# ------------------------------------------------------------------ performance

def test_dead_pure_call_executed_is_missed_dce_only():
    def stand_in(x0):
        ops.p_sin(x0, 0)
        return faithful(x0)
    v = verdict(stand_in)
    assert v.kinds() == [contract.MISSED_DCE]
    assert "p_sin@0" in v.divergences[0].detail
    assert v.divergences[0].symptoms == ("plain",)  # kept for nothing the program asks


def test_why_a_dead_call_may_be_kept_parts_missed_dce_bugs():
    """A dead call that binds a size from data (or feeds one) is kept with its unbacked
    symbol; one feeding a torch.cond with the conditional: two bugs, not one."""
    from fuzzer.program.liveness import dead_site_causes

    data = prog({"x0": ("s0",)}, [("p_pos", ["x0"], "v0", {"site": 0, "size": "u0"})])
    feeds = prog({"x0": ("s0",)}, [("p_sin", ["x0"], "v0", {"site": 0}),
                                   ("select_pos", ["v0"], "v1", {"size": "u1"})])
    cond = prog({"x0": ("s0",)}, [("p_sin", ["x0"], "v0", {"site": 0}),
                                  ("cond_sin", ["v0"], "v1", {"site": 1, "site2": 2})])
    assert dead_site_causes(data) == {0: "sizes-from-data"}
    assert dead_site_causes(feeds) == {0: "sizes-from-data"}
    assert dead_site_causes(cond) == {0: "cond", 1: "cond", 2: "cond"}
    assert dead_site_causes(PROGRAM) == {0: "plain"}
    # an identical call repeats the site: the second call's cause is the site's too
    twins = prog({"x0": ("s0",)}, [("p_sin", ["x0"], "v0", {"site": 0}),
                                   ("p_sin", ["x0"], "v1", {"site": 0}),
                                   ("p_pos", ["v1"], "v2", {"site": 1, "size": "u0"})])
    assert dead_site_causes(twins) == {0: "sizes-from-data", 1: "sizes-from-data"}
    ran = contract.Run(calls=[("p_sin", 0)])
    assert contract.check_dead_calls(0, dead_site_causes(cond), ran)[0].symptoms == ("cond",)
    assert contract.check_dead_calls(0, dead_site_causes(feeds), ran)[0].symptoms == ("sizes-from-data",)


def test_a_dead_call_a_runtime_assert_reads_may_run():
    """A dead call whose size from data Dynamo's graph asserts at run time must run for
    the assert: allowed.  The assert read by the graphs of earlier bindings counts for
    later ones (they run the same code); a call no assert reads is still a finding."""
    def stand_in(x0):
        ops.p_sin(x0, 0)
        return faithful(x0)
    asserted = dataclasses.replace(WHOLLY, asserted=(0,))
    assert verdict(stand_in, coverage=(asserted,)).kinds() == []
    assert verdict(stand_in, coverage=(asserted, WHOLLY)).kinds() == []
    assert verdict(stand_in, coverage=(dataclasses.replace(WHOLLY, asserted=(7,)),)).kinds() == [contract.MISSED_DCE]


# ------------------------------------------------------------------ untested

BREAK = Coverage(frames=2, graphs=2, gaps=(observe.Gap(observe.GRAPH_BREAK, "planted"),))


def test_not_wholly_compiled_is_untested_and_never_missed_dce():
    def runs_dead_call(x0):
        ops.p_sin(x0, 0)
        return faithful(x0)
    v = verdict(runs_dead_call, coverage=(BREAK,))
    assert v.status == contract.OK and v.kinds() == []
    assert v.untested == [observe.Gap(observe.GRAPH_BREAK, "planted")]
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
    assert v.kinds() == [] and v.untested[0].reason == observe.NO_GRAPH
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
    assert contract.bug_class(contract.EFFECT_LOG, v.divergences).text == "effect-log|reordered"
    err = [contract.Divergence(contract.COMPILE_ERROR, 0, "compile", "InductorError: x s12 at 0x1f, 35")]
    assert contract.bug_class(contract.COMPILE_ERROR, err).text == "compile-error|InductorError: x # at 0x#, #"


def _raiser(module: str, source: str):
    """The function ``f`` of ``source``, defined as if in torch's ``module``."""
    space = {"__name__": module}
    exec(compile(source, f"<{module}>", "exec"), space)  # noqa: S102 - hand-written test code
    return space["f"]


def _caught(fn, *args):
    try:
        fn(*args)
    except Exception as exc:  # noqa: BLE001
        return exc
    raise AssertionError("did not raise")


class InductorError(Exception):  # the name torch's wrapper has; what it wraps is the error
    def __init__(self, inner):
        super().__init__(f"{type(inner).__name__}: {inner}")
        self.inner_exception = inner


def test_an_error_is_placed_where_torch_raised_it_not_by_its_words():
    pass_a = _raiser("torch._inductor.fx_passes.a", "def f(n):\n    assert n < 0, f'size {n}'\n")
    pass_b = _raiser("torch._inductor.fx_passes.b", "def f(n):\n    assert n < 0, f'size {n}'\n")
    site = raised.raised_at(_caught(pass_a, 3))
    # the same assertion with other sizes in its words is the same place; no line, no file
    assert site == raised.raised_at(_caught(pass_a, 7)) == ("raised AssertionError in torch._inductor:f", "")
    # the same words raised by another pass of the package: the same function name, so the
    # same class (a function moved between files stays one class) ...
    assert raised.raised_at(_caught(pass_b, 3)) == site
    # ... while another function is another place
    other = _raiser("torch._functorch.x", "def f(n):\n    assert n < 0\n")
    assert raised.raised_at(_caught(other, 3))[0] == "raised AssertionError in torch._functorch:f"


def test_a_wrapped_error_is_its_inner_one_and_a_helper_raises_for_its_caller():
    guard = _raiser("torch.fx.experimental.symbolic_shapes", "def f(n):\n    raise ValueError(f'guard {n}')\n")
    caller = _raiser("torch._inductor.lowering", "def f(g, n):\n    return g(n)\n")
    wrapped = InductorError(_caught(caller, guard, 5))
    wrapped.__traceback__ = wrapped.inner_exception.__traceback__
    assert raised.raised_at(wrapped) == ("raised ValueError in torch._inductor:f", "")
    # an error raised from another that is not a wrapper is itself (its cause is how)
    from_stop = _raiser("torch.fx.y", "def f():\n    try:\n        next(iter(()))\n"
                                      "    except StopIteration as si:\n        raise RuntimeError('no arg') from si\n")
    assert raised.raised_at(_caught(from_stop))[0] == "raised RuntimeError in torch.fx:f"
    # nothing of torch in the traceback: no place
    assert raised.raised_at(_caught(lambda: 1 / 0)) == ("", "")


def test_an_error_below_python_keeps_its_words_with_its_place():
    dispatch = _raiser("torch._ops", "def f(msg):\n    raise RuntimeError(msg)\n")  # C++ raising, as seen
    caller = _raiser("torch._functorch.pass_x", "def f(d, msg):\n    return d(msg)\n")
    a = raised.raised_at(_caught(caller, dispatch, "Expected x to be true"))
    b = raised.raised_at(_caught(caller, dispatch, "EffectType.ORDERED"))
    assert a == ("raised RuntimeError in torch._functorch:f", "Expected x to be true")
    assert a[0] == b[0] and a != b
    # the class: the place, and the words normalised where they go with it
    fail = observe.Failure("InductorError", "x", observe.COMPILE, "", *b)
    run = observe.Run()
    run.failure = fail
    divs = contract.check_outcome(0, observe.Run(), run)
    assert contract.bug_class(contract.COMPILE_ERROR, divs).text == \
        "compile-error|raised RuntimeError in torch._functorch:f: EffectType.ORDERED"
    assert family.family(contract.bug_class(contract.COMPILE_ERROR, divs)) == \
        contract.bug_class(contract.COMPILE_ERROR, divs)


def test_a_stale_caches_error_is_known_by_its_words_not_where_it_was_raised():
    """The error a stale cache's code trips over moves between releases (2.14.1 checks
    sizes in another function), while its words and the cache say which bug it is."""
    raised_here = contract.Divergence(contract.RUNTIME_ERROR, 0, "runtime", "AssertionError: wrong number of dims 3",
                                      ("raised AssertionError in torch._inductor:Runner.call",))
    raised_there = dataclasses.replace(raised_here, symptoms=("raised AssertionError in torch._inductor:other",))
    cold = contract.Verdict(contract.OK)
    here = contract.check_stale(contract.Verdict(contract.OK, [raised_here]), cold, "fake-changed:shape")
    there = contract.check_stale(contract.Verdict(contract.OK, [raised_there]), cold, "fake-changed:shape")
    assert contract.bug_class(contract.STALE_CACHE, here) == contract.bug_class(contract.STALE_CACHE, there)
    assert contract.bug_class(contract.STALE_CACHE, here).text == \
        "stale-cache|AssertionError: wrong number of dims #,fake-changed:shape,runtime-error"


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
    # FX's generated placeholder names: which argument a graph lacks is the program's business
    lacks = "RuntimeError: Expected positional argument for parameter arg{}, but one was not passed in!"
    assert contract.normalise_message(lacks.format("3_1")) == contract.normalise_message(lacks.format("2_1")) \
        == contract.normalise_message(lacks.format("7")) != contract.normalise_message(lacks.format("tangents_token"))
    assert contract.normalise_message("primals_2_1 and buf3_0") == "primals_# and buf#"
    assert contract.normalise_message("layer3_1") == "layer3_1"  # not a name FX generates


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
    cls = contract.bug_class(contract.STALE_CACHE, found).text
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

REQUESTED = Coverage(frames=2, graphs=2, gaps=(observe.Gap(observe.REQUESTED_BREAK, "Call to `torch._dynamo.graph_break()`"),))


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
    assert Coverage.between(before, asked, False).gaps[0].reason == observe.REQUESTED_BREAK
    assert Coverage.between(before, other, False).gaps[0].reason == observe.GRAPH_BREAK
    # each break, counted, has its resume function: no second gap for it
    resumed = dataclasses.replace(asked, resumes=1)
    assert [g.reason for g in Coverage.between(before, resumed, False).gaps] == [observe.REQUESTED_BREAK]
    # a resume function Dynamo counted no break for is a break all the same
    silent = dataclasses.replace(resumed, resumes=2)
    assert [g.reason for g in Coverage.between(before, silent, False).gaps] == [observe.REQUESTED_BREAK,
                                                                            observe.GRAPH_BREAK]


def _failing(failure: Failure, marks=()):
    c = dataclasses.replace(CASE, program=dataclasses.replace(PROGRAM, mode=Mode(marks=tuple(marks))))
    runs = execute(c, "cpu", compiled=faithful)
    for br in runs:
        br.compiled = Run(outputs=None, inputs_after=br.eager.inputs_after, failure=failure,
                          coverage=Coverage(frames=0, graphs=0))
    return judge(c, runs, "cpu")


MARKED = [("x0", 0, "dynamic")]
UNBACKED = [("x0", 0, "unbacked")]
CONSTRAINT = Failure("ConstraintViolationError", "Constraints violated (L['x0'].size()[0])!", observe.COMPILE)
GUARD = Failure("GuardOnDataDependentSymNode", "Could not guard on data-dependent expression u0 < 0",
                observe.COMPILE, guarded=guards.GUARD_ON_MARKED)
USER = Failure("UserError", "Dynamic slicing on data-dependent value is not supported", observe.COMPILE)


def test_dynamo_declining_a_mark_is_refused_not_a_finding():
    v = _failing(CONSTRAINT, MARKED)
    assert v.status == contract.OK and v.kinds() == []
    assert v.untested[0].reason == observe.REFUSED
    assert _failing(GUARD, UNBACKED).untested[0].reason == observe.REFUSED
    assert _failing(USER, UNBACKED).untested[0].reason == observe.REFUSED


def test_a_refusal_needs_the_mark_that_asks_for_it():
    """Dynamo may decline only what a mark asked: the same errors from a program with no
    mark (a data-dependent program included), or with a mark that asks something else,
    are Dynamo failing on a legal program."""
    for failure, marks in ((CONSTRAINT, ()), (GUARD, ()), (USER, ()), (GUARD, MARKED),
                           (CONSTRAINT, [("x0", 0, "maybe")]), (USER, [("x0", 0, "maybe")])):
        v = _failing(failure, marks)
        assert v.kinds() == [contract.COMPILE_ERROR] and v.untested == [], (failure.type, marks)


def test_the_same_error_from_a_backend_is_a_compile_error():
    msg = "backend='inductor' raised: ConstraintViolationError: Constraints violated (L['x0'].size()[0])!"
    v = _failing(Failure("BackendCompilerFailed", msg, observe.COMPILE), MARKED)
    assert v.kinds() == [contract.COMPILE_ERROR] and v.untested == []
    # and a refusal type raised by code that ran is no refusal either
    v = _failing(Failure("ConstraintViolationError", "x", observe.RUNTIME), MARKED)
    assert v.kinds() == [contract.RUNTIME_ERROR]


def _guard(wrapper: str, guarded: str) -> Failure:
    """A guard on a data-dependent size as a run records it, raised by Dynamo (its own type)
    or arriving wrapped from a backend, with what its expression asked the value of."""
    msg = "Could not extract specialized integer from data-dependent expression u0 (unhinted: u0)."
    if wrapper != guards.GUARD_ERROR:
        msg = f"backend='inductor' raised:\nGuardOnDataDependentSymNode: {msg}"
    return Failure(wrapper, msg, observe.COMPILE, guarded=guarded)


WRAPPERS = (guards.GUARD_ERROR, "BackendCompilerFailed", "InductorError")


def test_a_guard_on_sizes_marked_unbacked_is_refused_wherever_it_was_raised():
    """mark_unbacked documents that asking a marked size's value raises: Dynamo's guard
    and a backend's (a backward formula AOTAutograd traces) are both that raise."""
    for wrapper in WRAPPERS:
        v = _failing(_guard(wrapper, guards.GUARD_ON_MARKED), UNBACKED)
        assert v.kinds() == [], wrapper
        assert {(g.reason, g.cause) for g in v.untested} == {(observe.REFUSED, guards.GUARD_ERROR)}, wrapper


def test_a_guard_on_a_size_from_data_or_on_zero_or_one_is_a_finding_whatever_the_marks():
    """A size from data is asked for by no mark, and whether a marked size is 0 or 1 is
    answered by mark_unbacked's documentation: a guard that asks either is a finding,
    Dynamo's own in a program with a dim marked unbacked too; and a guard on the value
    of marked sizes needs the unbacked mark."""
    for wrapper in WRAPPERS:
        for guarded in (guards.GUARD_ON_OTHER, guards.GUARD_ON_ZERO_ONE):
            v = _failing(_guard(wrapper, guarded), UNBACKED)
            assert v.kinds() == [contract.COMPILE_ERROR] and v.untested == [], (wrapper, guarded)
        v = _failing(_guard(wrapper, guards.GUARD_ON_MARKED), MARKED)
        assert v.kinds() == [contract.COMPILE_ERROR] and v.untested == [], wrapper


def test_where_torch_cannot_say_what_a_guard_asked_only_dynamos_own_is_refused():
    assert _failing(_guard(guards.GUARD_ERROR, guards.GUARD_ON_UNKNOWN), UNBACKED).untested[0].reason == \
        observe.REFUSED
    for wrapper in WRAPPERS[1:]:
        assert _failing(_guard(wrapper, guards.GUARD_ON_UNKNOWN), UNBACKED).kinds() == [contract.COMPILE_ERROR]


#: masked_select of x0: its backward formula asks the mask's size, x0's
SELECTED = prog({"x0": ("s0", "s1")}, [("select_pos", ["x0"], "v0", {"size": "u0"})], outputs=["v0"])
#: and of that result again: the second one's backward asks the first one's size, from data
SELECTED_TWICE = prog({"x0": ("s0", "s1")}, [("select_pos", ["x0"], "v0", {"size": "u0"}),
                                            ("select_pos", ["v0"], "v1", {"size": "u1"})], outputs=["v1"])


#: bug-ba8f46579d's program: x1 a view of all of x0, x0's dim 0 marked unbacked, x1
#: written and x0 logged: AOTAutograd's input-overlap check asks Eq(2*u0, 0)
OVERLAP = case(dataclasses.replace(
    prog({"x0": ("s0", "s0"), "x1": ("s0", "s0")}, [("unary_", ["x1"], None, {"fn": "sin"}),
                                                   ("e_log", ["x0"], None, {"site": 0})]),
    mode=Mode(marks=(("x0", 0, "unbacked"),), aliases=(("x1", "x0"),))), [{"s0": 2}])


def _graded(program, marks=()):
    return case(dataclasses.replace(program, mode=Mode(marks=tuple(marks), grad=True)), [{"s0": 4, "s1": 3}])


def test_a_guard_asking_a_marked_sizes_value_is_refused_one_asking_zero_or_one_or_data_is_not():
    """Real compiles (``aot_eager``: AOTAutograd traces masked_select's backward, and
    checks which inputs overlap; their guards arrive wrapped in BackendCompilerFailed):
    what a guard asked is read off the ShapeEnv that raised it, not off the program."""
    refused = judge_fresh(_graded(SELECTED, UNBACKED), "cpu", "aot_eager")
    assert refused.kinds() == [], refused.divergences
    assert [(g.reason, g.cause) for g in refused.untested] == [(observe.REFUSED, guards.GUARD_ERROR)]
    assert "BackendCompilerFailed" in refused.untested[0].message
    for c in (_graded(SELECTED_TWICE, UNBACKED), _graded(SELECTED_TWICE), OVERLAP):
        found = judge_fresh(c, "cpu", "aot_eager")
        assert found.kinds() == [contract.COMPILE_ERROR] and found.untested == [], c.program.mode
        assert "GuardOnDataDependentSymNode" in found.divergences[0].detail


#: x0 and a clone of it returned, its dim 0 bound to 4, then 1, then 0
EDGE = case(prog({"x0": ("s0", "s1")}, [("clone", ["x0"], "v0", {})], outputs=["v0"], sym_min={"s0": 0, "s1": 2}),
            [{"s0": 4, "s1": 3}, {"s0": 1, "s1": 3}, {"s0": 0, "s1": 2}])


def _marked_edge(marks):
    return dataclasses.replace(EDGE, program=dataclasses.replace(EDGE.program, mode=Mode(marks=tuple(marks))))


def _edge_stand_in(sizes, how: str):
    """Compiled code that fails where x0's dim 0 is one of ``sizes``: a runtime assert
    that raises, or a wrong value; right elsewhere."""
    def stand_in(x0):
        if x0.shape[0] not in sizes:
            return (x0.clone(),)
        if how == "assert":
            raise RuntimeError("0 <= u0 + (u1 - 1)*Max(1, u0)")
        return (x0.clone() + 1,)
    return stand_in


def test_a_size_marked_unbacked_bound_to_0_or_1_is_not_judged():
    """mark_unbacked documents the marked size is reported as neither 0 nor 1: a binding
    where it is one is outside what the compiled code promises, however it fails there."""
    # (a wrong value of no element, at size 0, breaks nothing: no gap for it)
    for how, sizes in (("assert", ["1", "0"]), ("value", ["1"])):
        v = verdict(_edge_stand_in({0, 1}, how), _marked_edge(UNBACKED))
        assert v.kinds() == [], (how, v.divergences)
        assert [(g.reason, g.cause) for g in v.untested] == [(observe.UNBACKED_EDGE, n) for n in sizes]
        assert "input 0's dim 0 is 1" in v.untested[0].message
    # where the compiled code kept the contract there anyway, nothing was left unjudged
    assert verdict(_edge_stand_in(set(), "value"), _marked_edge(UNBACKED)).untested == []


def test_a_failure_off_the_edge_or_off_the_marked_dim_is_a_finding():
    """The same failure where the marked size is 2 or more; or where the 0 or 1 is in a dim
    that is not marked unbacked (unmarked, marked dynamic, or another dim marked)."""
    v = verdict(_edge_stand_in({4}, "assert"), _marked_edge(UNBACKED))
    assert v.kinds() == [contract.RUNTIME_ERROR] and v.untested == []
    for marks in ((), MARKED, [("x0", 1, "unbacked")]):
        for how, kind in (("assert", contract.RUNTIME_ERROR), ("value", contract.WRONG_OUTPUT)):
            v = verdict(_edge_stand_in({0, 1}, how), _marked_edge(marks))
            assert v.kinds() == [kind] and v.untested == [], (marks, how)


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


#: bug-1c2b26c3fc's program: both dims of x0 marked unbacked, a clone of it written back
CLONE_BACK = case(dataclasses.replace(
    prog({"x0": ("s0", "s0")}, [("clone", ["x0"], "v0", {}), ("copy_", ["v0", "x0"], None, {})], sym_min={"s0": 0}),
    mode=Mode(marks=(("x0", 0, "unbacked"), ("x0", 1, "unbacked")))), [{"s0": 4}, {"s0": 0}])


@pytest.mark.compile
def test_inductors_runtime_assert_on_a_marked_size_of_0_is_not_judged():
    """Inductor's code asserts ``0 <= u0 + (u1 - 1)*Max(1, u0)`` at run time, which a size
    of 0 fails: outside what mark_unbacked promises, so not judged (a finding before)."""
    torch._dynamo.reset()
    runs = execute(CLONE_BACK, "cpu")
    assert runs[0].compiled.failure is None and runs[1].compiled.failure.type == "RuntimeError"
    v = judge(CLONE_BACK, runs, "cpu")
    assert v.kinds() == [] and [(g.reason, g.cause) for g in v.untested] == [(observe.UNBACKED_EDGE, "0")]


#: p_gradlog's backward logs the gradient it is given; the loss reads v1 alone (v0 is
#: logged, not returned), so eager never calls that backward
GRADLOG = case(dataclasses.replace(
    prog({"x0": ("s0",)}, [("p_gradlog", ["x0"], "v0", {"site": 0}), ("e_log", ["v0"], None, {"site": 2}),
                           ("p_sin", ["x0"], "v1", {"site": 1})], outputs=["v1"]), mode=Mode(grad=True)))


def _backward_reached(scale: float, calls: int = 1, other_site: bool = False):
    """Compiled code whose loss also reads ``calls`` calls of p_gradlog, times ``scale``,
    by a term that is zero in the forward: their backwards run on ``scale`` times the
    gradient (zeros for 0); ``other_site``: and an event of zeros logged by the forward."""
    _, step = codegen.build_with_step(GRADLOG.program)

    def program(x0):
        v1 = ops.p_sin(x0, 1)
        for call in range(calls):
            v0 = ops.p_gradlog(x0, 0)
            if call == 0:
                ops.e_log(v0, 2)
            v1 = v1 + (v0 - v0.detach()) * scale
        if other_site:
            ops.e_log(torch.zeros_like(x0), 1)
        return (v1,)
    return lambda x0: step(program, x0)


def test_a_backward_run_on_zeros_eager_never_called_may_log_its_event():
    """Autograd materialises zeros for an output no gradient reached
    (``set_materialize_grads``): compiled code may run p_gradlog's backward on them."""
    v = verdict(_backward_reached(0.0), GRADLOG)
    assert v.kinds() == [] and v.untested == [], v.divergences
    assert v.zero_backward == [0, 1, 2]


def test_a_backward_event_eager_never_logged_is_a_finding_unless_once_and_on_zeros():
    """Only the one event of a backward on zeros: one that saw a gradient, a second one,
    or an event of zeros no backward logs is extra as any other."""
    for stand_in, symptom in ((_backward_reached(0.5), contract.EXTRA),
                              (_backward_reached(0.0, calls=2), contract.EXTRA),
                              (_backward_reached(0.0, other_site=True), contract.EXTRA)):
        v = verdict(stand_in, GRADLOG)
        effects = v.of_kind(contract.EFFECT_LOG)
        assert effects and effects[0].symptoms == (symptom,), v.divergences
    # the events a backward logs are asked for only where the program takes gradients
    assert asks_of(GRADLOG.program).backward_logs == {("e_log", 0)}
    assert asks_of(dataclasses.replace(GRADLOG.program, mode=Mode())).backward_logs == frozenset()


def test_a_backward_eager_called_is_judged_as_any_event():
    """Where the loss reads p_gradlog's result, eager logs its backward's gradient: a
    compiled backward run on zeros there saw other data."""
    reads = dataclasses.replace(GRADLOG, program=dataclasses.replace(GRADLOG.program, outputs=("v0", "v1")))
    _, step = codegen.build_with_step(reads.program)

    def zeroed(x0):
        v0 = ops.p_gradlog(x0, 0)
        ops.e_log(v0, 2)
        return (v0.detach() + (v0 - v0.detach()) * 0.0, ops.p_sin(x0, 1))
    v = verdict(lambda x0: step(zeroed, x0), reads)
    assert [d.symptoms for d in v.of_kind(contract.EFFECT_LOG)][:1] == [(contract.DATA,)], v.divergences
    assert v.zero_backward == []


#: p_gradlog's result is handed across a graph break and never read by the loss: the
#: first graph's compiled backward runs p_gradlog's on zeros
ACROSS_BREAK = case(dataclasses.replace(
    prog({"x0": ("s0",)}, [("p_gradlog", ["x0"], "v0", {"site": 0}), ("p_sin", ["x0"], "v1", {"site": 1}),
                           ("graph_break", [], None, {}), ("clone", ["v0"], "v2", {})], outputs=["v1"]),
    mode=Mode(grad=True)), [{"s0": 4}, {"s0": 3}])


def test_a_compiled_backward_logs_an_event_on_zeros_and_it_is_allowed():
    """A real compile (``aot_eager``): the event eager never logs is there, all zeros."""
    torch._dynamo.reset()
    runs = execute(ACROSS_BREAK, "cpu", backend="aot_eager")
    assert [[e.call for e in br.compiled.effects] for br in runs] == [[("e_log", 0)]] * 2
    assert all(not br.eager.effects for br in runs)
    v = judge(ACROSS_BREAK, runs, "cpu")
    assert v.kinds() == [] and v.zero_backward == [0, 1], v.divergences


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


# ------------------------------------------------------------------ the reference's path

def _low(p, dtype="bfloat16"):
    return dataclasses.replace(p, mode=Mode(dtype=dtype))


#: bfloat16 ``sin(x0) + tanh(x1)``, and its positive elements: a size the data decides,
#: which eager's rounding after every op can move against float64's
SELECT = _low(prog({"x0": ("s0",), "x1": ("s0",)}, [
    ("unary", ["x0"], "v0", {"fn": "sin"}), ("unary", ["x1"], "v1", {"fn": "tanh"}),
    ("add", ["v0", "v1"], "v2", {}), ("select_pos", ["v2"], "v3", {"size": "u3"})], outputs=["v3"]))
#: the same sum deciding a ``torch.cond`` branch
BRANCH = _low(prog({"x0": ("s0",), "x1": ("s0",)}, [
    ("unary", ["x0"], "v0", {"fn": "sin"}), ("unary", ["x1"], "v1", {"fn": "tanh"}),
    ("add", ["v0", "v1"], "v2", {}), ("cond_sin", ["v2"], "v3", {"site": 0, "site2": 1})], outputs=["v3"]))
#: input seeds (found by search) on which eager's bfloat16 keeps another number of
#: elements than float64 (s0 = 200), takes another branch (s0 = 3), or neither
ROUNDED, AGREED, OTHER_BRANCH = 8, 0, 498


def _runs(stand_in, c):
    """The runs of ``c`` with ``stand_in`` as the compiled code, wholly compiled, completed."""
    runs = execute(c, "cpu", compiled=stand_in)
    for br in runs:
        br.compiled.coverage = WHOLLY
    return run_checks(c, "cpu", runs, range(len(runs)))


def _float32_between_ops(x0, x1):
    """What Inductor does: float32 between ops, one rounding at the end."""
    return (torch.sin(x0.float()) + torch.tanh(x1.float())).to(x0.dtype)


def test_a_size_off_by_eagers_rounding_is_allowed():
    c = case(SELECT, [{"s0": 200}], seed=ROUNDED)

    def rounded_once(x0, x1):
        v2 = _float32_between_ops(x0, x1)
        return (torch.masked_select(v2, v2 > 0),)
    runs = _runs(rounded_once, c)
    eager, ref, comp = runs[0].eager.outputs[0], runs[0].checks.reference.outputs[0], runs[0].compiled.outputs[0]
    assert comp.shape == ref.shape != eager.shape  # compiled kept float64's count, not eager's
    v = judge(c, runs, "cpu")
    assert v.status == contract.OK and v.kinds() == [] and v.untested == [] and v.diverged == [0]


def test_a_size_float64_agrees_with_eager_on_is_still_a_finding():
    c = case(SELECT, [{"s0": 200}], seed=AGREED)

    def one_fewer(x0, x1):
        v2 = torch.sin(x0) + torch.tanh(x1)
        return (torch.masked_select(v2, v2 > 0)[1:],)
    v = verdict(one_fewer, c)
    assert v.kinds() == [contract.WRONG_OUTPUT] and v.divergences[0].symptoms == (contract.SHAPE,)
    assert v.diverged == []


def test_a_size_neither_eager_nor_float64_kept_cannot_be_judged():
    c = case(SELECT, [{"s0": 200}], seed=ROUNDED)

    def two_fewer(x0, x1):
        v2 = torch.sin(x0) + torch.tanh(x1)
        return (torch.masked_select(v2, v2 > 0)[2:],)
    v = verdict(two_fewer, c)
    assert v.status == contract.OK and v.divergences == [] and v.diverged == [0]
    assert [u.reason for u in v.untested] == [observe.REFERENCE_DIVERGED]


def test_eagers_path_judged_where_float64_left_it_is_no_crash():
    """The reference has another size than eager; compiled follows eager: comparing
    compiled with float64 element by element would raise (a shape mismatch)."""
    c = case(SELECT, [{"s0": 200}], seed=ROUNDED)

    def eagers_path_nudged(x0, x1):
        v2 = torch.sin(x0) + torch.tanh(x1)
        v3 = torch.masked_select(v2, v2 > 0)
        return (v3 + torch.finfo(v3.dtype).eps * v3,)  # within assert_close of eager
    v = verdict(eagers_path_nudged, c)
    assert v.status == contract.OK and v.kinds() == [] and v.untested == [] and v.diverged == [0]


def test_a_value_that_is_not_a_real_tensor_is_judged_where_float64_left_eagers_path():
    c = case(SELECT, [{"s0": 200}], seed=ROUNDED)

    def fake_of_eagers_path(x0, x1):
        v2 = torch.sin(x0) + torch.tanh(x1)
        return (_fake(torch.masked_select(v2, v2 > 0)),)
    v = verdict(fake_of_eagers_path, c)
    assert v.status == contract.OK and v.diverged == [0]
    assert [(d.kind, d.symptoms) for d in v.divergences] == [(contract.WRONG_OUTPUT, (contract.NOT_REAL,))]


def test_a_reference_on_another_branch_widens_no_tolerance():
    c = case(BRANCH, [{"s0": 3}], seed=OTHER_BRANCH)

    def eagers_branch_wrong(x0, x1):   # eager's predicate was False
        v2 = torch.sin(x0) + torch.tanh(x1)
        return (ops.p_sin(v2 * 0.5, 1) + 0.05,)
    runs = _runs(eagers_branch_wrong, c)
    # the old rule, fed float64's other branch, would have excused the wrong values
    r, e, comp = runs[0].checks.reference.outputs[0], runs[0].eager.outputs[0], runs[0].compiled.outputs[0]
    assert numeric.tensor_difference(r, e, comp) is None
    v = judge(c, runs, "cpu")
    assert v.divergences == [] and v.diverged == [0]
    assert [u.reason for u in v.untested] == [observe.REFERENCE_DIVERGED]   # untested, never clean

    def float64s_branch(x0, x1):       # compiled rounds once, as float64 decides
        return (ops.p_sin(_float32_between_ops(x0, x1), 0),)
    v = verdict(float64s_branch, c)
    assert v.status == contract.OK and v.kinds() == [] and v.untested == [] and v.diverged == [0]


# ------------------------------------------------------------------ higher-order ops

REGION = prog({"x0": ("s0",)}, [("in_region_p_sin", ["x0"], "v0", {"site": 0})], outputs=["v0"])


def _with_hops(hops, graphs=1):
    return (Coverage(frames=1, graphs=graphs, hops=hops),)


def test_an_asked_for_region_that_dynamo_inlined_is_untested():
    def bare(x0):
        return (ops.p_sin(x0, 0) * (1 + 1e-7),)   # differs a little, so the binding is judged
    c = case(REGION)
    inlined = verdict(bare, c, coverage=_with_hops(()))
    assert inlined.kinds() == [] and [u.reason for u in inlined.untested] == [observe.HOP_INLINED]
    kept = verdict(bare, c, coverage=_with_hops(("invoke_subgraph",)))
    assert kept.kinds() == [] and kept.untested == []
    # a torch that cannot say which higher-order ops its graphs hold is not judged on it
    assert verdict(bare, c, coverage=_with_hops(None)).untested == []
    # the other bindings reuse the first one's code: their runs add no graph and no hop
    mixed = verdict(bare, c, coverage=_with_hops(("invoke_subgraph",)) + _with_hops((), graphs=0))
    assert mixed.untested == []


@pytest.mark.compile
def test_dynamo_keeps_a_single_use_region_only_as_the_program_asks(monkeypatch):
    """With its step (``codegen.KEEP_REGIONS``), a region the program calls once reaches
    the backend; without it, Dynamo inlines it (where this torch inlines single-use
    regions) and the case is untested, never clean."""
    from fuzzer.judge.trial import run_trial

    c = case(REGION)
    kept = run_trial(c, "cpu", confirm=False)
    hops = {h for br in execute(c, "cpu") for h in (br.compiled.coverage.hops or ())}
    assert "invoke_subgraph" in hops and kept.status == "clean"
    if not getattr(torch._dynamo.config, "inline_single_use_invoke_subgraph", False):
        pytest.skip("this torch does not inline single-use regions")
    monkeypatch.setattr(codegen, "KEEP_REGIONS", "{}")
    inlined = run_trial(c, "cpu", confirm=False)
    assert inlined.status == "untested" and inlined.untested_reason == observe.HOP_INLINED


# ------------------------------------------------------------------ typed identity

def test_a_bug_class_is_one_record_with_one_format_and_one_parse():
    """Every corpus entry's class reads back as the record that writes it; an error's one
    symptom keeps its commas, any other kind's words are split on them; the class of no
    divergence is empty and false."""
    import json
    from pathlib import Path

    from fuzzer.corpus.store import entries_in, load

    corpus = Path(__file__).resolve().parent.parent / "corpus"
    for path in entries_in([str(corpus)])[0]:
        text = json.loads(Path(path).read_text())["signature"].partition(" :: ")[0]
        assert load(path).bug_class.text == text and contract.BugClass.parse(text).text == text, path
    assert not contract.bug_class(contract.EFFECT_LOG, []) and contract.bug_class(contract.EFFECT_LOG, []).text == ""
    error = contract.BugClass.parse("compile-error|raised AssertionError in torch._inductor:f: a, b")
    assert error == contract.BugClass(contract.COMPILE_ERROR, ("raised AssertionError in torch._inductor:f: a, b",))
    assert contract.BugClass.parse("effect-log|data,reordered").symptoms == ("data", "reordered")
    assert contract.BugClass.parse("missed-dce") == contract.BugClass("missed-dce")
    assert contract.bug_class(contract.EFFECT_LOG, [contract.Divergence(contract.EFFECT_LOG, 0, "s", "d",
                                                                         ("reordered", "data"))]).text \
        == "effect-log|data,reordered"


def test_a_kind_is_an_enum_that_reads_and_writes_as_its_string():
    import json

    assert contract.Kind("wrong-output") is contract.WRONG_OUTPUT and contract.WRONG_OUTPUT == "wrong-output"
    assert f"{contract.CRASH}|x" == "crash|x" and str(contract.Status.OK) == "ok"
    assert json.dumps({contract.EFFECT_LOG: [contract.MISSED_DCE]}) == '{"effect-log": ["missed-dce"]}'
    assert repr(contract.TIMEOUT) == "'timeout'"  # a script that prints a kind writes a literal


def test_a_verdict_says_at_which_later_calls_dynamo_compiled_again():
    """``Verdict.recompiled``: the bindings after the first whose compiled run compiled a
    graph (read by the aliasing fact: code there was compiled for that call)."""
    quiet = Coverage(frames=1, graphs=0)
    assert verdict(faithful, coverage=(WHOLLY, quiet)).recompiled == ()
    assert verdict(faithful, coverage=(WHOLLY, WHOLLY, quiet)).recompiled == (1,)
