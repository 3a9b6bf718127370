"""Targets (``fuzzer.judge.targets``): the export target judged by the same contract as
``torch.compile``; what export documents it declines refused on one side and a finding
on the other; a planted export fault caught through it; compile untouched.

The export tests run real ``torch.export.export`` (no Inductor: a fraction of a
second each) on hand-written programs of one or two statements.
"""

import dataclasses
import sys

import pytest
import torch
from helpers import case, prog

from fuzzer import faults
from fuzzer.judge import contract, exporting, observe, targets
from fuzzer.judge.execute import execute
from fuzzer.judge.observe import REFUSED, Coverage, Failure, Gap, Run
from fuzzer.judge.trial import CLEAN, FINDING, UNTESTED, judge_case, run_trial
from fuzzer.program import features
from fuzzer.program.generate import generate
from fuzzer.program.mode import Mode
from fuzzer.reduce.signature import Signature

# a custom op writes a program input and its result is unused; a pure op's result returned
WRITES = case(prog({"x0": ("s0", "s1"), "x1": ("s0", "s1")}, [
    ("m_addto", ["x0", "x1"], None, {"site": 0}),
    ("p_sin", ["x1"], "v0", {"site": 1}),
], outputs=["v0"]), [{"s0": 4, "s1": 6}, {"s0": 5, "s1": 3}])
# an ORDERED effect, then a pure op, through export's effect tokens
EFFECTS = case(prog({"x0": ("s0",)}, [
    ("e_log", ["x0"], None, {"site": 0}), ("p_sin", ["x0"], "v0", {"site": 1}),
], outputs=["v0"]), [{"s0": 4}, {"s0": 7}])
# ``x[: s0 // 2]``: export narrows the exported program to the half's size class of the
# first binding (``s0 // 2 != 1``), so a later binding with ``s0 // 2 == 1`` fails its guard
HALF = case(prog({"x0": ("s0",)}, [("head", ["x0"], "v0", {"dim": 0}), ("p_sin", ["v0"], "v1", {"site": 0})],
                 outputs=["v1"], sym_min={"s0": 2}), [{"s0": 8}, {"s0": 2}])


def _export(c):
    return run_trial(c, "cpu", target=targets.EXPORT)


# ------------------------------------------------------------------ no torch.export

GUARD = Failure("AssertionError", "Guard failed: args_0.size()[0] // 2 != 1", observe.RUNTIME)
# a guard that cannot be evaluated on a size the exported range excludes (s0 = 0 where it is [2, oo))
UNEVALUATED = Failure("OutsideGuards", "ZeroDivisionError: integer division or modulo by zero", observe.RUNTIME)
CONSTRAINT = Failure("UserError", "Constraints violated (s0)!", observe.COMPILE)
EXPORT_ASKS = contract.Asks(declines=exporting.EXPORT_DECLINES)


def _ran(failure):
    return Run(outputs=None, failure=failure, coverage=Coverage())


def test_what_export_declines_is_refused_only_through_export():
    assert contract.refusal(_ran(GUARD), EXPORT_ASKS) == Gap(REFUSED, GUARD.line(), GUARD.type)
    assert contract.refusal(_ran(CONSTRAINT), EXPORT_ASKS) == Gap(REFUSED, CONSTRAINT.line(), CONSTRAINT.type)
    assert contract.refusal(_ran(UNEVALUATED), EXPORT_ASKS) == Gap(REFUSED, UNEVALUATED.line(), UNEVALUATED.type)
    # torch.compile declines none of them without a mark that asks
    for failure in (GUARD, CONSTRAINT, UNEVALUATED):
        assert contract.refusal(_ran(failure)) is None


def test_what_export_does_not_decline_stays_a_failure():
    """Another assertion, a refusal's type raised while running, an error of another
    type: each is export failing on a legal program."""
    for failure in (Failure("AssertionError", "expected a tensor", observe.RUNTIME),
                    Failure("AssertionError", "Guard failed: s0 >= 4", observe.COMPILE),
                    Failure("UserError", "Constraints violated (s0)!", observe.RUNTIME),
                    Failure("RuntimeError", "Guard failed: s0 >= 4", observe.RUNTIME)):
        assert contract.refusal(_ran(failure), EXPORT_ASKS) is None, failure


def test_what_an_aoti_package_declines_is_its_inputs_laid_out_otherwise():
    """A package assumes the sizes and strides it was compiled for; its input check
    (on, under ``AOTI_RUNTIME_CHECK_INPUTS``) raising is refused through aoti alone, and
    another runtime error of the package stays a failure."""
    stride = Failure("RuntimeError", "input_handles[1]: unmatched stride value at 0, expected: 4, but got: 2",
                     observe.RUNTIME)
    aoti = contract.Asks(declines=targets.get(targets.AOTI).declines)
    assert contract.refusal(_ran(stride), aoti) == Gap(REFUSED, stride.line(), stride.type)
    assert contract.refusal(_ran(stride), EXPORT_ASKS) is None
    laid = Failure("RuntimeError", "expected size 2==2, stride 4==2 at dim=0\nError in op: input\nThis error most "
                   "often comes from a incorrect fake (aka meta) kernel for a custom op.", observe.RUNTIME)
    assert contract.refusal(_ran(laid), aoti) == Gap(REFUSED, laid.line(), laid.type)
    # the same assertion of a custom op's result: a result its fake impl did not foretell
    for other in (Failure("RuntimeError", laid.message.replace("op: input", "op: dcefuzz.m_scale"), observe.RUNTIME),
                  Failure("RuntimeError", "Expected !size_bytes_is_heap_allocated_ to be true", observe.RUNTIME)):
        assert contract.refusal(_ran(other), aoti) is None
    assert contract.refusal(_ran(GUARD), aoti) == Gap(REFUSED, GUARD.line(), GUARD.type)  # export's too


