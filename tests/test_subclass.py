"""The tensor-subclass family (``fuzzer.program.families.subclass``): a wrapper subclass
given to custom ops through handlers registered for it, returned, written in place and
read back part by part; the contract's SUBCLASS VALUES and SUBCLASS LIMITS, each on the
forbidden and the allowed side, with stand-ins for the compiled function."""

import dataclasses

import pytest
import torch
from helpers import case, prog

from fuzzer.judge import contract
from fuzzer.judge.execute import execute
from fuzzer.judge.observe import BindingRuns, Checks, Coverage, Failure, Run
from fuzzer.judge.trial import asks_of
from fuzzer.judge.trial import judge_case as judge
from fuzzer.judge.wrapped import Wrapped
from fuzzer.program import codegen, generate
from fuzzer.program.dtypes import SUBCLASS
from fuzzer.program.families import subclass
from fuzzer.program.ir import InvalidProgram, Stmt, check

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


def test_an_effect_with_a_result_returns_a_pair_of_each_part_s_result():
    """``w_tap`` on a pair: each part logged (an ORDERED effect), a pair of each part's
    cos returned, read by aten as any pair is."""
    tapped = prog({"x0": ("s0", "s1"), "x1": ("s0", "s1")}, [
        ("w_pair", ["x0", "x1"], "v0", {"c": 0.5}), ("w_tap", ["v0"], "v1", {"site": 0}),
        ("pair_scale", ["v1"], "v2", {"c": 2.0})], outputs=["v2"])
    assert check(tapped).dtypes["v1"] == SUBCLASS
    fn = codegen.build(tapped)
    x0, x1 = torch.randn(3, 2), torch.randn(3, 2)
    (out,) = fn(x0, x1)
    assert isinstance(out, fn.__globals__[subclass.CLASS])
    assert torch.allclose(out.a, torch.cos(x0) * 2) and torch.allclose(out.b, torch.cos(x1 * 0.5) * 2)


def test_the_feature_draws_pairs_and_their_uses_and_leaves_other_programs_alone():
    on = [generate.generate(seed, features={subclass.FEATURE: 1.0}) for seed in range(70)]
    for c in on:
        c.validate()
    used = {s.form for c in on for s in c.program.body}
    assert {f.name for f in subclass.FORMS} <= used
    assert generate.generate(5, features={subclass.FEATURE: 1.0}) == on[5]
    off = [generate.generate(seed) for seed in range(40)]
    assert not any(s.form in {f.name for f in subclass.FORMS} for c in off for s in c.program.body)


#: a pair sliced and transposed as library code views a sharded or quantised value, a
#: mutating op and an in-place aten write through those views, both parts read back
VIEWED = prog({"x0": ("s0", "s1"), "x1": ("s0", "s1")}, [
    ("w_pair", ["x0", "x1"], "v0", {"c": 0.5}),
    ("pair_head", ["v0"], "v1", {"dim": 0}),
    ("pair_transpose", ["v1"], "v2", {}),
    ("w_update", ["v2"], None, {"site": 0}),
    ("pair_mul_", ["v0"], None, {"c": 2.0}),
    ("w_fold", ["v2"], "v3", {"site": 1}),
    ("pair_clone", ["v0"], "v4", {}),
    ("pair_add", ["v4", "v0"], "v5", {}),
    ("pair_sum", ["v5"], "v6", {"dim": 1}),
    ("pair_unsqueeze", ["v6"], "v7", {}),
], outputs=["v3", "v0", "v7"], sym_min={"s0": 1, "s1": 1})


