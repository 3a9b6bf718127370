"""The fault catalogue: every entry applies to this torch, undoes cleanly, and the
planted bugs really change what torch.compile does.

The compile tests run real Inductor compiles (CPU) on hand-written programs: with
the fault installed the trial must confirm a finding of the catalogue's expected
kind; without it the same program must be clean.  Dynamic-only faults must also
stay silent on a static case (every size 1, which ``dynamic=True`` specialises).
"""

from contextlib import contextmanager

import pytest
from helpers import case, prog

from fuzzer import faults
from fuzzer.faults import _patching
from fuzzer.faults._fault import BUG_CLASSES
from fuzzer.judge import contract
from fuzzer.judge.trial import CLEAN, FINDING, run_trial

KIND_OF_CLASS = {
    "effect-dropped": contract.EFFECT_LOG,
    "mutation-lost": contract.WRONG_MUTATION,
    "effects-reordered": contract.EFFECT_LOG,
    "dead-pure-kept": contract.MISSED_DCE,
    "compile-error": contract.COMPILE_ERROR,
}

# Two effects with unused results, one with a used result, and a dead pure call.
EFFECTS = prog({"x0": ("s0", "s1")}, [
    ("p_sin", ["x0"], "v0", {"site": 0}),
    ("e_log", ["x0"], None, {"site": 1}),
    ("e_log", ["x0"], None, {"site": 2}),
    ("e_tap", ["x0"], "v1", {"site": 3}),
], outputs=["v1"])
# A custom op writing a program input.
MUTATION = prog({"x0": ("s0", "s1"), "x1": ("s0", "s1")}, [
    ("m_addto", ["x0", "x1"], None, {"site": 0}),
    ("p_sin", ["x1"], "v0", {"site": 1}),
], outputs=["v0"])

SYMBOLIC_SIZES = (4, 6)
STATIC_SIZE = 1  # specialised by dynamic=True: the graph has no shape symbols


def symbolic(p):
    return case(p, [{s: n for s in p.symbols} for n in SYMBOLIC_SIZES])


def static(p):
    return case(p, [{s: STATIC_SIZE for s in p.symbols}])


@contextmanager
def installed(name):
    undo = faults.get(name).install()
    try:
        yield
    finally:
        undo()


def finding_kinds(c):
    result = run_trial(c, "cpu")
    return result.status, {f.kind for f in result.findings}


# ------------------------------------------------------------------ no compile

def test_catalogue_covers_every_class_plain_and_dynamic():
    seen = {(f.bug_class, f.dynamic_only) for f in faults.CATALOGUE.values()}
    assert seen == {(c, d) for c in BUG_CLASSES for d in (False, True)}
    for f in faults.CATALOGUE.values():
        assert f.expected_kind == KIND_OF_CLASS[f.bug_class], f.name
        assert f.description and f.targets


@pytest.mark.parametrize("name", sorted(faults.CATALOGUE))
def test_fault_applies_to_this_torch(name):
    assert faults.get(name).unavailable() is None


@pytest.mark.parametrize("name", sorted(faults.CATALOGUE))
def test_install_and_undo_restore_everything_exactly(name):
    fault = faults.get(name)
    targets_before = {t: _patching.raw(t) for t in fault.targets}
    settings = [(m, a) for m, a, _ in _patching.CACHE_SETTINGS]
    config_before = {(m, a): getattr(__import__(m, fromlist=[a]), a) for m, a in settings}
    undo = fault.install()
    try:
        for t in fault.targets:
            assert _patching.raw(t) is not targets_before[t], f"{t} not patched"
        for (m, a), value in zip(settings, (v for _, _, v in _patching.CACHE_SETTINGS)):
            assert getattr(__import__(m, fromlist=[a]), a) == value
    finally:
        undo()
    undo()  # idempotent
    for t in fault.targets:
        assert _patching.raw(t) is targets_before[t], f"{t} not restored"
    for (m, a), value in config_before.items():
        assert getattr(__import__(m, fromlist=[a]), a) == value


def test_missing_internal_is_reported_not_raised():
    real = faults.get("compile-error")
    ghost = faults.Fault(
        name="ghost", bug_class=real.bug_class, expected_kind=real.expected_kind,
        dynamic_only=False, description="patches something this torch lacks",
        targets=("torch._inductor.ir:NoSuchKernel.create",), build=real.build)
    reason = ghost.unavailable()
    assert reason is not None and "NoSuchKernel" in reason and "not found in torch" in reason
    with pytest.raises(faults.FaultUnavailable):
        ghost.install()


def test_unknown_name_lists_known_ones():
    with pytest.raises(KeyError, match="effect-dce"):
        faults.get("no-such-fault")


# ------------------------------------------------------------------ real compiles

def test_effect_dce_drops_a_dead_effect():
    assert finding_kinds(symbolic(EFFECTS)) == (CLEAN, set())
    with installed("effect-dce"):
        status, kinds = finding_kinds(symbolic(EFFECTS))
    assert status == FINDING and contract.EFFECT_LOG in kinds


def test_mutation_lost_loses_the_input_write():
    assert finding_kinds(symbolic(MUTATION)) == (CLEAN, set())
    with installed("mutation-lost"):
        status, kinds = finding_kinds(symbolic(MUTATION))
    assert status == FINDING and contract.WRONG_MUTATION in kinds


def test_dead_pure_kept_dynamic_only_fires_on_symbolic_shapes():
    with installed("dead-pure-kept-dynamic"):
        symbolic_result = finding_kinds(symbolic(EFFECTS))
        static_result = finding_kinds(static(EFFECTS))
    assert symbolic_result == (FINDING, {contract.MISSED_DCE})
    assert contract.MISSED_DCE not in static_result[1]
    with installed("dead-pure-kept"):  # the same static case does expose the plain variant
        assert contract.MISSED_DCE in finding_kinds(static(EFFECTS))[1]


def test_compile_caches_neither_mask_nor_leak_a_fault():
    """Clean, then planted, then clean again, with the on-disk caches on around it."""
    import torch

    saved = (torch._inductor.config.fx_graph_cache, torch._functorch.config.enable_autograd_cache)
    torch._inductor.config.fx_graph_cache = True
    torch._functorch.config.enable_autograd_cache = True
    try:
        c = symbolic(MUTATION)
        assert finding_kinds(c) == (CLEAN, set())          # fills the caches
        with installed("mutation-lost"):
            assert torch._inductor.config.fx_graph_cache is False
            status, kinds = finding_kinds(c)               # not masked by the clean artifact
        assert status == FINDING and contract.WRONG_MUTATION in kinds
        assert torch._inductor.config.fx_graph_cache is True
        assert finding_kinds(c) == (CLEAN, set())          # nothing of the fault leaked
    finally:
        torch._inductor.config.fx_graph_cache, torch._functorch.config.enable_autograd_cache = saved


@pytest.mark.parametrize("name, index", [("effect-dce", 0), ("mutation-lost", 2)])
def test_seeded_programs_show_the_fault_and_only_under_it(name, index):
    """Generated programs (campaign seed 0) where the self-test first detects the fault."""
    from fuzzer.judge.trial import judge_fresh
    from fuzzer.program.generate import generate, program_seed

    c = generate(program_seed(0, index))
    kind = faults.get(name).expected_kind
    with installed(name):
        assert judge_fresh(c, "cpu").of_kind(kind)
    assert not judge_fresh(c, "cpu").of_kind(kind)
