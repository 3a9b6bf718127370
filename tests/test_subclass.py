"""The tensor-subclass family (``fuzzer.program.families.subclass``): a wrapper subclass
given to custom ops through handlers registered for it, returned, written in place and
read back part by part; the contract's SUBCLASS VALUES and SUBCLASS LIMITS, each on the
forbidden and the allowed side, with stand-ins for the compiled function."""

import dataclasses

import pytest
import torch
from helpers import case, prog, run_pass, stays_while

from fuzzer.judge import contract
from fuzzer.judge.execute import execute
from fuzzer.judge.observe import BindingRuns, Checks, Coverage, Failure, Run
from fuzzer.judge.wrapped import Wrapped, recorded
from fuzzer.judge.trial import asks_of
from fuzzer.judge.trial import judge_case as judge
from fuzzer.program import codegen, features, generate
from fuzzer.program.dtypes import SUBCLASS
from fuzzer.program.families import subclass
from fuzzer.program.ir import InvalidProgram, Mode, Program, Stmt, check

# x0 and x1 made a pair (x0 its part a), written in place, then a pair and a plain
# tensor of it returned
PROGRAM = prog({"x0": ("s0", "s1"), "x1": ("s0", "s1")}, [
    ("w_pair", ["x0", "x1"], "v0", {"c": 0.5}),
    ("w_update", ["v0"], None, {"site": 0}),
    ("w_mix", ["v0"], "v1", {"site": 1}),
    ("w_fold", ["v0"], "v2", {"site": 2}),
], outputs=["v1", "v2"])
CASE = case(PROGRAM)


def _eager():
    """The program's own function: a stand-in that compiles nothing, and its class."""
    fn = codegen.build(PROGRAM)
    return fn, fn.__globals__[subclass.CLASS]


def verdict(stand_in, c=CASE):
    runs = execute(c, "cpu", compiled=stand_in)
    for br in runs:
        br.compiled.coverage = Coverage(frames=1, graphs=1)
    return judge(c, runs, "cpu")


def _returning(change):
    """A stand-in that runs the program and returns ``change(pair, plain, PairTensor)``."""
    fn, pair_class = _eager()

    def stand_in(x0, x1):
        pair, plain = fn(x0, x1)
        return change(pair, plain, pair_class)
    return stand_in


# ---------------------------------------------------------------- the family itself

def test_a_pair_is_a_value_of_its_own_kind_that_only_the_family_s_forms_take():
    typing = check(PROGRAM)
    assert typing.dtypes["v0"] == SUBCLASS and typing.dtypes["v1"] == SUBCLASS and typing.dtypes["v2"] is None
    assert typing.root["v0"] == "x0"          # the pair's part a is x0 itself
    with pytest.raises(InvalidProgram):       # a plain form never reads a pair
        check(dataclasses.replace(PROGRAM, body=PROGRAM.body + (Stmt("p_sin", ("v0",), "v9", {"site": 9}),)))


def test_the_handlers_say_what_a_call_on_a_pair_does():
    fn, pair_class = _eager()
    x0, x1 = torch.randn(3, 2), torch.randn(3, 2)
    a, b = x0.clone(), x1 * 0.5
    pair, plain = fn(x0, x1)
    a_written, b_written = a * 1.5 - 0.5, b + (a * 1.5 - 0.5)       # w_update: a, then b += a
    assert torch.allclose(x0, a_written)                             # written through the pair
    assert isinstance(pair, pair_class)
    assert torch.allclose(pair.a, torch.sin(a_written) + a_written * 0.5)
    assert torch.allclose(pair.b, torch.sin(b_written) + b_written * 0.5 + a_written)
    assert type(plain) is torch.Tensor and torch.allclose(plain, a_written * 2 - 1 + b_written)


def test_a_run_keeps_a_subclass_by_its_parts():
    _, pair_class = _eager()
    value = recorded(pair_class(torch.ones(2), torch.zeros(2)))
    assert isinstance(value, Wrapped) and value.kind == subclass.CLASS and value.names == ("a", "b")
    assert [type(p) for p in value.parts] == [torch.Tensor, torch.Tensor] and value.context == "None"


def test_the_feature_draws_pairs_and_their_uses_and_leaves_other_programs_alone():
    on = [generate.generate(seed, features={subclass.FEATURE: 1.0}) for seed in range(40)]
    for c in on:
        c.validate()
    used = {s.form for c in on for s in c.program.body}
    assert {f.name for f in subclass.FORMS} <= used
    assert generate.generate(5, features={subclass.FEATURE: 1.0}) == on[5]
    off = [generate.generate(seed) for seed in range(40)]
    assert not any(s.form in {f.name for f in subclass.FORMS} for c in off for s in c.program.body)


