"""Cache pairs (``fuzzer.cache``): the declaration variants, and real pairs.

The variants are checked where they are cheap to check: every side's library
registers, the new side of each is honest (``torch.library.opcheck``, and
``gradcheck`` for the backward formulas), and the old side is dishonest where its
kind says so.  A process registers an op once, so each library is registered
here under a namespace of its own.

Five real pairs (two fresh processes each, about 15 s on 2 cores) show the mode
sees what it must and nothing else, on small hand-written programs:

* forbidden: with the planted fault ``cache-key-ignores-custom-passes`` the key
  leaves out Inductor's custom passes, and the new side gets the old side's code,
  compiled with a pass that deletes a write to an input: a stale-cache finding;
* allowed: without the fault the new side misses the cache (untested, not a finding);
* allowed: an op's body changed is served from the cache (a hit) and is right,
  since the op runs at run time whatever the cache holds;
* forbidden, torch's own bug: donated buffers turned off, a backward cached while
  they were on overwrites a saved tensor the second gradients need;
* allowed: the same change where the backward keeps its inputs is served and right.
"""

import random
from concurrent.futures import ThreadPoolExecutor

import pytest
import torch
from helpers import case, key, klass, prog

from fuzzer.cache import trial, variants
from fuzzer.cache.pair import CACHE_MISS
from fuzzer.cache.variants import Variant
from fuzzer.judge import contract
from fuzzer.judge.observe import Gap
from fuzzer.program.custom_ops import BY_NAME, CUSTOM_OPS, MUTATING
from fuzzer.program.generate import program_seed


def family(text: str) -> str:
    """The family of the bug class written ``text``, as its text (``fuzzer.triage.family``)."""
    from fuzzer.triage.family import family as family_of

    return family_of(klass(text)).text


ALL = [(name, *option) for name in variants.VARIED for option in variants._options(name, grad_ok=True)]


def _register(library: str, namespace: str) -> dict:
    text = library.replace('"dcefuzz::', f'"{namespace}::')
    scope: dict = {}
    exec(compile(text, f"<{namespace}>", "exec"), scope)
    return scope


def _sample(name: str, dtype=torch.float32):
    x, y = torch.randn(4, 3, dtype=dtype), torch.randn(4, 3, dtype=dtype)
    if name == "p_head":
        return (x, 2, 0)
    if name in ("p_mix", "m_addto", "m_shift", "m_swap"):
        return (x, y, 0)
    return (x, 0)


@pytest.mark.parametrize("n", range(len(ALL)), ids=[f"{a[0]}-{a[1]}-{i}" for i, a in enumerate(ALL)])
def test_every_variant_registers_and_its_new_side_is_honest(n):
    name, kind, detail, old, new = ALL[n]
    old_ns, new_ns = f"dcefuzz_old{n}", f"dcefuzz_new{n}"
    _register(variants.source_for([name], {name: old}), old_ns)
    _register(variants.source_for([name], {name: new}), new_ns)
    args = _sample(name)
    torch.library.opcheck(getattr(getattr(torch.ops, new_ns), name).default, args)
    # the old sides that lie (over-declaring a write, mutates-narrowed's, is allowed;
    # opcheck cannot see a stride's lie on these samples)
    if kind == variants.MUTATES_FIXED or kind == variants.FAKE_CHANGED and (
            "shape" in detail or "dtype" in detail):
        with pytest.raises(Exception):  # noqa: B017 - opcheck raises its own kinds
            torch.library.opcheck(getattr(getattr(torch.ops, old_ns), name).default, args)


