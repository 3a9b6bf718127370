"""The fault catalogue: every entry applies to this torch, undoes cleanly, and the
planted bugs really change what torch.compile does.

The compile tests run real Inductor compiles (CPU) on hand-written programs: with
each fault installed the trial must confirm a finding of the catalogue's expected
kind (and, where two classes share a kind, the class's symptom); without it the
same program must be clean.  Dynamic-only faults must also stay silent on a static
case (every size 1, which ``dynamic=True`` specialises), while plain ones fire on it.
"""

import dataclasses
import importlib
import re
from contextlib import contextmanager
from pathlib import Path

import pytest
import torch
from click.testing import CliRunner
from helpers import case, prog

from fuzzer import faults
from fuzzer.cli import main
from fuzzer.faults import _patching
from fuzzer.faults._fault import (
    BUG_CLASSES,
    EFFECT_DROPPED,
    EFFECTS_REORDERED,
    SHAPE_CLASSES,
)
from fuzzer.internal import INTERNAL_ERROR
from fuzzer.judge import contract
from fuzzer.judge.trial import CLEAN, FINDING, UNTESTED, run_trial
from fuzzer.program.ir import Mode

FAULTS_DOC = Path(__file__).resolve().parent.parent / "docs" / "faults.md"

#: what an effect-log finding must show for the two classes that share the kind
EFFECT_SYMPTOM = {EFFECT_DROPPED: "missing", EFFECTS_REORDERED: "reordered"}

# A custom op writing a program input.
MUTATION = prog({"x0": ("s0", "s1"), "x1": ("s0", "s1")}, [
    ("m_addto", ["x0", "x1"], None, {"site": 0}),
    ("p_sin", ["x1"], "v0", {"site": 1}),
], outputs=["v0"])
# One program every fault of the catalogue acts on: a dead pure call (dead-pure-kept),
# a custom op writing a view of an input (compile-error), two ORDERED effects that
# nothing else orders, one with an unused result (effects-reordered, effect-dce), and a
# custom op writing an input (mutation-lost).  Torch 2.13 compiles it faithfully.
EVERY_FAULT = prog({"x0": ("s0", "s1"), "x1": ("s0", "s1")}, [
    ("p_sin", ["x0"], "v0", {"site": 0}),
    ("head", ["x0"], "v1", {"dim": 0}),
    ("m_scale", ["v1"], None, {"site": 1}),
    ("e_log", ["x0"], None, {"site": 2}),
    ("m_addto", ["x1", "x0"], None, {"site": 3}),
    ("e_tap", ["x1"], "v2", {"site": 4}),
], outputs=["v2"])

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
    assert seen == {(c, d) for c in BUG_CLASSES for d in (False, True) if c in SHAPE_CLASSES or not d}
    for f in faults.CATALOGUE.values():
        assert f.expected_kind in contract.KINDS, f"{f.name}: {f.expected_kind!r} is no finding kind"
        assert f.description and f.targets
        if f.dynamic_only:
            assert f.name.endswith("-dynamic"), f.name
            plain = faults.CATALOGUE[f.name.removesuffix("-dynamic")]
            assert not plain.dynamic_only
            assert (plain.bug_class, plain.expected_kind) == (f.bug_class, f.expected_kind), f.name
            assert set(plain.targets) <= set(f.targets), f.name
    for f in faults.TEST_ONLY.values():
        assert f.name not in faults.CATALOGUE
        assert f.expected_kind in contract.PROCESS_KINDS + (UNTESTED, INTERNAL_ERROR), f.name


def test_the_documented_catalogue_is_the_catalogue():
    """docs/faults.md's table names every fault, with the kind the catalogue expects."""
    documented = {}
    for row in FAULTS_DOC.read_text().splitlines():
        cells = [c.strip() for c in row.strip().strip("|").split("|")]
        if len(cells) == 4 and cells[0].startswith("`"):
            for name in re.findall(r"`([\w-]+)`", cells[0]):
                documented[name] = cells[2].strip("`")
    assert documented == {n: f.expected_kind for n, f in faults.CATALOGUE.items()}


def _resolve(target):
    """The target's owner and attribute, found without the code under test."""
    module, _, path = target.partition(":")
    owner = importlib.import_module(module)
    *parents, name = path.split(".")
    for part in parents:
        owner = getattr(owner, part)
    return owner, name