def test_aten_views_and_writes_of_a_pair_run_on_both_parts_through_the_views():
    typing = check(VIEWED)
    assert [typing.dtypes[v] for v in ("v1", "v2", "v3", "v4", "v5", "v6", "v7")] == [
        SUBCLASS, SUBCLASS, None, SUBCLASS, SUBCLASS, SUBCLASS, SUBCLASS]
    assert typing.root["v2"] == "x0"
    fn = codegen.build(VIEWED)
    x0, x1 = torch.randn(4, 3), torch.randn(4, 3)
    a, b = x0.clone(), x1 * 0.5
    folded, pair, reduced = fn(x0, x1)
    a[:2].mul_(1.5).sub_(0.5)
    b[:2].add_(a[:2])                                                 # w_update on the view: b += a
    a, b = a * 2.0, b * 2.0                                           # pair_mul_ on the whole pair
    assert torch.allclose(x0, a) and torch.allclose(pair.a, a) and torch.allclose(pair.b, b)
    assert pair.a.untyped_storage().data_ptr() == x0.untyped_storage().data_ptr()
    assert torch.allclose(folded, (a[:2].mT * 2 - 1) + b[:2].mT)
    assert isinstance(reduced, type(pair)) and reduced.shape == (1, 4)                # pair_sum, pair_unsqueeze
    assert torch.allclose(reduced.a, (a + a).sum(1).unsqueeze(0)) and torch.allclose(reduced.b, (b + b).sum(1)[None])
    assert reduced.a.untyped_storage().data_ptr() != x0.untyped_storage().data_ptr()  # pair_clone: fresh


@pytest.mark.compile
def test_an_honest_compile_of_views_and_writes_of_a_pair_is_clean():
    """The allowed side, judged with a real compile: Inductor keeps what the views and the
    writes through them leave in both parts, in the input, and in what is returned."""
    from fuzzer.judge.observe import caches_off
    from fuzzer.judge.trial import run_trial
    c = case(dataclasses.replace(VIEWED, mode=dataclasses.replace(VIEWED.mode, dynamic="true")),
             bindings=[{"s0": 4, "s1": 3}, {"s0": 5, "s1": 2}])
    with caches_off():
        result = run_trial(c, "cpu", confirm=False)
    assert result.status == "clean", result.verdict.divergences


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
    aliasing = Failure("BackendCompilerFailed", "backend='inductor' raised:\nAssertionError: torch.compile is currently "
                       "being used with tensor subclass inputs.\nWe are attempting to a compile a graph with two graph "
                       "outputs\nthat alias one another, specifically output indices:\n\n    [0, 1]\n", "compile")
    assert contract.refusal(Run(failure=aliasing), asks) is not None
    assert contract.refusal(Run(failure=aliasing), dataclasses.replace(asks, subclass=False)) is None
    assert not asks_of(prog({"x0": ("s0",)}, [("p_sin", ["x0"], "v0", {"site": 0})], ["v0"])).subclass


#: what a compiled backward raises when autograd hands it zeros as a plain tensor for a
#: pair output the loss does not read, as 2.13.0 words it and as 2.11.0 did
PLAIN_TANGENT = Failure("RuntimeError", "\nDuring the backward, we encountered a tensor subclass where we guessed its\n"
                        "metadata incorrectly.\nExpected a PairTensor tangent but got a plain Tensor (tangent index: 0)."
                        "\nThis happens when a compiled function returns multiple outputs that\nrequire gradients, but "
                        ".backward() is only called on some of them.", "runtime")
PLAIN_TANGENT_2_11 = dataclasses.replace(PLAIN_TANGENT, message=(
    "\nDuring the backward, we encountered a tensor subclass where we guessed its\nmetadata incorrectly.\n\n"
    "Expected metadata: None, expected type: <class 'PairTensor'>\n\nRuntime metadata: None, runtime type: "
    "<class 'torch.Tensor'>\n\nshape: torch.Size([2])\nTo fix this, your tensor subclass must implement the dunder "
    "method __force_to_same_metadata__."))


def test_a_plain_tangent_for_a_subclass_output_is_refused_and_other_metadata_is_not():
    """torch says to detach an output the loss does not read (#172556): refused where the
    program holds a subclass, in either wording; a tangent of the subclass with other
    metadata (what ``__coerce_same_metadata_as_tangent__`` is for) stays a finding."""
    asks = asks_of(PROGRAM)
    for failure in (PLAIN_TANGENT, PLAIN_TANGENT_2_11):
        gap = contract.refusal(Run(failure=failure), asks)
        assert gap is not None and gap.reason == contract.REFUSED
        assert contract.refusal(Run(failure=failure), dataclasses.replace(asks, subclass=False)) is None
    other = dataclasses.replace(PLAIN_TANGENT_2_11, message=PLAIN_TANGENT_2_11.message.replace(
        "<class 'torch.Tensor'>", "<class 'PairTensor'>"))
    assert contract.refusal(Run(failure=other), asks) is None