@pytest.mark.parametrize("name", [op.name for op in CUSTOM_OPS if op.name in variants.BACKWARD])
def test_backward_formulas_true_on_the_new_side_and_wrong_on_the_old(name):
    scopes = {}
    for side, scale in (("new", 1.0), ("old", variants.OLD_GRAD_SCALE)):
        ns = f"dcefuzz_grad_{side}_{name}"
        _register(variants.source_for([name], backward=False) + "\n\n" + variants.backward_source(name, scale), ns)
        scopes[side] = getattr(getattr(torch.ops, ns), name)
    args = [a.requires_grad_() if isinstance(a, torch.Tensor) else a for a in _sample(name, torch.float64)]
    assert torch.autograd.gradcheck(lambda *a: scopes["new"](*a), args)
    assert not torch.autograd.gradcheck(lambda *a: scopes["old"](*a), args, raise_exception=False)


def test_variants_are_drawn_deterministically_and_cover_every_kind():
    drawn = set()
    for i in range(60):
        pseed = program_seed(5, i)
        case_ = trial.cache_case(pseed)
        v = trial.variant_for(case_, pseed)
        assert v == trial.variant_for(trial.cache_case(pseed), pseed)
        if v is not None:
            drawn.add(v.kind)
            assert v.op == "" or v.op in case_.program.custom_ops()
    # effect-removed needs an effectful op, which cache programs never draw
    assert drawn >= set(variants.KINDS) - {variants.EFFECT_REMOVED}, sorted(drawn)


def test_a_variant_round_trips_through_json():
    every = variants.variants_of(trial.cache_case(program_seed(5, 3)).program)
    v = random.Random(1).choice(every)
    assert Variant.from_json(v.to_json()) == v


def test_cache_programs_hold_no_effectful_op_and_few_statements():
    for i in range(30):
        program = trial.cache_case(program_seed(9, i)).program
        assert all(BY_NAME[n].declaration != "effectful" for n in program.custom_ops())
        assert len(program.body) <= 6


# ---------------------------------------------------------------- real pairs

#: an unused write to an input: a pass deleting unused calls deletes it
PAIR_CASE = case(prog({"x0": ("s0", "s1")}, [
    ("m_scale", ["x0"], None, {"site": 0}),
    ("p_sin", ["x0"], "v0", {"site": 1}),
], outputs=["v0"]), bindings=[{"s0": 4, "s1": 3}])


#: a custom op's result saved for the backward (``v0 * v0``), which nothing else holds:
#: torch donates it to the backward, whose compiled code may write over it
DONATED_CASE = case(prog({"x0": ("s0",)}, [
    ("p_sin", ["x0"], "v0", {"site": 0}),
    ("mul", ["v0", "v0"], "v1", {}),
], outputs=["v1"]), bindings=[{"s0": 8}])
#: a backward that keeps what it is given: served from the cache and right, taken twice
KEPT_CASE = case(prog({"x0": ("s0",), "x1": ("s0",)}, [
    ("unary", ["x0"], "v0", {"fn": "sin"}),
    ("mul", ["v0", "x1"], "v1", {}),
    ("sum", ["v1"], "v2", {"dim": 0}),
], outputs=["v2"]), bindings=[{"s0": 8}])
DONATED_LABEL = "config-changed:donated_buffer"


def _config_variant() -> Variant:
    (v,) = [v for v in variants.variants_of(PAIR_CASE.program) if v.kind == variants.CONFIG_CHANGED]
    return v


def _donation_variant(c) -> Variant:
    (v,) = [v for v in variants.variants_of(c.program) if v.label == DONATED_LABEL]
    return v


def test_the_donation_variant_needs_gradients_and_takes_them_twice_on_the_new_side():
    """Turning donated buffers off only matters to a backward, and only to one run
    twice: the variant is offered where gradients can be taken, and only its new side
    takes them twice (the old side's donation forbids it)."""
    assert not [v for v in variants.variants_of(PAIR_CASE.program) if v.twice]  # it writes in place
    v = _donation_variant(DONATED_CASE)
    assert (v.kind, v.grad, v.twice) == (variants.CONFIG_CHANGED, True, True)
    assert v.config_old == {"torch._functorch.config.donated_buffer": True}
    assert v.config_new == {"torch._functorch.config.donated_buffer": False}
    assert Variant.from_json(v.to_json()) == v
    jobs = trial.jobs_of(DONATED_CASE, v, "cpu", "inductor")
    assert (jobs["old"]["twice"], jobs["new"]["twice"]) == (False, True)