def test_a_region_an_aoti_package_cannot_hold_is_refused_through_aoti_alone():
    """AOTInductor's C++ wrapper does not implement ``invoke_subgraph``: a region that
    reaches Inductor is refused through aoti; through compile (its Python wrapper) the
    same error is a finding, and another not-implemented error of the package stays one."""
    region = Failure("InductorError", "NotImplementedError: codegen invoke_subgraph is not implemented for cpp "
                     "wrapper", observe.COMPILE)
    aoti = contract.Asks(declines=targets.get(targets.AOTI).declines)
    assert contract.refusal(_ran(region), aoti) == Gap(REFUSED, region.line(), region.type)
    assert contract.refusal(_ran(region)) is None
    assert contract.refusal(_ran(region), EXPORT_ASKS) is None
    for other in (Failure("InductorError", "NotImplementedError: codegen while_loop is not implemented for cpp "
                          "wrapper", observe.COMPILE),
                  Failure("InductorError", region.message, observe.RUNTIME)):
        assert contract.refusal(_ran(other), aoti) is None, other


def test_an_aoti_package_checks_its_inputs(monkeypatch):
    import os

    import torch

    from fuzzer.judge import exporting

    monkeypatch.delenv(exporting.AOTI_CHECK_INPUTS, raising=False)
    monkeypatch.setattr(torch._inductor, "aoti_compile_and_package", lambda program, package_path: package_path)
    monkeypatch.setattr(torch._inductor, "aoti_load_package", lambda path: path)
    exporting.aoti_package(None)
    assert os.environ[exporting.AOTI_CHECK_INPUTS] == "1"


def _judged_failing(failure, target):
    runs = execute(EFFECTS, "cpu", compiled=lambda x0: (x0.sin(),))
    for br in runs:
        br.compiled = Run(outputs=None, inputs_after=br.eager.inputs_after, failure=failure, coverage=Coverage())
    return judge_case(EFFECTS, runs, "cpu", target)


def test_a_declined_binding_is_untested_through_export_and_a_finding_through_compile():
    v = _judged_failing(GUARD, targets.EXPORT)
    assert v.kinds() == [] and {u.reason for u in v.untested} == {observe.REFUSED}
    assert _judged_failing(GUARD, targets.COMPILE).kinds() == [contract.RUNTIME_ERROR]


def test_export_is_not_drawn_what_it_cannot_run():
    table = targets.drawn_for(targets.EXPORT, features.ALL)
    assert not {features.GRAPH_BREAK, features.MODULE_STATE, features.AUTOGRAD, features.AUTOGRAD_FUNCTION,
                features.FUNCTION_SHAPES} & set(table)
    assert targets.drawn_for(targets.COMPILE, features.ALL) == features.ALL


def test_no_program_drawn_for_export_or_aoti_has_what_they_cannot_run():
    """``func-grad`` implies ``autograd``: kept in export's table, it drew ``autograd``
    back (about one program in seven took gradients).  Over the same seeds ``compile``
    draws both, so the seeds do reach them."""
    seeds = range(300)
    for name in (targets.EXPORT, targets.AOTI):
        table, excluded = targets.drawn_for(name, features.ALL), set(targets.get(name).unsupported)
        assert not any(excluded & features.draw(seed, table) for seed in seeds), name
        assert not any(excluded & set(features.used_by(generate(seed, features=table).program)) for seed in seeds)
    compiled = [features.draw(seed, targets.drawn_for(targets.COMPILE, features.ALL)) for seed in seeds]
    assert sum(features.FUNC_GRAD in on for on in compiled) > 10
    assert sum(features.AUTOGRAD in on for on in compiled) > 50


def test_a_feature_is_dropped_with_what_it_implies():
    assert features.without({features.FUNC_GRAD: 1.0, features.DTYPES: 0.2}, [features.AUTOGRAD]) == {
        features.DTYPES: 0.2}
    assert features.without({features.FUNC_GRAD: 1.0}, [features.DTYPES]) == {features.FUNC_GRAD: 1.0}
    assert features.draw(0, {features.FUNC_GRAD: 1.0}) >= {features.FUNC_GRAD, features.AUTOGRAD}


