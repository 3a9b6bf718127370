"""The shrinker: reaches known minima, never slides to another bug, respects its budget.

Most tests use a stand-in oracle (a function of the program text, no compile), so
they show the search itself; one test shrinks a real compiled finding under a
planted fault and checks that the result is 1-minimal.
"""

import dataclasses

import pytest
from helpers import case, finding_of, is_one_minimal, prog

from fuzzer import faults
from fuzzer.judge import contract
from fuzzer.judge.contract import Divergence, Verdict
from fuzzer.program.generate import generate
from fuzzer.program.ir import Case, check
from fuzzer.reduce import signature
from fuzzer.reduce.edits import remove_statements
from fuzzer.reduce.order import complexity
from fuzzer.limits import OracleBudget
from fuzzer.reduce.shrinker import shrink


def count_judge(calls):
    """Wrap a stand-in judge so the test can count its calls."""
    def wrap(judge):
        def inner(c):
            calls.append(c)
            return judge(c)
        return inner
    return wrap


def scale_then_tap(c: Case) -> Verdict:
    """Stand-in bug: a write by m_scale to an input, later read by e_tap from that input."""
    p = c.program
    inputs = {i.name for i in p.inputs}
    written = set()
    for s in p.body:
        if s.form == "m_scale" and s.args[0] in inputs:
            written.add(s.args[0])
        if s.form == "e_tap" and s.args[0] in written:
            return Verdict(contract.OK, [Divergence(contract.EFFECT_LOG, 0, "sequence", "reordered (eager [], compiled [])", ("reordered",))])
    return Verdict(contract.OK, [])


def big_case_with(pattern_first, pattern_second, seed=11):
    """A generated program with two statements of interest spliced in."""
    base = generate(seed)
    p = base.program
    x = p.inputs[0].name
    n_sites = 1 + max([s.site for s in p.body if s.site is not None], default=0)
    first = dataclasses.replace(pattern_first, args=(x,), attrs={"site": n_sites})
    second = dataclasses.replace(pattern_second, args=(x,), attrs={"site": n_sites + 1})
    mid = len(p.body) // 2
    body = p.body[:mid] + (first,) + p.body[mid:] + (second,)
    big = dataclasses.replace(base, program=dataclasses.replace(p, body=body))
    check(big.program)
    return big


def test_reaches_the_known_minimum():
    from fuzzer.program.ir import Stmt
    big = big_case_with(Stmt("m_scale", (), None, {}), Stmt("e_tap", (), "vz", {}))
    start = scale_then_tap(big)
    assert start.divergences
    result = shrink(finding_of(big, contract.EFFECT_LOG, start.divergences), judge=scale_then_tap)
    p = result.case.program
    assert [s.form for s in p.body] == ["m_scale", "e_tap"]
    assert len(p.inputs) == 1 and len(p.inputs[0].dims) == 1
    assert p.outputs == ()
    assert len(result.case.bindings) == 1
    assert result.statements == 2 and result.original_statements == len(big.program.body)
    assert result.confirmed
    assert result.signature.text == "effect-log|reordered :: x0[s0]; m_scale(x0); v0 = e_tap(x0); return ()"
    minimal, keeps = is_one_minimal(result.case, contract.EFFECT_LOG, result.divergences, scale_then_tap)
    assert minimal, keeps


def test_a_step_that_changes_the_bug_is_refused():
    """Two or more e_log calls: 'missing'; exactly one: 'reordered' (a different bug)."""
    def judge(c):
        n = sum(1 for s in c.program.body if s.form == "e_log")
        if n >= 2:
            return Verdict(contract.OK, [Divergence(contract.EFFECT_LOG, 0, "sequence", "missing e_log@0 (..)", ("missing",))])
        if n == 1:
            return Verdict(contract.OK, [Divergence(contract.EFFECT_LOG, 0, "sequence", "reordered (..)", ("reordered",))])
        return Verdict(contract.OK, [])

    p = prog({"x0": ("s0",)}, [("e_log", ["x0"], None, {"site": i}) for i in range(4)]
             + [("p_sin", ["x0"], "v0", {"site": 4})], outputs=["v0"])
    c = case(p)
    result = shrink(finding_of(c, contract.EFFECT_LOG, judge(c).divergences), judge=judge)
    assert [s.form for s in result.case.program.body] == ["e_log", "e_log"]
    assert contract.bug_class(contract.EFFECT_LOG, result.divergences).text == "effect-log|missing"