def _remove(monkeypatch, target):
    """Make ``target`` missing, as in a torch without it (a method: from every class
    of the owner's MRO that defines it)."""
    owner, attr = _resolve(target)
    for k in owner.__mro__ if isinstance(owner, type) else (owner,):
        if attr in vars(k):
            monkeypatch.delattr(k, attr)


@pytest.mark.parametrize("name", sorted(faults.CATALOGUE) + sorted(faults.TEST_ONLY))
def test_targets_exist_here_or_unavailable_says_which(name, monkeypatch):
    fault = faults.get(name)
    for target in fault.targets:
        owner, attr = _resolve(target)
        assert callable(getattr(owner, attr)), target
    assert fault.unavailable() is None
    for target in fault.targets:
        with monkeypatch.context() as m:
            _remove(m, target)
            reason = fault.unavailable()
            assert reason is not None and target.replace(":", ".") in reason, (target, reason)
            assert torch.__version__ in reason
            with pytest.raises(faults.FaultUnavailable, match=re.escape(fault.name)):
                fault.install()
        assert fault.unavailable() is None


def test_faults_command_lists_exactly_the_catalogue(monkeypatch):
    r = CliRunner().invoke(main, ["faults"])
    assert r.exit_code == 0, r.output
    lines = r.output.splitlines()
    rows = [ln.split(None, 4) for ln in lines if not ln.startswith(" ")]
    assert [row[0] for row in rows] == sorted(faults.CATALOGUE)
    for row, description in zip(rows, (ln.strip() for ln in lines if ln.startswith(" "))):
        f = faults.CATALOGUE[row[0]]
        assert row[1:] == [f.bug_class, "->", f.expected_kind, "applicable"], row
        assert description == f.description
    # a fault this torch cannot host is listed with the reason
    _remove(monkeypatch, faults.get("compile-error").targets[0])
    r = CliRunner().invoke(main, ["faults"])
    marked = {ln.split()[0]: ln for ln in r.output.splitlines() if not ln.startswith(" ")}
    assert "n/a: torch._inductor.ir.FallbackKernel.create not found" in marked["compile-error"]
    assert "n/a:" in marked["compile-error-dynamic"] and marked["effect-dce"].endswith("applicable")


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

@pytest.fixture(scope="module")
def unplanted():
    """EVERY_FAULT judged without a fault, on symbolic and on static sizes (once)."""
    return {"symbolic": run_trial(symbolic(EVERY_FAULT), "cpu"), "static": run_trial(static(EVERY_FAULT), "cpu")}


#: faults of a single compile (a cache key's fault shows on cache pairs: tests/test_cache.py;
#: one confined to a feature's path, on a program of that path: below)
COMPILE_FAULTS = sorted(n for n, f in faults.CATALOGUE.items()
                        if f.expected_kind != contract.STALE_CACHE and not f.features and "compile" in f.pipelines)


@pytest.mark.compile
@pytest.mark.parametrize("name", COMPILE_FAULTS)
def test_every_fault_shows_its_kind_on_real_inductor_and_only_under_it(name, unplanted):
    fault = faults.get(name)
    for sizes, result in unplanted.items():
        assert result.status == CLEAN, (sizes, [d.line() for d in result.verdict.divergences])
    with installed(name):
        planted = run_trial(symbolic(EVERY_FAULT), "cpu")
        planted_static = run_trial(static(EVERY_FAULT), "cpu")
    found = {f.kind: f for f in planted.findings}
    assert planted.status == FINDING and fault.expected_kind in found, \
        (planted.status, [d.line() for d in planted.verdict.divergences])
    if fault.bug_class in EFFECT_SYMPTOM:
        seen = contract.bug_class(fault.expected_kind, found[fault.expected_kind].divergences)
        assert seen.text == f"{fault.expected_kind}|{EFFECT_SYMPTOM[fault.bug_class]}"
    if fault.dynamic_only:
        assert planted_static.status == CLEAN, [d.line() for d in planted_static.verdict.divergences]
    else:
        assert fault.expected_kind in {f.kind for f in planted_static.findings}


@pytest.mark.compile
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


@pytest.mark.compile
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


# ------------------------------------------------------------------ scoped faults

def _on_path(body, outputs=(), **mode):
    p = prog({"x0": ("s0", "s1"), "x1": ("s0", "s1")}, body, outputs=outputs)
    return symbolic(dataclasses.replace(p, mode=Mode(**mode)))