# ``torch.func.grad`` inside an exported program (never drawn for export: it implies
# ``autograd``): non-strict export lifts the transform's wrapper of the input as a
# constant, so ``.module()`` returns FakeTensors (2.13.0, aten alone)
EXPORTED_GRAD = case(dataclasses.replace(prog({"x0": ("s0", "s1")}, [("transpose", ["x0"], "v0", {})],
                                              outputs=["v0"]), mode=Mode(grad=True, func_grad=True)),
                     [{"s0": 4, "s1": 3}, {"s0": 5, "s1": 2}])


def test_an_exported_program_that_returns_fake_tensors_is_a_finding_not_our_crash():
    result = _export(EXPORTED_GRAD)
    assert result.status == FINDING and [f.kind for f in result.findings] == [contract.WRONG_OUTPUT]
    assert {d.symptoms for d in result.findings[0].divergences} == {(contract.NOT_REAL,)}


def test_an_unknown_target_names_the_known_ones():
    with pytest.raises(targets.UnknownTarget, match="compile, compiled-autograd, export"):
        targets.get("nope")


# ------------------------------------------------------------------ torch.export

def test_export_honest_is_clean_and_judges_writes_and_effects():
    for c in (WRITES, EFFECTS):
        result = _export(c)
        assert result.status == CLEAN, [d.line() for d in result.verdict.divergences]


def _exports(c) -> list[int]:
    """How many programs each binding's run of ``c`` exported."""
    runs = execute(c, "cpu", target=targets.EXPORT)
    return [br.compiled.coverage.graphs for br in runs]


def test_a_binding_outside_the_exported_guards_is_exported_anew_and_judged():
    """Export narrowed the first export to ``s0 // 2 != 1``: the second binding fails its
    guard, so it is exported on its own inputs, as a user exports for each shape
    outside the guards, and judged: no longer refused."""
    assert _exports(HALF) == [1, 1]
    result = _export(HALF)
    assert result.status == CLEAN, result.verdict.untested
    # a binding inside the first export's guards runs it, exporting nothing
    assert _exports(dataclasses.replace(HALF, bindings=({"s0": 8}, {"s0": 12}))) == [1, 0]


def test_past_the_exports_a_target_allows_a_binding_outside_the_guards_stays_refused(monkeypatch):
    """``aoti`` packages once (an Inductor compile each): where no more exports are
    allowed, a binding outside the guards is refused, its cause the guard check's."""
    monkeypatch.setattr(targets.get(targets.EXPORT), "lowering", dataclasses.replace(exporting.MODULE, exports=1))
    result = _export(HALF)
    assert result.status == UNTESTED and result.untested == Gap(REFUSED, result.untested.message, "OutsideGuards")
    assert "Guard failed" in result.untested.message
    # the first binding, inside them, was judged: cut to it, the case is clean
    assert _export(dataclasses.replace(HALF, bindings=HALF.bindings[:1])).status == CLEAN


def _packaged(monkeypatch, c, limit=None):
    """``c`` through ``aoti``, each package the exported module itself (no C++ compile)
    checking its first input's sizes as a package does (``AOTI_RUNTIME_CHECK_INPUTS``):
    a size of 0 or 1 only where its example had that size, and no such size where it
    had none; the trial, and the sizes of the example each package was made on."""
    examples = []

    def package(program, module):
        made_for = tuple(int(d) for d in program.example_inputs[0][0].shape)
        examples.append(made_for)

        def run(x0, *rest):
            if any(min(size, 2) != min(example, 2) for size, example in zip(x0.shape, made_for)):
                raise RuntimeError(f"input_handles[0]: dim value is too small, compiled for {made_for}")
            return module(x0, *rest)
        return run
    lowering = dataclasses.replace(exporting.PACKAGE, lower=package)
    monkeypatch.setattr(targets.get(targets.AOTI), "lowering",
                        lowering if limit is None else dataclasses.replace(lowering, exports=limit))
    return run_trial(c, "cpu", target=targets.AOTI), examples


def test_aoti_makes_a_package_for_each_specialisation_a_call_needs(monkeypatch):
    """A package is compiled for the sizes its example had: a dynamic dim of 0 or 1
    specialised, every other over the range above 1.  A binding whose dims of 0 or 1 no
    package was made for gets one of its own, exported on its inputs, and is judged; a
    binding of a specialisation made already runs that package."""
    assert exporting.specialisation((torch.ones(4, 1), torch.ones(0), torch.ones(3)),
                                    ({0: "auto", 1: "auto"}, {0: "auto"}, None)) == ((None, 1), (0,), ())
    c = dataclasses.replace(EFFECTS, bindings=({"s0": 4}, {"s0": 1}, {"s0": 7}, {"s0": 0}, {"s0": 1}))
    result, examples = _packaged(monkeypatch, c)
    assert result.status == CLEAN, result.verdict.untested
    assert examples == [(4,), (1,), (0,)]