def test_the_budget_stops_cleanly_with_the_best_so_far():
    from fuzzer.program.ir import Stmt
    big = big_case_with(Stmt("m_scale", (), None, {}), Stmt("e_tap", (), "vz", {}))
    calls = []
    judge = count_judge(calls)(scale_then_tap)
    result = shrink(finding_of(big, contract.EFFECT_LOG, scale_then_tap(big).divergences), judge=judge,
                    budget=OracleBudget(oracle_calls=3, seconds=60))
    assert result.exhausted
    assert result.oracle_calls == len(calls)
    assert len(calls) <= 3 + 2          # the budget, plus the confirmation outside it
    assert scale_then_tap(result.case).divergences  # still the bug
    assert complexity(result.case) <= complexity(big)


@pytest.mark.compile  # the entry is triaged: stage walks compile with Inductor
def test_a_campaigns_time_left_bounds_a_shrink_and_none_left_saves_the_finding_unshrunk():
    from fuzzer.campaign.config import Config
    from fuzzer.campaign.entries import entry_for
    from fuzzer.judge.trial import Finding
    from fuzzer.program.ir import Stmt

    budget = OracleBudget(oracle_calls=150, seconds=120)
    assert budget.within(None) == budget and budget.within(500) == budget
    assert budget.within(30) == OracleBudget(150, 30) and budget.within(-5) == OracleBudget(150, 0)
    big = big_case_with(Stmt("m_scale", (), None, {}), Stmt("e_tap", (), "vz", {}))
    finding = Finding(contract.EFFECT_LOG, big, scale_then_tap(big).divergences, "cpu", "inductor")
    config = Config(seed=0, device="cpu", corpus_dir="unused", shrink_budget=budget)
    calls = []
    judge = count_judge(calls)(scale_then_tap)
    late = entry_for(finding, 7, config, judge, seconds_left=0)
    assert late.case == big and late.shrink is None and not calls   # as the trial confirmed it
    shrunk = entry_for(finding, 7, config, judge, seconds_left=60)
    assert shrunk.statements == 2 and shrunk.shrink["statements"] == 2 and calls


def test_dead_calls_are_never_removed_implicitly():
    """Removing a statement removes only what reads its result, never dead neighbours."""
    p = prog({"x0": ("s0",)}, [
        ("p_sin", ["x0"], "v0", {"site": 0}),     # dead
        ("p_sin", ["x0"], "v1", {"site": 1}),
        ("p_sin", ["v1"], "v2", {"site": 2}),
    ], outputs=["v2"])
    smaller = remove_statements(case(p), {1})
    assert [s.site for s in smaller.program.body] == [0]
    assert smaller.program.outputs == ()


def test_canonical_names_do_not_change_the_signature():
    p1 = prog({"x0": ("s0",)}, [("p_sin", ["x0"], "v5", {"site": 9})], outputs=["v5"])
    p2 = prog({"x0": ("s0",)}, [("p_sin", ["x0"], "v0", {"site": 0})], outputs=["v0"])
    assert signature.normal_form(p1) == signature.normal_form(p2)


