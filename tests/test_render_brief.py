"""The brief repro (``fuzzer.render.brief``): the check each kind of bug ends with, the
binding it shows on, the inputs drawn as the fuzzer draws them, and a brief that
parses; hand-built entries, nothing compiled or run."""

import ast
import dataclasses

import pytest
import torch
from helpers import case, prog

from fuzzer.corpus.entry import Entry, Origin
from fuzzer.judge import contract, execute
from fuzzer.program.ir import Mode
from fuzzer.render import brief

P = prog({"x0": ("s0",), "x1": ("s0",)}, [("p_sin", ["x0"], "v0", {"site": 0}), ("e_log", ["v0"], None, {"site": 1})],
         outputs=["v0"])


def _entry(kind, divergences, program=P):
    return Entry.build(kind, case(program), divergences, Origin(seed=1, device="cpu", backend="inductor"))


def _log(*symptoms, binding=0):
    return contract.Divergence(contract.EFFECT_LOG, binding, "sequence", "x", symptoms)


def test_an_effect_log_whose_order_is_right_checks_the_data_and_one_reordered_the_order():
    assert brief.check_key(_entry(contract.EFFECT_LOG, [_log("data")])) == "effect-log|data"
    assert brief.check_key(_entry(contract.EFFECT_LOG, [_log("data", "reordered")])) == contract.EFFECT_LOG
    assert brief.check_of(_entry(contract.EFFECT_LOG, [_log("missing")])).records == brief.ORDER


def test_the_binding_is_the_first_a_detail_line_names():
    assert brief.binding_index(_entry(contract.EFFECT_LOG, [_log("missing", binding=2)])) == 2
    assert brief.binding_index(dataclasses.replace(_entry(contract.EFFECT_LOG, [_log("missing")]),
                                                   detail=["no binding here"])) == 0


def test_an_error_ends_with_its_own_type_and_the_place_is_left_out():
    error = contract.Divergence(contract.COMPILE_ERROR, 0, "compile", "KeyError: 'op3'", ("raised KeyError in x",))
    e = _entry(contract.COMPILE_ERROR, [error])
    assert brief.expected_failure(e) == "KeyError"
    assert brief.without_site("KeyError: 'op3' (raised KeyError in x)") == "KeyError: 'op3'"
    assert brief.expected_failure(_entry(contract.EFFECT_LOG, [_log("missing")])) == "AssertionError"


def test_the_inputs_are_the_numbers_the_fuzzer_draws():
    e = _entry(contract.EFFECT_LOG, [_log("missing")])
    namespace = {"torch": torch}
    exec("\n".join(brief.input_lines(e, 1)), namespace)
    for name, drawn in zip(("x0", "x1"), execute.make_inputs(e.case, 1, "cpu")):
        assert torch.equal(namespace[name], drawn)


def test_a_strided_or_aliased_input_is_drawn_afresh_for_each_run():
    aliased = dataclasses.replace(P, mode=Mode(aliases=(("x1", "x0"),)))
    lines = brief.input_lines(_entry(contract.EFFECT_LOG, [_log("missing")], aliased), 0)
    assert lines[0].startswith("def inputs():") and "    x1 = x0.view(x0.shape)" in lines


@pytest.mark.parametrize("divergences, kind", [([_log("missing")], contract.EFFECT_LOG),
                                               ([_log("data")], contract.EFFECT_LOG)])
def test_a_brief_parses_and_ends_with_its_check(divergences, kind):
    e = _entry(kind, divergences)
    text = brief.render(e)
    ast.parse(text)
    assert text.rstrip().endswith(brief.check_of(e).assertion[-1])
    assert "torch.compile(program, dynamic=True, backend='inductor')" in text


def test_a_bug_that_needs_no_trace_is_written_without_the_fuzzers_scaffolding():
    wrong = contract.Divergence(contract.WRONG_OUTPUT, 0, "output 0", "x", ("values",))
    e = _entry(contract.WRONG_OUTPUT, [wrong], prog({"x0": ("s0",)}, [("p_sin", ["x0"], "v0", {"site": 0})],
                                                    outputs=["v0"]))
    assert not brief.traced(e)
    text = brief.render(e)
    assert "p_sin(x0)" in text and "_hit(" not in text