def test_aoti_refuses_a_binding_of_a_specialisation_packaged_already_outside_its_guards(monkeypatch):
    """``x[: s0 // 2]`` guards the first package to ``s0 // 2 != 1``: a binding of 2 (no
    dim of 0 or 1) is of the package's specialisation and outside its guards, so it is
    refused, never packaged again; past the packages allowed a new specialisation is
    refused too."""
    result, examples = _packaged(monkeypatch, HALF)
    assert result.status == UNTESTED and result.untested.cause == "OutsideGuards" and examples == [(8,)]
    c = dataclasses.replace(EFFECTS, bindings=({"s0": 4}, {"s0": 1}, {"s0": 0}))
    result, examples = _packaged(monkeypatch, c, limit=2)
    assert result.status == UNTESTED and "SpecialisedOtherwise" in result.untested.message
    assert examples == [(4,), (1,)]


# an input of a derived dim (``s0 // 2``): export was given no hint for it and kept it
# static, so every binding of another ``s0 // 2`` failed the guard ``== 3``
DERIVED = case(dataclasses.replace(prog({"x0": ("s0",), "x1": ("s0 // 2",), "x2": ("s0 // 2",)}, [
    ("m_addto", ["x1", "x2"], None, {"site": 0}), ("p_sin", ["x0"], "v0", {"site": 1}),
], outputs=["v0"]), symbols=("s0",), sym_min={"s0": 2}), [{"s0": 6}, {"s0": 13}, {"s0": 9}])
# a first binding of size 1: export 0/1-specialises it, which ``Dim.DYNAMIC`` turns into
# an error (a ValueError no decline names: a compile-error finding of nothing)
ONE_FIRST = dataclasses.replace(EFFECTS, bindings=({"s0": 1}, {"s0": 5}, {"s0": 7}))


def test_a_derived_dim_is_dynamic_in_the_export_and_one_export_serves_every_binding():
    assert exporting.export_dynamic_shapes([("s0",), ("s0 // 2", 3), (4,)]) == (
        {0: torch.export.Dim.AUTO}, {0: torch.export.Dim.AUTO}, None)
    assert _exports(DERIVED) == [1, 0, 0]
    assert _export(DERIVED).status == CLEAN


def test_a_first_binding_export_specialises_is_judged_not_a_failure_of_export():
    result = _export(ONE_FIRST)
    assert result.status == CLEAN, [d.line() for d in result.verdict.divergences]
    assert _exports(ONE_FIRST) == [1, 1, 0]  # size 1 pinned; the next size exported once for both


# a size only the data knows, halved: export cannot guard on it (a branch on data),
# which it documents (``GuardOnDataDependentSymNode``: torch._check it or not export)
DATA_GUARD = case(prog({"x0": ("s0",)}, [
    ("head_pos", ["x0"], "v0", {"size": "u0"}), ("chunk", ["v0"], "v1", {"dim": 0}),
    ("p_sin", ["v1"], "v2", {"site": 0}),
], outputs=["v2"]), [{"s0": 6}, {"s0": 9}])


# a function whose frame is torch's by its module's name (``raised`` reads ``__name__``):
# an error export meets raised by torch's own Python code
_TORCH_FRAME: dict = {"__name__": "torch._export.checks"}
exec("def ensure_traceable(t):\n    raise RuntimeError(f'cannot trace a tensor of {t.shape[0]} rows')", _TORCH_FRAME)


def test_an_error_export_raises_is_placed_where_torch_raised_it_not_where_we_carried_it():
    """What export raised is carried out of the run as an ``ExportFailed``, which our
    code raises: its bug class names the frame of torch that raised the error (as
    ``torch.compile``'s does, so triage can find it there), never our carrier's place,
    nor the message (sizes in it would split one bug into many)."""
    def program(x):
        return _TORCH_FRAME["ensure_traceable"](x)

    exported = exporting.Exported(program, exporting.export_dynamic_shapes([("s0",)]))
    run = exporting.run_exported(exported, exported, [torch.ones(5)], {"calls": [], "effects": []})
    failure = run.failure
    assert (failure.type, failure.stage) == ("RuntimeError", observe.COMPILE)
    assert failure.site == "raised RuntimeError in torch._export:ensure_traceable"
    assert failure.site_message == ""  # raised in Python: the place alone, no sizes
    assert "ExportFailed" not in failure.traceback and "ensure_traceable" in failure.traceback


def test_what_export_cannot_trace_on_any_binding_stays_refused():
    result = _export(DATA_GUARD)
    assert result.status == UNTESTED, [d.line() for d in result.verdict.divergences]
    assert (result.untested.reason, result.untested.cause) == (REFUSED, "GuardOnDataDependentSymNode")
    # tried once: a later binding needs no export of its own to be refused again
    assert _exports(DATA_GUARD) == [0, 0]


def test_a_planted_export_fault_is_caught_through_export_only():
    undo = faults.get("mutation-lost-export").install()
    try:
        result = _export(WRITES)
    finally:
        undo()
    assert result.status == FINDING and [f.kind for f in result.findings] == [contract.WRONG_MUTATION]
    assert result.findings[0].target == targets.EXPORT
    assert _export(WRITES).status == CLEAN  # lifted: gone


PLANTED_THEN_RUN = ("import runpy, sys; from fuzzer import faults; faults.get('mutation-lost-export').install(); "
                    "sys.argv = sys.argv[1:]; runpy.run_path(sys.argv[0], run_name='__main__')")