@pytest.mark.compile
def test_real_finding_under_a_fault_shrinks_to_a_one_minimal_repro():
    from fuzzer.judge.trial import judge_fresh
    p = prog({"x0": ("s0", "s1"), "x1": ("s0", "s1")}, [
        ("p_sin", ["x0"], "v0", {"site": 0}),
        ("clone", ["x1"], "v1", {}),
        ("e_log", ["v0"], None, {"site": 1}),
        ("m_addto", ["v1", "x0"], None, {"site": 2}),
        ("e_log", ["x1"], None, {"site": 3}),
        ("e_tap", ["v1"], "v2", {"site": 4}),
    ], outputs=["v2"])
    c = case(p, [{"s0": 4, "s1": 6}, {"s0": 5, "s1": 3}, {"s0": 7, "s1": 2}])
    with faults.planted("effect-dce"):
        v = judge_fresh(c, "cpu")
        assert v.of_kind(contract.EFFECT_LOG)
        result = shrink(finding_of(c, contract.EFFECT_LOG, v.of_kind(contract.EFFECT_LOG)))
        assert result.confirmed
        assert result.statements <= 3
        minimal, keeps = is_one_minimal(result.case, contract.EFFECT_LOG, result.divergences,
                                        lambda cc: judge_fresh(cc, "cpu"))
        assert minimal, keeps
    # without the fault the reduced program is clean of this kind: the fault caused it
    assert not judge_fresh(result.case, "cpu").of_kind(contract.EFFECT_LOG)


def test_the_mode_is_simplified_to_what_the_bug_needs():
    """A stand-in bug that needs a mark on x0 and nothing else of the mode: gradients,
    bfloat16, automatic dynamic, a second mark and a strided input all go; the mark the
    bug needs stays, and removing an input takes its marks with it."""
    from fuzzer.program.ir import Mode

    def needs_mark(c: Case) -> Verdict:
        found = scale_then_tap(c)
        return found if ("x0", 0, "unbacked") in c.program.mode.marks else Verdict(contract.OK, [])

    p = prog({"x0": ("s0",), "x1": ("s0",)}, [
        ("m_scale", ["x0"], None, {"site": 0}), ("e_tap", ["x0"], "v0", {"site": 1}),
    ], outputs=["v0"])
    mode = Mode(dynamic="auto", marks=(("x0", 0, "unbacked"), ("x1", 0, "dynamic")), grad=False,
                dtype="bfloat16", strided=("x0", "x1"))
    c = case(dataclasses.replace(p, mode=mode))
    result = shrink(finding_of(c, contract.EFFECT_LOG, needs_mark(c).divergences), judge=needs_mark)
    assert result.case.program.mode == Mode(marks=(("x0", 0, "unbacked"),))
    assert [i.name for i in result.case.program.inputs] == ["x0"]


def test_a_signature_writes_the_mode_and_renumbers_repeated_sites_and_sizes():
    from fuzzer.program.ir import Mode

    def body(site, size):
        return [("p_sin", ["x0"], "v0", {"site": site}), ("p_sin", ["x0"], "v1", {"site": site}),
                ("select_pos", ["v0"], "v2", {"size": size})]
    mode = Mode(marks=(("x0", 0, "unbacked"),), grad=True)
    a = dataclasses.replace(prog({"x0": ("s0",)}, body(5, "u7"), outputs=["v2"]), mode=mode)
    b = dataclasses.replace(prog({"x0": ("s0",)}, body(0, "u0"), outputs=["v2"]), mode=mode)
    check(a)
    assert signature.normal_form(a) == signature.normal_form(b)
    assert signature.normal_form(a).startswith("[dynamic=true mark x0:0:unbacked grad dtype=float32] ")
    assert signature.normal_form(a) != signature.normal_form(dataclasses.replace(a, mode=Mode()))


def test_every_single_simplification_of_a_mode_is_offered():
    from fuzzer.program.ir import Mode
    from fuzzer.reduce.order import mode_complexity, simpler_modes

    mode = Mode(dynamic="auto", marks=(("x0", 0, "unbacked"), ("x0", 1, "dynamic")), grad=True,
                dtype="float16", strided=("x1",), aliases=(("x2", "x0"),))
    offered = list(simpler_modes(mode))
    assert len(offered) == mode_complexity(mode) == 7
    assert all(mode_complexity(m) == 6 for m in offered)
    assert dataclasses.replace(mode, marks=(("x0", 1, "dynamic"),)) in offered
    assert dataclasses.replace(mode, aliases=()) in offered and dataclasses.replace(mode, grad=False) in offered