def test_a_call_written_without_its_site_passes_none_and_the_handler_reads_alike():
    text = codegen.source(PROGRAM, plain=True)
    assert "torch.ops.dcefuzz.w_mix(v0)" in text and "register_torch_dispatch(\"dcefuzz::w_mix\"" in text
    assert text.count("class PairTensor") == 1


# ---------------------------------------------------------------- SUBCLASS VALUES

def test_an_honest_compile_of_a_pair_is_clean():
    v = verdict(_returning(lambda pair, plain, cls: (pair, plain)))
    assert v.status == contract.OK and v.kinds() == [], v.reason


def test_allowed_a_pair_whose_parts_have_other_strides_and_float_noise():
    def other_layout(t):
        return (t * (1 + 1e-7)).mT.contiguous().mT
    v = verdict(_returning(lambda pair, plain, cls: (cls(other_layout(pair.a), other_layout(pair.b)), plain)))
    assert v.kinds() == [], [d.line() for d in v.divergences]


def test_forbidden_a_plain_tensor_where_eager_returned_a_pair():
    v = verdict(_returning(lambda pair, plain, cls: (pair.a.clone(), plain)))
    assert v.kinds() == [contract.WRONG_OUTPUT]
    (div, *_) = v.divergences
    assert div.symptoms == (contract.OTHER_FORM,) and div.where == "output 0"
    assert "a plain tensor != eager PairTensor(a, b" in div.detail


def test_forbidden_a_pair_where_eager_returned_a_plain_tensor():
    v = verdict(_returning(lambda pair, plain, cls: (pair, cls(plain, plain.clone()))))
    assert [d.symptoms for d in v.divergences][:1] == [(contract.OTHER_FORM,)] and v.divergences[0].where == "output 1"


def test_forbidden_a_pair_with_a_wrong_part():
    v = verdict(_returning(lambda pair, plain, cls: (cls(pair.a, pair.b + 1.0), plain)))
    assert v.kinds() == [contract.WRONG_OUTPUT]
    assert {d.symptoms for d in v.divergences} == {(contract.VALUES,)}
    assert all(d.detail.startswith("part b:") for d in v.divergences)


def test_forbidden_a_pair_with_its_parts_swapped():
    v = verdict(_returning(lambda pair, plain, cls: (cls(pair.b, pair.a), plain)))
    assert v.kinds() == [contract.WRONG_OUTPUT] and v.divergences[0].detail.startswith("part a:")


def test_forbidden_another_class_context_or_parts_allowed_the_same():
    parts = (torch.ones(2), torch.zeros(2))
    eager = Wrapped(subclass.CLASS, "None", ("a", "b"), parts)
    for other in (Wrapped("Other", "None", ("a", "b"), parts), Wrapped(subclass.CLASS, "'meta'", ("a", "b"), parts),
                  Wrapped(subclass.CLASS, "None", ("a", "c"), parts),
                  Wrapped(subclass.CLASS, "None", ("a", "b"), (parts[0], Wrapped("Inner", "None", ("x",),
                                                                                   (parts[1],))))):
        assert contract.subclass_difference(eager, other) == (contract.OTHER_FORM,
                                                              f"{other.text()} != eager {eager.text()}")
    same = Wrapped(subclass.CLASS, "None", ("a", "b"), (parts[0].clone(), parts[1] + 1))
    assert contract.subclass_difference(eager, same) is None        # its parts' data is clause 1's


def test_off_the_reference_s_path_a_pair_is_still_judged_by_what_it_is_and_its_parts():
    """Where the float64 reference left eager's path, a value that agrees with neither is
    unjudged: a pair of another form is a finding there too, a pair of the same form
    agreeing part by part is not."""
    ref = Run(outputs=[Wrapped(subclass.CLASS, "None", ("a", "b"), (torch.zeros(2, dtype=torch.float64),) * 2)])
    eager = Run(outputs=[Wrapped(subclass.CLASS, "None", ("a", "b"), (torch.ones(2), torch.ones(2)))])
    runs = BindingRuns({}, eager, checks=Checks(eager, ref))
    plain = Run(outputs=[torch.ones(2)])
    divs, unjudged = contract.judge_off_path(0, [], runs, plain)
    assert [d.symptoms for d in divs] == [(contract.OTHER_FORM,)] and unjudged == []
    close = Run(outputs=[Wrapped(subclass.CLASS, "None", ("a", "b"), (torch.ones(2), torch.ones(2) + 1e-7))])
    assert contract.judge_off_path(0, [], runs, close) == ([], [])
    wrong = Run(outputs=[Wrapped(subclass.CLASS, "None", ("a", "b"), (torch.ones(2), torch.ones(2) * 3))])
    assert contract.judge_off_path(0, [], runs, wrong) == ([], ["output 0 part b"])


# ---------------------------------------------------------------- SUBCLASS LIMITS