def test_gradients_taken_twice_are_the_gradients_taken_once():
    from fuzzer.cache.pair import with_grads

    x = torch.randn(5)
    once, twice = with_grads(lambda t: (t.sin() * t.sin(),))(x), with_grads(lambda t: (t.sin() * t.sin(),), True)(x)
    assert all(torch.equal(a, b) for a, b in zip(once, twice))


@pytest.fixture(scope="module")
def pairs():
    """The three pairs, run once for every assertion below, side by side: each side is
    a process of its own, mostly one core's work."""
    eager = [v for v in variants.variants_of(PAIR_CASE.program)
             if v.kind == variants.EAGER_CHANGED and v.op == "p_sin"][0]
    asked = {
        "fault": (_config_variant(), "cache-key-ignores-custom-passes"),
        "no fault": (_config_variant(), None),
        "eager": (eager, None),
        "donated": (_donation_variant(DONATED_CASE), None),
        "kept": (_donation_variant(KEPT_CASE), None),
    }
    cases = {"donated": DONATED_CASE, "kept": KEPT_CASE}
    with ThreadPoolExecutor(len(asked)) as pool:
        running = {name: pool.submit(trial.judge_pair, cases.get(name, PAIR_CASE), variant, "cpu", fault=fault)
                   for name, (variant, fault) in asked.items()}
        return {name: future.result() for name, future in running.items()}


@pytest.mark.compile
def test_pair_forbidden_a_key_that_ignores_a_change_serves_stale_code(pairs):
    v = pairs["fault"]
    assert v.status == contract.OK, v.reason
    assert not v.untested, v.untested
    found = v.of_kind(contract.STALE_CACHE)
    assert found, v.divergences
    assert contract.bug_class(contract.STALE_CACHE, found).text == "stale-cache|config-changed,values,wrong-mutation"


@pytest.mark.compile
def test_pair_allowed_a_key_that_sees_the_change_misses(pairs):
    v = pairs["no fault"]
    assert v.status == contract.OK and not v.divergences
    assert [gap.reason for gap in v.untested] == [CACHE_MISS]


@pytest.mark.compile
def test_pair_allowed_an_op_body_changed_is_served_and_right(pairs):
    v = pairs["eager"]
    assert v.status == contract.OK and not v.divergences
    assert not v.untested  # served from the cache: the pair tested something


@pytest.mark.compile
def test_pair_forbidden_a_backward_cached_with_donated_buffers_is_served_after_they_are_turned_off(pairs):
    """torch's own bug, no planted fault (2.11 to 2.14.1): the FX graph cache's key
    leaves out which saved tensors the backward was told it may overwrite, so the new
    side, which turned donation off to take the gradients twice, is served a backward
    that overwrites ``v0`` and its second gradients are wrong.  A torch whose key sees
    the setting misses the cache (untested); served and right is what must not be."""
    v = pairs["donated"]
    assert v.status == contract.OK, v.reason
    found = v.of_kind(contract.STALE_CACHE)
    if not found:
        assert [gap.reason for gap in v.untested] == [CACHE_MISS], (v.divergences, v.untested)
        return
    assert contract.bug_class(contract.STALE_CACHE, found).text == f"stale-cache|{DONATED_LABEL},values,wrong-output"


@pytest.mark.compile
def test_pair_allowed_gradients_taken_twice_through_a_backward_that_keeps_its_inputs(pairs):
    v = pairs["kept"]
    assert v.status == contract.OK and not v.divergences, v.divergences
    assert not v.untested  # served from the cache: the pair tested something


def test_two_settings_a_key_missed_are_two_bug_families():
    assert family(f"stale-cache|{DONATED_LABEL},values,wrong-output") != family(
        "stale-cache|config-changed,values,wrong-output")
    assert family("stale-cache|fake-changed:shape,values,wrong-output") == family(
        "stale-cache|fake-changed:stride,values,wrong-output")