def test_dcefuzzs_own_error_on_a_candidate_is_refused_and_named_for_the_shrink():
    """A candidate on which our judge raises is not the bug: refused, its error kept under
    the shrink's stage name (not a budget's or any other object's)."""
    from fuzzer import internal

    c = case(prog({"x0": ("s0",)}, [("p_sin", ["x0"], "v0", {"site": 0}),
                                   ("e_log", ["x0"], None, {"site": 1})], outputs=["v0"]))
    found = contract.Divergence(contract.EFFECT_LOG, 0, "sequence", "missing", ("missing",))

    def judge(candidate):
        if len(candidate.program.body) < len(c.program.body):
            raise RuntimeError("our own judge failed")
        return contract.Verdict(contract.OK, [found])

    result = shrink(finding_of(c, contract.EFFECT_LOG, [found]), judge=judge, confirm=False)
    assert len(result.case.program.body) == len(c.program.body) and result.errors
    assert {e.stage for e in result.errors} == {internal.SHRINK}


def test_a_hint_that_shows_the_bug_is_taken_first_and_the_result_is_the_same_minimum():
    """``hints``: a known bug's forms (``edits.keeping_forms``) are tried before any
    pass; taken, the shrink ends where it ends without them in fewer candidates, and a
    hint that does not show the bug costs one candidate and changes nothing."""
    from fuzzer.program.ir import Stmt
    from fuzzer.reduce.edits import keeping_forms
    big = big_case_with(Stmt("m_scale", (), None, {}), Stmt("e_tap", (), "vz", {}))
    divs = scale_then_tap(big).divergences
    plain, hinted, wrong = [], [], []
    without = shrink(finding_of(big, contract.EFFECT_LOG, divs), judge=count_judge(plain)(scale_then_tap))
    hint = keeping_forms(big, ("m_scale", "e_tap"))
    assert {"m_scale", "e_tap"} <= {s.form for s in hint.program.body} and complexity(hint) < complexity(big)
    with_hint = shrink(finding_of(big, contract.EFFECT_LOG, divs), judge=count_judge(hinted)(scale_then_tap),
                       hints=(hint,))
    assert hinted[0] == hint and with_hint.signature == without.signature
    assert len(hinted) < len(plain)
    no_bug = keeping_forms(big, ("e_tap",))
    missed = shrink(finding_of(big, contract.EFFECT_LOG, divs), judge=count_judge(wrong)(scale_then_tap),
                    hints=(no_bug,))
    assert wrong[0] == no_bug and missed.signature == without.signature and len(wrong) == len(plain) + 1


def test_keeping_forms_keeps_what_the_kept_statements_read():
    p = prog({"x0": ("s0",)}, [("p_sin", ["x0"], "v0", {"site": 0}), ("clone", ["x0"], "v1", {}),
                               ("p_cos", ["v0"], "v2", {"site": 1}), ("e_log", ["v2"], None, {"site": 2})],
             outputs=["v1", "v2"])
    from fuzzer.reduce.edits import keeping_forms
    kept = keeping_forms(case(p), ("e_log",)).program
    assert [s.form for s in kept.body] == ["p_sin", "p_cos", "e_log"] and kept.outputs == ("v2",)


def test_the_shrink_record_is_what_an_entry_keeps():
    """``ShrinkResult.record`` writes the keys ``ShrinkRecord`` (``Entry.shrink``) names."""
    from fuzzer.reduce.shrinker import ShrinkRecord, ShrinkResult

    result = ShrinkResult(case=None, signature=None, divergences=[], original_statements=5, statements=2,
                          oracle_calls=9, seconds=1.234, exhausted=False, confirmed=True)
    assert set(result.record()) == ShrinkRecord.__required_keys__
    assert result.record()["seconds"] == 1.23