#: what AOTAutograd raises for mutated inputs that alias one another where the graph has a
#: subclass output, as a compiled run under Inductor records it
ALIASED = Failure("BackendCompilerFailed", "backend='inductor' raised:\nRuntimeError:         Encountered aliased "
                  "inputs that are mutated in the graph, but at least one input/output\n        to the graph is a "
                  "tensor subclass. This is not supported today.", "compile")


def test_what_torch_says_it_does_not_support_for_a_subclass_is_refused_only_where_one_is():
    asks = asks_of(PROGRAM)
    assert asks.subclass
    gap = contract.refusal(Run(failure=ALIASED), asks)
    assert gap is not None and gap.reason == contract.REFUSED and gap.cause == "BackendCompilerFailed"
    assert contract.refusal(Run(failure=ALIASED), dataclasses.replace(asks, subclass=False)) is None
    other = dataclasses.replace(ALIASED, message="backend='inductor' raised:\nRuntimeError: something else")
    assert contract.refusal(Run(failure=other), asks) is None
    bare = Failure("RuntimeError", "Metadata mutations are currently not allowed on tensor subclasses", "compile")
    assert contract.refusal(Run(failure=bare), asks) is not None
    assert not asks_of(prog({"x0": ("s0",)}, [("p_sin", ["x0"], "v0", {"site": 0})], ["v0"])).subclass


# ---------------------------------------------------------------- inputs handed over as a pair

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
    for mode in (Mode(pairs=(("x0", "x2"),), grad=True), Mode(pairs=(("x0", "x2"),), marks=(("x2", 0, "dynamic"),)),
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


# ---------------------------------------------------------------- shrinking toward plain tensors

def _forms(c) -> list[str]:
    return [s.form for s in c.program.body]


def test_the_shrinker_makes_a_pair_the_plain_tensor_it_wraps_where_the_bug_allows():
    made = run_pass("plain", CASE, stays_while(lambda c: True)).best.program
    assert [s.form for s in made.body] == ["m_scale", "p_sin", "p_sin"]      # w_pair gone, its calls plain
    assert made.body[0].args == ("x0",) and made.outputs == ("v1", "v2")
    assert all(t is None for t in check(made).dtypes.values())
    handed = run_pass("plain", case(HANDED), stays_while(lambda c: True)).best.program
    assert handed.mode.pairs == () and [s.form for s in handed.body] == ["m_scale", "m_addto", "p_sin"]
    kept = run_pass("plain", CASE, stays_while(lambda c: "w_update" in _forms(c))).best
    assert _forms(kept) == _forms(CASE)                                      # a bug that needs the pair keeps it


def test_two_pairs_one_call_reads_are_made_plain_together_and_a_part_read_back_is_its_tensor():
    two = case(prog({"x0": ("s0",), "x1": ("s0",)}, [
        ("w_pair", ["x0", "x1"], "v0", {"c": 0.5}),
        ("w_mix", ["v0"], "v1", {"site": 0}),
        ("w_addto", ["v1", "v0"], None, {"site": 1}),
        ("w_second", ["v1"], "v2", {}),
    ], outputs=["v2"]))
    made = run_pass("plain", two, stays_while(lambda c: True)).best.program
    assert [s.form for s in made.body] == ["p_sin", "m_addto"] and made.outputs == ("v1",)
    assert made.body[1].args == ("v1", "x0")


def test_the_feature_hands_inputs_over_as_pairs_and_modules_keep_them_as_state():
    drawn = [generate.generate(seed, features={**features.ALL, subclass.FEATURE: 1.0}) for seed in range(60)]
    paired = [c.program for c in drawn if c.program.mode.pairs]
    assert paired and any(n in p.mode.module for p in paired for n, _ in p.mode.pairs)
    for p in paired:
        assert not p.mode.grad and subclass.FEATURE in p.features()
        partner = p.mode.pairs[0][1]
        assert not any(partner in s.args for s in p.body) and partner not in p.outputs


def test_a_finding_at_a_pair_is_kept_when_the_pair_becomes_the_tensor_it_wraps():
    """The shrink reads a pair's part a in its place: a finding that showed at the pair's
    value shows at that tensor once plain (``spots.own_spots``)."""
    from fuzzer.judge.spots import VALUE, Spot, own_spots

    made = case(prog({"x0": ("s0",), "x1": ("s0",)}, [("w_pair", ["x0", "x1"], "v0", {"c": 0.5})], outputs=["v0"]))
    div = contract.Divergence(contract.WRONG_OUTPUT, 0, "output 0", "x", (contract.VALUES,),
                              (contract.Place(contract.OUTPUT, 0),))
    assert own_spots(made, [div]) == {Spot(VALUE, "v0"), Spot(VALUE, "x0")}
