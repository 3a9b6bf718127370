"""The shrink passes (``fuzzer.reduce.passes``) and the edits they propose, one by one.

Each pass has an example of what it takes, run alone under a stand-in oracle (a pure
rule of the program, no compile; drivers in ``helpers``); Hypothesis properties then
hold every pass and every edit to two rules on generated programs: what comes out is
legal (``ir.check`` accepts it) and no larger (``order.complexity``) than what went in.
"""

import dataclasses

import pytest
from helpers import case, prog, run_pass, stays_while
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from fuzzer.program.ir import Case, InvalidProgram, Mode, check
from fuzzer.reduce.edits import canonical_case, remove_statements
from fuzzer.reduce.order import complexity, mode_complexity
from fuzzer.reduce.passes.mode import mode_edits
from fuzzer.reduce.passes.rewrite import statement_edits
from fuzzer.reduce.passes.schedule import PASSES, SCHEDULE
from fuzzer.reduce.passes.sizes import size_edits
from fuzzer.strategies import cases

PROPERTY = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def forms_of(c: Case) -> list[str]:
    return [s.form for s in c.program.body]


# ------------------------------------------------------------------ the schedule

def test_every_pass_is_scheduled_under_its_own_name():
    assert set(SCHEDULE) == set(PASSES)
    assert all(p.name == name for name, p in PASSES.items())
    for p in PASSES.values():
        with pytest.raises(dataclasses.FrozenInstanceError):
            p.name = "other"


# ------------------------------------------------------------------ each pass

def test_bindings_keeps_the_one_failing_binding():
    c = case(prog({"x0": ("s0",)}, [("e_log", ["x0"], None, {"site": 0})]), [{"s0": n} for n in (4, 7, 2)])
    # the bug shows while some binding puts s0 at 7: each binding alone is tried, in order
    judge = stays_while(lambda cc: any(b["s0"] == 7 for b in cc.bindings))
    run = run_pass("bindings", c, judge)
    assert run.best.bindings == ({"s0": 7},)


def test_statements_deletes_all_the_bug_does_not_need_and_what_reads_it():
    c = case(prog({"x0": ("s0",)}, [("p_sin", ["x0"], "v0", {"site": 0}), ("e_log", ["x0"], None, {"site": 1}),
                                    ("p_sin", ["v0"], "v1", {"site": 2}), ("e_log", ["v1"], None, {"site": 3})],
                  outputs=["v1"]))
    run = run_pass("statements", c, stays_while(lambda cc: "e_log" in forms_of(cc)))
    assert forms_of(run.best) == ["e_log"]
    assert run.best.program.outputs == ()


def test_outputs_drops_every_returned_value_the_bug_does_not_need():
    c = case(prog({"x0": ("s0",)}, [("p_sin", ["x0"], "v0", {"site": 0}), ("p_sin", ["x0"], "v1", {"site": 1})],
                  outputs=["v0", "v1"]))
    run = run_pass("outputs", c, stays_while(lambda cc: "v1" in cc.program.outputs))
    assert run.best.program.outputs == ("v1",)
    assert run_pass("outputs", c, stays_while(lambda cc: True)).best.program.outputs == ()


def test_inputs_drops_an_unread_input_with_its_marks_and_symbols():
    p = prog({"x0": ("s0",), "x1": ("s1",)}, [("e_log", ["x0"], None, {"site": 0})])
    c = case(dataclasses.replace(p, mode=Mode(marks=(("x1", 0, "dynamic"),))))
    run = run_pass("inputs", c, stays_while(lambda cc: True))
    assert [i.name for i in run.best.program.inputs] == ["x0"]
    assert run.best.program.symbols == ("s0",) and run.best.program.mode == Mode()


def test_mode_keeps_only_what_the_bug_needs():
    p = prog({"x0": ("s0",)}, [("e_log", ["x0"], None, {"site": 0})])
    c = case(dataclasses.replace(p, mode=Mode(dynamic="auto", grad=True, strided=("x0",))))
    run = run_pass("mode", c, stays_while(lambda cc: cc.program.mode.grad))
    assert run.best.program.mode == Mode(grad=True)


def test_rewrite_takes_simpler_ops_and_earlier_operands():
    c = case(prog({"x0": ("s0",)}, [("p_sin", ["x0"], "v0", {"site": 0}), ("e_tap", ["v0"], "v1", {"site": 1})]))
    # e_tap's result is unread, so e_log (which has none) may stand for it
    run = run_pass("rewrite", c, stays_while(lambda cc: len(cc.program.body) == 2))
    assert [(s.form, s.args) for s in run.best.program.body] == [("p_sin", ("x0",)), ("e_log", ("x0",))]


#: a tagged in-place call whose result is written, read and returned after it
TAGGED = prog({"x0": ("s0",)}, [("t_scale", ["x0"], "v0", {"site": 0}), ("mul_", ["v0"], None, {"c": 2.0}),
                                ("p_sin", ["v0"], "v1", {"site": 1})], outputs=["v0", "v1"])


def test_rewrite_takes_a_tagged_op_to_the_plain_one_and_its_result_to_its_argument():
    run = run_pass("rewrite", case(TAGGED), stays_while(lambda cc: len(cc.program.body) == 3))
    p = run.best.program
    assert [(s.form, s.args, s.out) for s in p.body] == [("m_scale", ("x0",), None), ("mul_", ("x0",), None),
                                                         ("p_sin", ("x0",), "v1")]
    assert p.outputs == ("x0", "v1")


