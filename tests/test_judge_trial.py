"""A trial confirms each finding after a fresh compile, replaying only the bindings it needs.

Stand-in backends (no inductor) decide on which bindings the compiled code diverges,
and a recorder sees what the confirmation replays.
"""

import backends
import pytest
import torch
from helpers import case, prog
from torch._dynamo import list_backends, register_backend

from fuzzer.judge import contract, trial
from fuzzer.judge.trial import FINDING, FLAKY, run_trial

#: drops e_log only from a graph compiled for static sizes (a size-1 binding recompiles so)
DROP_LOG_WHEN_STATIC = "dcefuzz_test_drop_log_when_static"
#: drops e_log from as many graphs as ``_DROPS_LEFT["graphs"]`` says, then compiles faithfully
DROP_LOG_ONCE = "dcefuzz_test_drop_log_once"
_DROPS_LEFT = {"graphs": 0}


def _static(gm) -> bool:
    for node in gm.graph.nodes:
        value = node.meta.get("example_value") if node.op == "placeholder" else None
        if isinstance(value, torch.Tensor) and any(isinstance(s, torch.SymInt) for s in value.shape):
            return False
    return True


def _drop_log_when_static(gm, example_inputs):
    return backends._drop_log(gm, example_inputs) if _static(gm) else gm.forward


def _drop_log_once(gm, example_inputs):
    if _DROPS_LEFT["graphs"] > 0:
        _DROPS_LEFT["graphs"] -= 1
        return backends._drop_log(gm, example_inputs)
    return gm.forward


if DROP_LOG_WHEN_STATIC not in list_backends(exclude_tags=()):
    register_backend(_drop_log_when_static, name=DROP_LOG_WHEN_STATIC)
    register_backend(_drop_log_once, name=DROP_LOG_ONCE)

LOGGING = prog({"x": ("s0",)}, [("p_sin", ["x"], "v", {"site": 0}),
                                 ("e_log", ["v"], None, {"site": 1})], outputs=["v"])


def _recording(monkeypatch) -> list[int]:
    """Binding counts of every case the trial runs (first judgement, then confirmation)."""
    seen = []
    real = trial.execute
    monkeypatch.setattr(trial, "execute", lambda c, *a, **k: (seen.append(len(c.bindings)), real(c, *a, **k))[1])
    return seen


def test_a_divergence_on_the_first_binding_is_confirmed_on_that_binding_alone(monkeypatch):
    seen = _recording(monkeypatch)
    result = run_trial(case(LOGGING), "cpu", backends.DROP_LOG)
    assert result.status == FINDING
    assert seen == [3, 1]
    # the finding keeps what the first, full judgement saw
    assert [d.binding for d in result.findings[0].divergences] == [0, 1, 2]


def test_a_later_first_divergence_is_confirmed_on_the_bindings_up_to_it(monkeypatch):
    seen = _recording(monkeypatch)
    result = run_trial(case(LOGGING, [{"s0": 4}, {"s0": 1}, {"s0": 7}]), "cpu", DROP_LOG_WHEN_STATIC)
    assert result.status == FINDING
    assert [d.binding for d in result.verdict.of_kind(contract.EFFECT_LOG)] == [1]
    assert seen == [3, 2]


def test_a_divergence_that_does_not_recur_after_a_fresh_compile_is_flaky(monkeypatch):
    seen = _recording(monkeypatch)
    monkeypatch.setitem(_DROPS_LEFT, "graphs", 1)
    result = run_trial(case(LOGGING), "cpu", DROP_LOG_ONCE)
    assert result.verdict.of_kind(contract.EFFECT_LOG)
    assert (result.status, result.flaky_kinds, result.findings) == (FLAKY, [contract.EFFECT_LOG], [])
    assert seen == [3, 1]


#: on its first graph drops e_log, on later ones duplicates it: one kind, two bugs
SWITCH_BUG = "dcefuzz_test_switch_bug"
_SWITCH = {"graphs": 0}


def _switch_bug(gm, example_inputs):
    _SWITCH["graphs"] += 1
    if _SWITCH["graphs"] == 1:
        return backends._drop_log(gm, example_inputs)

    def twice(*args):
        out = gm.forward(*args)
        torch.ops.dcefuzz.e_log(out[0], 1)  # an extra event
        return out
    return twice