@pytest.mark.compile
def test_a_side_that_fails_makes_the_pair_invalid():
    broken = Variant(variants.EAGER_CHANGED, "p_sin", "p_sin: broken", old="raise SystemExit(3)\n",
                     new=BY_NAME["p_sin"].source)
    v = trial.judge_pair(PAIR_CASE, broken, "cpu")
    assert v.status == contract.INVALID and "old side" in v.reason


def test_mutating_ops_offer_each_mutates_kind():
    kinds = {k for name in variants.VARIED if BY_NAME[name].declaration == MUTATING
             for k, *_ in variants._options(name, True)}
    assert {variants.MUTATES_FIXED, variants.MUTATES_NARROWED, variants.MUTATES_WIDENED} <= kinds


def test_stale_cache_families_merge_wrong_values_and_keep_the_label_apart():
    assert family("stale-cache|mutates-fixed,values,wrong-mutation") == family(
        "stale-cache|mutates-fixed,values,wrong-mutation,wrong-output") == "stale-cache|corrupted-value,mutates-fixed"
    assert family("stale-cache|backward-changed,values,wrong-output") != family(
        "stale-cache|mutates-fixed,values,wrong-output")
    # an effect gone is no wrong value; an error loses its message, a fake impl its aspect
    assert family("stale-cache|effect-added,effect-log,missing") == "stale-cache|effect-added,effect-log,missing"
    assert family("stale-cache|AssertionError: expected size #==# stride #==# at dim=#,fake-changed:stride,"
                  "runtime-error") == family("stale-cache|AssertionError: wrong number of dimensions#,"
                                             "fake-changed:shape,runtime-error") == "stale-cache|fake-changed,runtime-error"


def test_a_bug_with_its_examples_is_full_until_a_smaller_finding_comes(tmp_path):
    from fuzzer.corpus.bugs import key_of
    from fuzzer.corpus.entry import Entry, Origin
    from fuzzer.corpus.examples import Examples

    examples = Examples(tmp_path, cap=1)
    assert examples.held() == {}
    stale = [d for d in contract.check_stale(
        contract.Verdict(contract.OK, [contract.Divergence(contract.WRONG_OUTPUT, 0, "output 0", "x",
                                                           (contract.VALUES,))]),
        contract.Verdict(contract.OK), "mutates-fixed")]
    entry = Entry.build(contract.STALE_CACHE, PAIR_CASE, stale,
                        Origin(seed=1, device="cpu", backend="inductor", variant=_config_variant().to_json()))
    examples.save(entry)
    assert examples.held() == {key_of(entry): entry.statements}


@pytest.mark.parametrize("gaps, status", [([], "clean"), ([Gap(CACHE_MISS, "no cache")], "untested"),
                                          ([Gap("graph-break", "a break")], "untested")])
def test_a_pair_is_clean_only_when_served_and_wholly_compiled(monkeypatch, gaps, status):
    monkeypatch.setattr(trial, "judge_pair", lambda *a, **k: contract.Verdict(contract.OK, untested=list(gaps)))
    assert trial.run_cache_trial(PAIR_CASE, _config_variant(), "cpu").status == status