WRITE_X0 = [("m_scale", ["x0"], None, {"site": 0}), ("p_sin", ["x1"], "v0", {"site": 1})]
UNUSED_EFFECT = [("e_log", ["x0"], None, {"site": 0}), ("p_sin", ["x1"], "v0", {"site": 1})]
#: a call in an autocast region whose rule casts to bfloat16: its result's dtype shows the cast
AUTOCAST = [("autocast_square", ["x0"], "v0", {"site": 0, "region": "bfloat16"})]
#: a call under torch.func.vmap over dim 1, its batch put first (``out_dims=0``)
VMAP_DIM1 = [("vmap_sin", ["x0"], "v0", {"site": 0, "dim": 1, "out": 0})]
SELF_INDEX_WRITE = [("put_flipped", ["x0"], None, {"dim": 0}), ("p_sin", ["x1"], "v0", {"site": 0})]
#: a program on each scoped fault's path: the fault must show there, and nowhere else
ON_PATH = {
    "effect-dce-training": _on_path(UNUSED_EFFECT, ["v0"], grad=True),
    "effect-dce-after-break": _on_path([("graph_break", [], None, {})] + UNUSED_EFFECT, ["v0"]),
    "effect-dce-unbacked": _on_path(UNUSED_EFFECT, ["v0"], marks=(("x0", 0, "unbacked"),)),
    "mutation-lost-list": _on_path([("m_list", ["x0", "x1"], None, {"site": 0})]),
    "mutation-lost-half": _on_path(WRITE_X0, ["v0"], dtype="bfloat16"),
    "mutation-lost-strided": _on_path(WRITE_X0, ["v0"], strided=("x0",)),
    "layout-write-lost": _on_path([("l_exact_", ["x0"], None, {"site": 0}), ("p_sin", ["x1"], "v0", {"site": 1})],
                                  ["v0"], layouts=(("x0", "transposed"),)),
    # sizes 4 and 6 hand over another Scale and another decay at the second call
    "opaque-guard-dropped": _on_path([("o_scale", ["x0"], "v0", {"site": 0, "obj": "q0"}),
                                      ("c_member", ["x1"], "v1", {"obj": "c0"})], ["v0", "v1"],
                                     objects=(("q0", "Scale", "x0"), ("c0", "Cache", "x1"))),
    "subclass-part-lost": _on_path([("w_pair", ["x0", "x1"], "v0", {"c": 0.5}), ("w_mix", ["v0"], "v1", {"site": 0})],
                                   ["v1"]),
    "cast-dropped": _on_path(AUTOCAST, ["v0"]),
    "cast-dropped-dynamic": _on_path(AUTOCAST, ["v0"]),
    # v_sin's rule keeps the batch where vmap found it, dim 1 of x0
    "batch-dim-lost": _on_path(VMAP_DIM1, ["v0"]),
    "batch-dim-lost-dynamic": _on_path(VMAP_DIM1, ["v0"]),
    # an input written by index from its own values reversed (x0[p] = x0.flip(0))
    "index-put-overlap": _on_path(SELF_INDEX_WRITE, ["v0"]),
    "index-put-overlap-dynamic": _on_path(SELF_INDEX_WRITE, ["v0"]),
    # torch.as_strided(x0.narrow(0, 1, s0 - 1), ...) of x0's first rows, read (feature base-offsets)
    "view-offset-added": _on_path([("narrow", ["x0"], "v0", {"dim": 0}),
                                   ("as_strided_fn", ["v0"], "v1", {"base": ["s0", "s1"], "pieces": ["head", "all"],
                                                                    "order": [0, 1]}),
                                   ("add", ["v1", "v1"], "v2", {})], ["v2"]),
}


def test_every_scoped_fault_has_a_program_on_its_path():
    """(A fault of another target's pipeline, met through that target only, has its
    program in tests/test_targets.py.)"""
    assert set(ON_PATH) == {n for n, f in faults.CATALOGUE.items() if f.features and "compile" in f.pipelines}
    for name, c in ON_PATH.items():
        assert set(dict(faults.get(name).features)) & set(c.program.features()), name


@pytest.mark.compile
@pytest.mark.parametrize("name", sorted(ON_PATH))
def test_a_scoped_fault_shows_on_its_path_only(name):
    fault = faults.get(name)
    off_path = _on_path(UNUSED_EFFECT if fault.expected_kind == contract.EFFECT_LOG else WRITE_X0, ["v0"])
    assert finding_kinds(ON_PATH[name]) == (CLEAN, set())
    with installed(name):
        status, kinds = finding_kinds(ON_PATH[name])
        assert status == FINDING and fault.expected_kind in kinds
        assert finding_kinds(off_path) == (CLEAN, set())
