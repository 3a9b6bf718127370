"""The driver every repro script carries (``fuzzer.render.driver``): inputs drawn as the
package draws them, what the spec asks, the exit status each reading gives, and one
judgement through a stand-in backend (no Inductor)."""

import dataclasses
import json

import pytest
import torch
from helpers import case, divergence_on, prog

from fuzzer.corpus.entry import Entry, Origin
from fuzzer.judge import compiled_autograd, contract, execute, exporting
from fuzzer.judge.observe import Gap
from fuzzer.program import codegen, custom_ops
from fuzzer.program.ir import Mode
from fuzzer.render import driver, repro

P = prog({"x0": ("s0", "s1"), "x1": ("s1",)}, [("p_sin", ["x0"], "v0", {"site": 0}),
                                              ("e_log", ["v0"], None, {"site": 1})], outputs=["v0"])


def _entry(program=P, backend="inductor"):
    return Entry.build(contract.EFFECT_LOG, case(program), [divergence_on(0)],
                       Origin(seed=1, device="cpu", backend=backend))


def test_the_scripts_inputs_are_the_packages():
    for mode in (Mode(), Mode(dtype="float16", strided=("x0",), aliases=())):
        e = _entry(dataclasses.replace(P, mode=mode))
        spec = repro.spec(e)
        for i in range(len(e.case.bindings)):
            for mine, theirs in zip(driver.make_inputs(spec, i, "cpu"), execute.make_inputs(e.case, i, "cpu")):
                assert torch.equal(mine, theirs) and mine.stride() == theirs.stride()


def test_a_dim_is_evaluated_for_one_binding_and_a_step_wraps_the_call():
    assert driver._size("(s0 // 2) - 1", {"s0": 9}) == 3
    assert driver._through(None, abs) is abs
    assert driver._through(lambda fn, x: fn(x) + 1, abs)(-2) == 3


def test_what_a_target_declines_comes_with_the_spec():
    """The declines a script refuses are the ones its spec records (as JSON lists), not
    guessed from its target's name: none recorded, none declined."""
    for target, declines in (("export", exporting.EXPORT_DECLINES), ("compiled-autograd", compiled_autograd.DECLINES)):
        spec = json.loads(json.dumps(repro.spec(dataclasses.replace(_entry(), target=target))))
        assert driver.spec_asks(spec).declines == declines
        assert driver.spec_asks({**spec, "declines": []}).declines == frozenset()
    assert driver.spec_asks({"target": "export"}).declines == frozenset()
    assert driver.spec_asks({"declines": [["E", "compile", "p"]]}).declines == {("E", "compile", "p")}
    asks = driver.spec_asks({"marks": ["unbacked"], "carry": True})
    assert asks.declines == frozenset() and asks.carry and asks.marks == {"unbacked"}


WANTED = contract.bug_class(contract.EFFECT_LOG, [divergence_on(0)])
SPEC = {"kind": contract.EFFECT_LOG, "bug_class": WANTED.text}


@pytest.mark.parametrize("verdict, status", [
    (contract.Verdict(contract.OK, [divergence_on(0)]), driver.REPRODUCES_EXIT),
    (contract.Verdict(contract.OK), driver.FIXED_EXIT),
    (contract.Verdict(contract.INVALID, reason="eager raised"), driver.CANNOT_JUDGE_EXIT),
    (contract.Verdict(contract.OK, [contract.Divergence(contract.EFFECT_LOG, 0, "s", "x", ("extra",))]),
     driver.CANNOT_JUDGE_EXIT),
    (contract.Verdict(contract.OK, untested=[Gap("graph-break", "a break")]), driver.CANNOT_JUDGE_EXIT),
])
def test_each_reading_has_its_exit_status(verdict, status, capsys):
    assert driver.conclude(SPEC, verdict) == status
    if status == driver.REPRODUCES_EXIT:
        assert "REPRODUCES" in capsys.readouterr().out


def test_a_faithful_backend_judges_the_program_clean_and_a_dropped_log_reproduces():
    import backends

    custom_ops.install()
    trace = custom_ops.install().TRACE
    for backend, status in ((backends.FAITHFUL, driver.FIXED_EXIT), (backends.DROP_LOG, driver.REPRODUCES_EXIT)):
        e = _entry(backend=backend)
        spec = {**repro.spec(e), "bug_class": "effect-log|missing"}
        torch._dynamo.reset()
        fn, step = codegen.build_with_step(e.case.program)
        assert driver.conclude(spec, driver.judge(spec, fn, trace, "cpu", step)) == status