def test_only_a_finding_of_a_bug_with_its_examples_is_counted_unshrunk(monkeypatch, tmp_path):
    """A stale-cache finding is triaged before its shrink only when a full bug shares its
    family, and kept unshrunk only when that triage puts it in the full bug."""
    from fuzzer.campaign import entries
    from fuzzer.campaign.config import Config
    from fuzzer.corpus.bugs import key_of
    from fuzzer.judge.trial import Finding
    from fuzzer.triage.culprit import Culprit

    triaged = []

    def stub(entry, config, seconds_left=None, errors=None, key_only=False):
        triaged.append(entry.id)
        entry.culprit = Culprit(stage="cache", subsystem="aot_autograd_cache", kind=contract.STALE_CACHE)
        return entry

    monkeypatch.setattr(entries, "triaged", stub)
    divs = contract.check_stale(
        contract.Verdict(contract.OK, [contract.Divergence(contract.WRONG_MUTATION, 0, "input x0", "x",
                                                           (contract.VALUES,))]),
        contract.Verdict(contract.OK), "config-changed")
    finding = Finding(contract.STALE_CACHE, PAIR_CASE, divs, "cpu", "inductor", variant=_config_variant().to_json())
    config = Config(seed=0, device="cpu", corpus_dir=str(tmp_path), trial="cache-pair")
    found = key_of(stub(entries.found_entry(finding, 0, config), config))
    triaged.clear()
    assert entries.counted_only(finding, 0, config, {}) is None
    assert entries.counted_only(finding, 0, config, {key("stale-cache|other @ cache:x"): 1}) is None
    assert triaged == []                                  # no full bug of its family: no triage
    assert entries.counted_only(finding, 0, config, {found: 5}) is None   # smaller than the examples
    assert entries.counted_only(finding, 0, config, {found: 2}).culprit is not None
    assert len(triaged) == 2
    # a bug that wants examples: a pair is not shrunk a little, so its example is shrunk in full
    assert entries.counted_only(finding, 0, config, {found: 0}) is None and len(triaged) == 2


def test_a_stale_cache_entry_shrunk_again_or_reduced_keeps_its_variant(tmp_path, monkeypatch):
    """The variant is half of a stale-cache entry (its script and its replay run the
    pair): ``dcefuzz shrink`` and a reduced entry carry it over.  The pair and the
    shrink stand in here: each pair costs two processes."""
    import types

    import fuzzer.replay.reshrink as reshrink_mod
    from fuzzer.cache.kind import KIND
    from fuzzer.corpus.entry import Entry, Origin
    from fuzzer.corpus.store import load, save
    from fuzzer.limits import OracleBudget

    v = _donation_variant(DONATED_CASE)
    div = contract.Divergence(contract.STALE_CACHE, 0, "output 0", "values differ",
                              (DONATED_LABEL, "values", "wrong-output"))
    entry = Entry.build(contract.STALE_CACHE, DONATED_CASE, [div],
                        Origin(seed=1, device="cpu", backend="inductor", variant=v.to_json()))
    path, _ = save(entry, tmp_path)
    smaller = case(prog({"x0": ("s0",)}, [("p_sin", ["x0"], "v0", {"site": 0})], outputs=["v0"]),
                   bindings=[{"s0": 8}])
    monkeypatch.setattr(KIND, "oracle", lambda *a, **k: (lambda c: contract.Verdict(contract.OK, [div])))
    monkeypatch.setattr(reshrink_mod, "shrink", lambda *a, **k: types.SimpleNamespace(
        confirmed=True, case=smaller, divergences=[div], record=lambda: {"statements": 1}))
    new_path, before, after = reshrink_mod.reshrink(load(path), path, "cpu", OracleBudget(1, 1.0))
    assert (before, after) == (2, 1)
    assert load(new_path).variant == v.to_json()
    assert "LIBRARY_OLD" in new_path.with_suffix(".py").read_text()  # the pair's script
    assert entry.reduced(smaller, [div], {}).variant == v.to_json()


def test_the_variant_record_names_every_kind_and_field():
    """``VariantRecord`` (an entry's and a finding's variant, as JSON) types what
    ``Variant.to_json`` writes: its kinds are the variants' kinds, its keys their fields."""
    from typing import get_args

    from fuzzer.judge.trial import VariantKind, VariantRecord

    assert get_args(VariantKind) == variants.KINDS
    twice = Variant(variants.CONFIG_CHANGED, "", "donated", config_new={"a.b": False}, twice=True)
    assert set(twice.to_json()) == set(VariantRecord.__annotations__)
    assert set(Variant(variants.EAGER_CHANGED, "p_sin", "body").to_json()) == VariantRecord.__required_keys__