def test_an_export_entrys_script_exports_and_judges_as_the_package(tmp_path):
    """The script of an entry found through export exports too: it shows the planted
    export fault's bug (exit 1) and, without it, does not (exit 0); through
    ``torch.compile`` it could show neither."""
    import os
    import subprocess
    import sys

    import torch

    from fuzzer.corpus.entry import Entry
    from fuzzer.corpus.store import save

    undo = faults.get("mutation-lost-export").install()
    try:
        finding = _export(WRITES).findings[0]
    finally:
        undo()
    entry = Entry(id="export-writes", kind=finding.kind, signature=Signature.parse("wrong-mutation|values :: export"),
                  seed=None, device="cpu", backend="inductor", torch_version=torch.__version__, case=WRITES,
                  detail=[d.line() for d in finding.divergences], target=targets.EXPORT)
    entry.signature = Signature(contract.bug_class(finding.kind, finding.divergences), "export")
    path, _ = save(entry, tmp_path)
    script = path.with_suffix(".py")
    assert "torch.export.export(" in script.read_text()
    env = {**os.environ, "PYTHONPATH": str(os.getcwd())}
    planted = subprocess.run([sys.executable, "-c", PLANTED_THEN_RUN, str(script)], capture_output=True,
                             text=True, timeout=300, env=env)
    assert planted.returncode == 1, planted.stdout + planted.stderr
    honest = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert honest.returncode == 0, honest.stdout + honest.stderr


def test_a_script_refuses_what_its_target_declines(monkeypatch):
    """An ``aoti`` entry's script judged with export's declines made the package's input
    check a ``runtime-error``: a script reads its target's declines from its spec, every
    target's, and refuses what the trial refused."""
    from fuzzer.corpus.entry import Entry
    from fuzzer.program import codegen, custom_ops
    from fuzzer.render import driver, repro

    def entry(target):
        return Entry(id="e", kind=contract.RUNTIME_ERROR, signature=Signature.parse("runtime-error|x :: t"),
                     seed=None, device="cpu", backend="inductor", torch_version=torch.__version__, case=EFFECTS,
                     detail=[], target=target)
    for name in targets.names():
        assert frozenset(map(tuple, repro.spec(entry(name)).get("declines", ()))) == targets.get(name).declines, name

    def package(program, module):
        def run(*inputs):
            raise RuntimeError("input_handles[0]: dim value is too small at 1, expected it to be >= 2, but got: 1")
        return run
    monkeypatch.setitem(exporting.LOWERINGS, exporting.PACKAGE.name,
                        dataclasses.replace(exporting.PACKAGE, lower=package))
    spec = repro.spec(entry(targets.AOTI))
    verdict = driver.judge(spec, codegen.build(EFFECTS.program), custom_ops.install().TRACE, "cpu")
    assert verdict.kinds() == [] and {u.reason for u in verdict.untested} == {REFUSED}
    without = driver.judge({**spec, "declines": []}, codegen.build(EFFECTS.program), custom_ops.install().TRACE, "cpu")
    assert without.kinds() == [contract.RUNTIME_ERROR]


def test_an_entry_records_its_target_and_reads_back_without_one():
    from fuzzer.corpus.entry import Entry, Origin

    divs = [contract.Divergence(contract.WRONG_MUTATION, 0, "input x0", "values differ", ("values",))]
    compiled = Entry.build(contract.WRONG_MUTATION, WRITES, divs, Origin(seed=None, device="cpu", backend="inductor"))
    exported = Entry.build(contract.WRONG_MUTATION, WRITES, divs,
                           Origin(seed=None, device="cpu", backend="inductor", target=targets.EXPORT))
    assert exported.id != compiled.id and exported.bug_class == compiled.bug_class
    assert compiled.bug_class.text == "wrong-mutation|values"
    assert "target" not in compiled.to_json() and exported.to_json()["target"] == targets.EXPORT
    assert Entry.from_json(exported.to_json()).target == targets.EXPORT
    assert Entry.from_json(compiled.to_json()).target == targets.COMPILE


def test_a_campaign_state_records_its_target_and_reads_back_without_one():
    from fuzzer.campaign.state import CampaignState, Shard

    state = CampaignState(seed=1, shard=Shard.parse("1/1"), targets=(targets.EXPORT,))
    assert CampaignState.from_json(state.to_json()).targets == (targets.EXPORT,)
    plain = CampaignState(seed=1, shard=Shard.parse("1/1"))
    assert "target" not in plain.to_json() and CampaignState.from_json(plain.to_json()).targets == (targets.COMPILE,)


def test_a_campaign_state_of_two_targets_reads_and_writes_them_as_state_json_always_has():
    """``state.json`` keeps several targets as one text, their names joined by commas: a
    state saved so reads back as the tuple, and is written again the same."""
    from fuzzer.campaign.state import CampaignState, Shard

    saved = {**CampaignState(seed=1, shard=Shard.parse("1/1")).to_json(), "target": "compile,export"}
    state = CampaignState.from_json(saved)
    assert state.targets == (targets.COMPILE, targets.EXPORT)
    assert state.to_json() == saved