def test_the_plain_call_computes_and_writes_what_the_tagged_call_did():
    """Reading the argument for the result changes nothing a run shows: the same
    returned values and the same final inputs, eagerly, where the plain op computes
    what the tagged one did."""
    import torch

    from fuzzer.program import codegen, custom_ops
    from fuzzer.program.rewire import read_as_operand
    from fuzzer.reduce.edits import simpler_stmt

    custom_ops.install()
    chained = prog({"x0": ("s0",), "x1": ("s0",)}, [("t_sin_out", ["x1", "x0"], "v0", {"site": 0}),
                                                    ("t_addto", ["v0", "x0"], "v1", {"site": 1}),
                                                    ("mul_", ["v1"], None, {"c": 0.5})], outputs=["v1", "v0"])
    # the plain ops that compute what the tagged ones do (t_sin_out's plain op computes another thing)
    for p, n, simpler in ((TAGGED, 0, "m_scale"), (chained, 1, "m_addto")):
        plain = read_as_operand(p, n, simpler_stmt(p.body[n], simpler))
        check(plain)
        runs = []
        for q in (p, plain):
            inputs = [torch.arange(5.0) - 2.0 + k for k in range(len(q.inputs))]
            outs = codegen.build(q)(*inputs)
            runs.append((tuple(o.clone() for o in outs), tuple(inputs)))
        torch.testing.assert_close(runs[1], runs[0], rtol=0, atol=0)


def test_sizes_merges_symbols_and_shrinks_bindings_to_their_minimums():
    c = case(prog({"x0": ("s0", "s1")}, [("e_log", ["x0"], None, {"site": 0})]), [{"s0": 5, "s1": 9}])
    run = run_pass("sizes", c, stays_while(lambda cc: True))
    assert run.best.program.inputs[0].dims == ("s0",)
    assert run.best.bindings == ({"s0": 1},)


# ------------------------------------------------------------------ properties

def legal(c: Case) -> bool:
    try:
        check(c.program)
    except InvalidProgram:
        return False
    return True


@PROPERTY
@given(cases(features="all"), st.data())
def test_removing_statements_is_legal_and_no_larger(c, data):
    # (a program may have no statement: one whose every proposal its features refused)
    indices = data.draw(st.sets(st.sampled_from(range(len(c.program.body))))) if c.program.body else set()
    smaller = remove_statements(c, indices)
    assert legal(smaller)
    assert complexity(smaller) <= complexity(c)
    assert len(smaller.program.body) <= len(c.program.body) - len(indices)


@PROPERTY
@given(cases(features="all"))
def test_renumbering_is_legal_and_the_same_size(c):
    renamed = canonical_case(c)
    assert legal(renamed) and complexity(renamed) == complexity(c)


@PROPERTY
@given(cases(features="all"))
def test_mode_and_size_edits_are_legal_or_refused_by_the_checker_and_always_smaller(c):
    for edit in (*mode_edits(c), *size_edits(c)):
        legal(edit)    # raises nothing but InvalidProgram
        assert complexity(edit) < complexity(c)
    # each edit takes one part of the mode away (the last window takes the calls it changes between with it,
    # the last module buffer or the last object takes the objects' being held by the module)
    def taken_with(before, after):
        return ((bool(before.window_calls) and not after.windows and bool(before.windows))
                + (before.object_attrs and not after.object_attrs and not (after.module and after.objects)))
    assert all(mode_complexity(e.program.mode) == mode_complexity(c.program.mode) - 1
               - taken_with(c.program.mode, e.program.mode)
               for e in mode_edits(c))


@PROPERTY
@given(cases(features="all"))
def test_statement_rewrites_are_legal_or_refused_and_keep_the_shape_of_the_program(c):
    p = c.program
    for edit in statement_edits(c):
        legal(edit)
        q = edit.program
        # a tagged op's returned result may become its argument (``rewire.read_as_operand``)
        assert (len(q.body), q.inputs, len(q.outputs), edit.bindings) == (len(p.body), p.inputs, len(p.outputs),
                                                                         c.bindings)


#: the passes whose every candidate is legal (the others may propose what the IR refuses)
ALWAYS_LEGAL = ("bindings", "statements", "outputs", "inputs")


@pytest.mark.parametrize("name", sorted(PASSES))
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(c=cases(features="all"), data=st.data())
def test_each_pass_gives_a_legal_case_no_larger_that_keeps_the_bug(name, c, data):
    """Under a stand-in bug that stays while a drawn statement's form is present."""
    assume(c.program.body)  # an empty program has no form to keep
    form = data.draw(st.sampled_from(forms_of(c)))
    run = run_pass(name, c, stays_while(lambda cc: form in forms_of(cc)))
    assert legal(run.best)
    assert complexity(run.best) <= complexity(c) and len(run.best.program.body) <= len(c.program.body)
    assert form in forms_of(run.best)
    offered_legal = [legal(candidate) for candidate in run.offered]   # nothing raised but InvalidProgram
    if name in ALWAYS_LEGAL:
        assert all(offered_legal)