if SWITCH_BUG not in list_backends(exclude_tags=()):
    register_backend(_switch_bug, name=SWITCH_BUG)


def test_the_confirmation_must_show_the_same_bug_class_not_just_the_kind(monkeypatch):
    monkeypatch.setitem(_SWITCH, "graphs", 0)
    result = run_trial(case(LOGGING), "cpu", SWITCH_BUG)
    first = contract.bug_class(contract.EFFECT_LOG, result.verdict.of_kind(contract.EFFECT_LOG))
    assert first.text == "effect-log|missing"
    # the fresh compile shows an effect-log divergence too, but an extra event, not a missing one
    assert (result.status, result.flaky_kinds) == (FLAKY, [contract.EFFECT_LOG])


def test_the_confirmation_compiles_without_the_on_disk_caches(monkeypatch):
    from torch._inductor import config as inductor_config

    during = []
    real = trial.execute
    monkeypatch.setattr(trial, "execute", lambda c, *a, **k: (
        during.append(inductor_config.fx_graph_cache), real(c, *a, **k))[1])
    before = inductor_config.fx_graph_cache
    result = run_trial(case(LOGGING), "cpu", backends.DROP_LOG)
    assert result.status == FINDING
    assert during == [before, False] and inductor_config.fx_graph_cache == before


def test_every_kind_a_case_shows_is_reported(monkeypatch):
    two = prog({"x": ("s0",)}, [("p_sin", ["x"], "v", {"site": 0}),
                                 ("e_log", ["v"], None, {"site": 1}),
                                 ("m_scale", ["x"], None, {"site": 2})], outputs=["v"])
    result = run_trial(case(two), "cpu", backends.DROP_LOG_AND_MUTATION)
    assert result.status == FINDING
    assert sorted(f.kind for f in result.findings) == [contract.EFFECT_LOG, contract.WRONG_MUTATION]


def test_a_real_graph_break_makes_the_trial_untested_not_clean():
    from fuzzer import faults

    c = case(LOGGING)
    assert run_trial(c, "cpu", backends.FAITHFUL).status == trial.CLEAN
    with faults.planted("test-graph-break"):
        result = run_trial(c, "cpu", backends.FAITHFUL)
    assert result.status == trial.UNTESTED
    assert result.untested_reason == "graph-break"
    assert result.verdict.untested[0].message.startswith("dcefuzz test fault")


def test_a_graph_break_dynamo_does_not_count_still_makes_the_trial_untested():
    """A masked store on a 0-d value breaks the graph (a data-dependent ``setitem``)
    without a ``graph_break`` count on torch 2.13: the dead ``p_rowsum`` call is then
    live in the eager code after the break, and must not be judged a missed-dce."""
    program = prog({"x": ("s0",)}, [("p_pos", ["x"], "u", {"site": 0, "size": "u0"}),  # Dynamo captures sizes from data
                                     ("p_rowsum", ["x"], "v", {"site": 1}),
                                     ("index_put_", ["v"], None, {"c": 0.5})], outputs=["u"])
    result = run_trial(case(program), "cpu", backends.FAITHFUL)
    assert result.status == trial.UNTESTED, result.findings
    assert result.untested_reason == "graph-break"


# ------------------------------------------------------------------ a dead call kept by its assert

#: ``v0 = p_pos(x0)`` unused: its result's size comes from data, and Dynamo's graph checks
#: that size at run time (``u0 >= 0``), which reads the call
DEAD_SIZED = prog({"x0": ("s0",)}, [
    ("p_pos", ["x0"], "v0", {"site": 0, "size": "u0"}),
    ("clone", ["x0"], "v1", {}),
], outputs=["v1"])


def test_a_dead_call_its_runtime_assert_reads_is_no_finding():
    """The eager backend runs Dynamo's graph as is, so the dead call runs: Dynamo's
    graph holds the runtime assert on the size it binds, which reads it, and keeping
    it is torch's design."""
    result = run_trial(case(DEAD_SIZED, [{"s0": 4}, {"s0": 6}]), "cpu", backend="eager")
    assert result.status == trial.CLEAN, result.verdict
    assert not result.verdict.of_kind(contract.MISSED_DCE)