# ------------------------------------------------------------------ AOTInductor (compiles C++)

@pytest.mark.compile
def test_aoti_honest_is_clean_and_catches_inductors_planted_mutation_lost():
    """The package is compiled once per program by Inductor's C++ toolchain: the catalogue's
    ``mutation-lost`` (in Inductor's post-grad decomposition) is met through it; through
    export alone it is not."""
    honest = run_trial(WRITES, "cpu", target=targets.AOTI)
    assert honest.status == CLEAN, [d.line() for d in honest.verdict.divergences]
    undo = faults.get("mutation-lost").install()
    try:
        planted = run_trial(WRITES, "cpu", target=targets.AOTI)
        exported = _export(WRITES)
    finally:
        undo()
    assert planted.status == FINDING and contract.WRONG_MUTATION in [f.kind for f in planted.findings]
    assert exported.status == CLEAN


@pytest.mark.compile
def test_an_aoti_script_packages_a_binding_of_size_one_and_judges_it(tmp_path):
    """A package compiled for sizes from 2 up rejects a size of 1 (its input check): the
    script of an ``aoti`` entry makes a package for that binding too, as the trial does,
    so an honest run is judged whole and says fixed (0), not "cannot judge" (125)."""
    import subprocess

    from fuzzer.corpus.entry import Entry
    from fuzzer.corpus.store import save

    c = dataclasses.replace(EFFECTS, bindings=({"s0": 4}, {"s0": 1}))
    entry = Entry(id="aoti-one", kind=contract.EFFECT_LOG, signature=Signature.parse("effect-log|missing :: aoti"),
                  seed=None, device="cpu", backend="inductor", torch_version=torch.__version__, case=c,
                  detail=["[effect-log] binding 1, sequence: missing"], target=targets.AOTI)
    path, _ = save(entry, tmp_path)
    honest = subprocess.run([sys.executable, str(path.with_suffix(".py"))], capture_output=True, text=True,
                            timeout=600)
    assert honest.returncode == 0, honest.stdout[-3000:] + honest.stderr[-3000:]


# ------------------------------------------------------------------ several targets, the command line

def test_targets_spread_over_programs_by_seed_and_name_the_unknown():
    assert targets.spread(["export", "compile", "export", ""]) == "export,compile"
    assert targets.spread([]) == targets.DEFAULT
    picked = [targets.of_program("compile,export", seed) for seed in range(40)]
    assert set(picked) == {"compile", "export"}
    assert picked == [targets.of_program("compile,export", seed) for seed in range(40)]  # the same seed, the same
    assert {targets.of_program("export", seed) for seed in range(10)} == {"export"}
    with pytest.raises(targets.UnknownTarget, match="no target 'nope'"):
        targets.spread(["compile", "nope"])


def test_a_campaign_of_two_targets_draws_each_program_for_its_own():
    from fuzzer.campaign.config import Config
    from fuzzer.trials.program import KIND

    config = Config(seed=0, device="cpu", corpus_dir="unused", targets=("compile", "compiled-autograd"),
                    features=tuple(features.ALL.items()))
    drawn = {seed: KIND.case(seed, config) for seed in range(12)}
    through = {seed: config.target_of(seed) for seed in drawn}
    assert through == {seed: targets.of_program("compile,compiled-autograd", seed) for seed in drawn}
    assert set(through.values()) == {"compile", "compiled-autograd"}
    assert all(c.program.mode.grad for s, c in drawn.items() if through[s] == targets.COMPILED_AUTOGRAD)


def _cli(*args):
    from click.testing import CliRunner

    from fuzzer.cli import main

    return CliRunner().invoke(main, list(args))


def test_the_command_line_refuses_an_unknown_target_and_a_target_this_machine_lacks(tmp_path):
    for args in (["run", "--target", "nope"], ["replay", "--target", "nope", str(tmp_path)],
                 ["shrink", "--target", "nope", str(tmp_path / "x.json")], ["repro", "--target", "nope", "x"]):
        result = _cli(*args)
        assert result.exit_code == 2 and "'nope' is not one of" in result.output, (args, result.output)
    result = _cli("run", "--targets", "compile,nope", "--programs", "1")
    assert result.exit_code == 2 and "no target 'nope'" in result.output
    result = _cli("run", "--target", "reduce-overhead", "--device", "cpu", "--programs", "1",
                  "--state", str(tmp_path / "run"))
    assert result.exit_code == 2 and "reduce-overhead cannot run here" in result.output
    assert "not CUDA" in result.output and not (tmp_path / "run").exists()
    result = _cli("replay", "--target", "export", "--python", sys.executable, str(tmp_path))
    assert result.exit_code == 2 and "does not combine with --python" in result.output


def test_reduce_overhead_runs_on_cuda_only():
    ro = targets.get(targets.REDUCE_OVERHEAD)
    assert "not CUDA" in ro.unavailable("cpu")
    assert ro.unavailable("cuda") is None and ro.unavailable("cuda:1") is None
    assert targets.get(targets.COMPILE).unavailable("cpu") is None


# ------------------------------------------------------------------ compiled autograd

def _grad_case(body, outputs):
    program = dataclasses.replace(prog({"x0": ("s0",)}, body, outputs=outputs), mode=Mode(grad=True))
    return case(program, [{"s0": 3}, {"s0": 5}])


# an autograd.Function whose forward and backward call custom ops: p_sin of the gradient runs in the backward
# (fn_pure's backward, p_mix of the saved input alone since its backward is linear in the gradient, never
# reached FallbackKernel.create in the compiled autograd graph, so the planted fault missed it)
FUNCTION = _grad_case([("fn_scale", ["x0"], "v0", {"site": 0, "site2": 1})], ["v0"])
CA_ASKS = contract.Asks(declines=targets.get(targets.COMPILED_AUTOGRAD).declines)
NYI = Failure("NotImplementedError", "compiled_args nyi, see [Note: Compiled Autograd] SomeBackward0",
              observe.RUNTIME)
HIGHER = Failure("RuntimeError", "torch.compile does not currently support higher order gradients.",
                 observe.COMPILE)


def test_what_compiled_autograd_declines_is_refused_only_through_it():
    for failure in (NYI, HIGHER):
        assert contract.refusal(_ran(failure), CA_ASKS) == Gap(REFUSED, failure.line(), failure.type)
        assert contract.refusal(_ran(failure)) is None  # through compile: a finding
    # another failure of the same types is not declined
    for failure in (Failure("NotImplementedError", "no kernel for dcefuzz::p_mix", observe.RUNTIME),
                    Failure("RuntimeError", "Compiled Autograd returned NaN gradients for parameters",
                            observe.RUNTIME),
                    Failure("AttributeError", "'NoneType' object has no attribute 'get_size'", observe.COMPILE)):
        assert contract.refusal(_ran(failure), CA_ASKS) is None, failure


def test_compiled_autograd_draws_only_programs_that_take_gradients():
    for table in (features.ALL, features.NONE, {features.AUTOGRAD: 0.1}):
        drawn = targets.drawn_for(targets.COMPILED_AUTOGRAD, table)
        assert drawn[features.AUTOGRAD] == 1.0
        assert all(generate(seed, features=drawn).program.mode.grad for seed in range(6))
    assert targets.drawn_for(targets.COMPILE, features.NONE) == {}


def test_compiled_autograd_is_detected_by_its_entry_point_not_a_version(monkeypatch):
    from torch._dynamo import compiled_autograd as ca_module

    from fuzzer.judge import compiled_autograd

    assert compiled_autograd.unavailable() is None
    for name in ("_enable", "enable"):
        monkeypatch.delattr(ca_module, name, raising=False)
    assert "no torch._dynamo.compiled_autograd" in compiled_autograd.unavailable()


@pytest.mark.compile
def test_compiled_autograd_honest_is_clean_and_catches_its_planted_fault_that_compile_never_meets():
    """The backward runs under compiled autograd (one capture a binding); the planted
    lowering bug of its graph is caught through it, and through ``compile`` (whose
    backward is AOTAutograd's own) it never fires."""
    from torch._dynamo.utils import counters

    counters.clear()
    honest = run_trial(FUNCTION, "cpu", target=targets.COMPILED_AUTOGRAD)
    assert honest.status == CLEAN, [d.line() for d in honest.verdict.divergences]
    assert counters["compiled_autograd"]["captures"] >= 1
    with faults.planted("compile-error-compiled-autograd"):
        planted = run_trial(FUNCTION, "cpu", target=targets.COMPILED_AUTOGRAD)
        through_compile = run_trial(FUNCTION, "cpu")
    assert planted.status == FINDING and [f.kind for f in planted.findings] == [contract.COMPILE_ERROR]
    assert "compiled autograd graph" in planted.findings[0].divergences[0].detail
    assert planted.findings[0].target == targets.COMPILED_AUTOGRAD
    assert through_compile.status == CLEAN


def test_a_reshrink_keeps_the_entrys_target_and_another_targets_shrink_is_saved_beside(tmp_path, monkeypatch):
    """No compile: the oracle and the shrinker are stand-ins that see which target
    judges."""
    import types

    from fuzzer.corpus.entry import Entry, Origin
    from fuzzer.corpus.store import load, save
    from fuzzer.limits import OracleBudget
    from fuzzer.replay import reshrink as reshrink_mod
    from fuzzer.trials.program import KIND

    div = contract.Divergence(contract.WRONG_MUTATION, 0, "input x0", "values differ", ("values",))
    judged = []

    def oracle(found, *args, **kwargs):
        judged.append(found.target)
        return lambda c: contract.Verdict(contract.OK, [div])

    smaller = dataclasses.replace(WRITES, program=dataclasses.replace(WRITES.program, body=WRITES.program.body[:1],
                                                                      outputs=()))
    monkeypatch.setattr(KIND, "oracle", oracle)
    monkeypatch.setattr(reshrink_mod, "shrink", lambda *a, **k: types.SimpleNamespace(
        confirmed=True, case=smaller, divergences=[div], record=lambda: {"statements": 1}))
    entry = Entry.build(contract.WRONG_MUTATION, WRITES, [div],
                        Origin(seed=1, device="cpu", backend="inductor", target=targets.EXPORT))
    path, _ = save(entry, tmp_path)
    new_path, _, _ = reshrink_mod.reshrink(load(path), path, "cpu", OracleBudget(1, 1.0))
    assert judged == [targets.EXPORT] and load(new_path).target == targets.EXPORT
    assert not path.exists()  # its own target's smaller entry replaces it
    other, _, _ = reshrink_mod.reshrink(load(new_path), new_path, "cpu", OracleBudget(1, 1.0),
                                        target=targets.COMPILE)
    assert judged[-1] == targets.COMPILE and load(other).target == targets.COMPILE
    assert new_path.exists() and other != new_path  # another target's entry, beside