def test_a_dead_call_kept_with_the_asserts_off_is_still_missed_dce():
    """With runtime asserts off nothing in the graph reads the call, and the eager
    backend still runs it: a dead call kept for nothing, a finding."""
    with torch._dynamo.config.patch(do_not_emit_runtime_asserts=True):
        result = run_trial(case(DEAD_SIZED, [{"s0": 4}, {"s0": 6}]), "cpu", backend="eager")
    assert result.status == FINDING
    [finding] = result.findings
    assert finding.kind == contract.MISSED_DCE
    assert contract.bug_class(finding.kind, finding.divergences).text == "missed-dce|sizes-from-data"


def test_a_dead_cond_its_runtime_assert_reads_through_the_cond_is_no_finding():
    """``masked_select`` of a ``torch.cond``'s result binds a size the graph asserts on;
    the assert reads the cond, and dead-code elimination keeps a higher-order op whole,
    so the calls of its branches are kept by the assert too."""
    from fuzzer.program import features
    if features.unavailable(features.HOPS):
        pytest.skip(features.unavailable(features.HOPS))
    program = prog({"x0": ("s0",)}, [
        ("cond_sin", ["x0"], "v0", {"site": 0, "site2": 1}),
        ("select_pos", ["v0"], "v1", {"size": "u0"}),
    ], outputs=[])
    result = run_trial(case(program, [{"s0": 2}]), "cpu", backend="eager")
    assert not result.verdict.of_kind(contract.MISSED_DCE), result.verdict


# -- PRECISION ELISION (contract.elision_asked): real compiles of float16 programs

def test_only_a_low_precision_value_on_inductor_is_judged_again_with_the_casts_emulated():
    assert contract.elision_asked("float16", "inductor", contract.EFFECT_LOG)
    assert contract.elision_asked("bfloat16", "inductor", contract.WRONG_OUTPUT)
    assert not contract.elision_asked("float32", "inductor", contract.WRONG_OUTPUT)
    assert not contract.elision_asked("float16", "aot_eager", contract.WRONG_OUTPUT)
    assert not contract.elision_asked("float16", "inductor", contract.COMPILE_ERROR)


def _float16(program):
    from dataclasses import replace
    return replace(program, mode=replace(program.mode, dtype="float16"))


@pytest.mark.compile
def test_allowed_a_float16_value_inductor_kept_in_float32_is_precision_elided():
    """A pair's part added to a custom op's result, logged: eager rounds the part to
    float16 before the add, Inductor does not, and the logged datum comes out eight ulps
    off where eager is near the reference by chance; with eager's casts emulated it is
    right, so it is the documented elision (a campaign of 2026-12-07, seed 700)."""
    from fuzzer.program.ir import Case
    c = Case.from_json({"program": {
        "symbols": ["s0"], "sym_min": {"s0": 0},
        "inputs": [{"name": "x0", "dims": ["s0", "s0", "s0"]}, {"name": "x1", "dims": ["s0", "s0", "s0"]}],
        "body": [{"form": "pair_scale", "args": ["x0"], "out": "v0", "attrs": {"c": 1.5}},
                 {"form": "w_mix", "args": ["v0"], "out": "v1", "attrs": {"site": 0}},
                 {"form": "w_log", "args": ["v1"], "out": None, "attrs": {"site": 1}}],
        "outputs": [], "mode": {"dynamic": "true", "marks": [], "grad": False, "dtype": "float16", "strided": [],
                                "pairs": [["x0", "x1"]]}},
        "bindings": [{"s0": 8}], "input_seed": 8468685184655804485})
    result = run_trial(c, "cpu")
    assert result.status == trial.UNTESTED and result.untested_reason == "precision-elided", result.status


@pytest.mark.compile
def test_forbidden_a_float16_value_the_emulated_casts_still_get_wrong_is_a_finding():
    """bug-1a896a4ceb in float16: the narrow's offset is dropped whatever the rounding."""
    p = _float16(prog({"x0": ("s0", "s0")}, [("copy_back_", ["x0"], None, {"order": [1, 0], "back": [0, 1],
                                                                              "via": "sin"}),
                                              ("narrow", ["x0"], "v0", {"dim": 0})], outputs=["v0"]))
    result = run_trial(case(p, [{"s0": 3}]), "cpu")
    assert result.status == FINDING and [f.kind for f in result.findings] == [contract.WRONG_OUTPUT]