def test_a_replay_through_a_target_this_machine_lacks_is_an_error_that_says_so(tmp_path):
    """No compile: the refusal comes before anything runs."""
    from fuzzer.corpus.entry import Entry, Origin
    from fuzzer.corpus.store import save
    from fuzzer.replay.rerun import ERROR, replay_entry

    divs = [contract.Divergence(contract.WRONG_MUTATION, 0, "input x0", "values differ", ("values",))]
    path, _ = save(Entry.build(contract.WRONG_MUTATION, WRITES, divs,
                               Origin(seed=None, device="cpu", backend="inductor")),
                   tmp_path)
    result = replay_entry(path, "cpu", targets.REDUCE_OVERHEAD)
    assert result.outcome == ERROR and not result.judged and "not CUDA" in result.detail


class _Shows:
    """A probe that answers one outcome for every compile, counting them."""

    answer = None
    asked: list = []

    def __init__(self, case, kind, bug_class, device, budget, spots=None):
        pass

    def outcome(self, backend, config=None, dynamic=True, within=None):
        _Shows.asked.append(backend)
        if isinstance(_Shows.answer, Exception):
            raise _Shows.answer
        return _Shows.answer


def test_a_finding_of_another_target_that_compile_shows_is_compiles_bug_with_its_targets_listed(monkeypatch):
    """torch's debugging backends and switches are torch.compile's: an export finding whose
    program shows the same bug through compile is localised there and keyed as that bug,
    one bug listing both targets; one that compile does not show is its target's own."""
    from pathlib import Path

    from fuzzer.campaign import entries
    from fuzzer.corpus import bugs
    from fuzzer.corpus.store import load
    from fuzzer.judge import kinds
    from fuzzer.limits import TRIAGE
    from fuzzer.triage import within
    from fuzzer.triage.culprit import Culprit
    from fuzzer.triage.probe import OutdatedClass, Outcome

    compiled = load(Path(__file__).parent.parent / "corpus" / "wrong-mutation-3e93a770411a.json")
    exported = dataclasses.replace(compiled, id="wrong-mutation-exported", target=targets.EXPORT, culprit=None)
    monkeypatch.setattr(entries, "Probe", _Shows)
    monkeypatch.setattr(kinds.of(compiled.kind), "culprit", lambda entry, *a, **k: compiled.culprit)
    _Shows.answer, _Shows.asked = Outcome.STAYS, []
    exported.culprit = entries.culprit_of(exported, "cpu", TRIAGE.budget)
    assert exported.culprit.via == targets.COMPILE and _Shows.asked == [exported.backend]
    assert bugs.key_of(exported) == bugs.key_of(compiled)
    [bug] = bugs.group([compiled, exported])
    assert bug.targets == (targets.COMPILE, targets.EXPORT)
    assert entries.culprit_of(compiled, "cpu", TRIAGE.budget).via == ""  # compile's own: no probe
    assert _Shows.asked == [exported.backend]
    _Shows.answer = Outcome.GONE
    monkeypatch.setattr(within, "localise", lambda entry, device, budget: Culprit("export-trace", kind=entry.kind))
    exported.culprit = entries.culprit_of(exported, "cpu", TRIAGE.budget)
    assert exported.culprit.blame == "export-trace" and len(bugs.group([compiled, exported])) == 2
    # compiled autograd's own finding is walked within its pipeline too; a target with no
    # pieces to walk (func-grad's is compile's, with the transform): nothing localises it
    assert entries.culprit_of(dataclasses.replace(exported, target=targets.COMPILED_AUTOGRAD), "cpu",
                              TRIAGE.budget).blame == "export-trace"
    assert entries.culprit_of(dataclasses.replace(exported, target=targets.FUNC_GRAD), "cpu", TRIAGE.budget) is None
    # compile raises an error its class names otherwise (an aoti package's error, classed
    # by its message): compile does not show this class, and nothing is dcefuzz's error
    _Shows.answer = OutdatedClass(contract.BugClass.parse("compile-error|InductorError: AssertionError: x"),
                                  contract.BugClass.parse("compile-error|raised x"))
    assert entries.culprit_of(exported, "cpu", TRIAGE.budget).via == ""  # its target's own
