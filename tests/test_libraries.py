"""A library the user does not own (``tests/standin``): its real argument types, hints
from a file outside it, and no honest op blamed for what dcefuzz cannot give it."""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from fuzzer.cli import main
from fuzzer.user import declared, hints, library
from fuzzer.reduce.signature import Signature

STANDIN = Path(__file__).resolve().parent / "standin"
MODULE, HINTS = str(STANDIN / "standin.py"), str(STANDIN / "standin.toml")


def _table(*specs) -> tuple[int, dict[str, dict]]:
    result = CliRunner().invoke(main, ["check-ops", *specs, "--json"])
    rows = json.loads(result.output)["table"]
    return result.exit_code, {r["op"]: r for r in rows}


def test_no_honest_op_of_a_library_not_owned_is_a_declaration_finding():
    """The module alone, as found: a dtype argument at its default, an op with a CUDA
    kernel only, one that refuses same-shape inputs and one whose List[int] has no
    values are used or skipped with a reason, and none is a finding."""
    code, table = _table(MODULE)
    assert code == 0
    assert {op: r["status"] for op, r in table.items()} == {
        "standin::scale_to": "used", "standin::exclude_me": "used", "standin::cuda_only": "skipped",
        "standin::rowdot": "skipped", "standin::blocksum": "skipped", "standin::quant8": "used",
        "standin::dequant8": "skipped", "standin::f32_only": "skipped", "standin::rowmax": "used"}
    assert "no kernel for cpu" in table["standin::cuda_only"]["why"]
    assert "codes must be int8" in table["standin::dequant8"]["why"]  # no hint says so: no lie
    assert "no float64 reference" in table["standin::f32_only"]["why"]
    assert "give its signature" in table["standin::rowdot"]["why"]
    assert "List[int] needs values" in table["standin::blocksum"]["why"]


def test_hints_from_outside_give_signatures_block_sizes_and_which_ops():
    code, table = _table(HINTS)
    assert code == 0
    assert "standin::exclude_me" not in table
    assert {op: r["status"] for op, r in table.items()} == {
        "standin::scale_to": "used", "standin::cuda_only": "skipped", "standin::rowdot": "used",
        "standin::blocksum": "used", "standin::quant8": "used", "standin::dequant8": "used",
        "standin::f32_only": "skipped", "standin::rowmax": "used"}
    assert table["standin::rowdot"]["signature"] == "(n,k),(k)->(n)"


def test_a_dtype_argument_is_read_as_a_dtype_and_left_at_its_default():
    library.load(MODULE)
    (dtype,) = [a for a in declared.read("standin::scale_to").arguments if not a.is_tensor]
    assert dtype.type == "ScalarType" and dtype.values == ()  # the JIT's int is not what it means


def test_a_block_size_in_the_signatures_letters_follows_each_calls_shape():
    """Programs pass ``[1, <the size m binds>]``; the program, its JSON and its repro
    script carry the hints file, so every process reads the op the same way."""
    from fuzzer.program import codegen
    from fuzzer.program.generate import OpSet, generate
    from fuzzer.program.ir import Program
    from fuzzer.user import tracing

    ref = library.ModuleRef.of(HINTS)
    library.load(ref)
    ops = OpSet(builtin=False, user=("standin::blocksum", "standin::rowdot", "standin::scale_to"),
                imports=(ref.imported,))
    found = None
    for seed in range(40):
        case = generate(seed, ops=ops)
        text = codegen.source(case.program)
        if "standin.blocksum(" in text:
            found = case, text
            break
    assert found, "no program called blocksum"
    case, text = found
    call = next(line for line in text.splitlines() if "standin.blocksum(" in line)
    assert ", [1, s" in call  # the letter rendered as the program's size
    back = Program.from_json(json.loads(json.dumps(case.program.to_json())))
    assert back == case.program and back.imports[0][2] == ref.hints
    assert "importlib.import_module('standin')" in tracing.script_source(case.program)
    # the program runs eagerly: the block tiles the input it is given
    namespace: dict = {}
    exec(compile(text, "<program>", "exec"), {"torch": __import__("torch")}, namespace)  # noqa: S102 - our program
    import torch
    shapes = [tuple(__import__("fuzzer.program.sizes", fromlist=["x"]).concrete(i.dims, case.bindings[0]))
              for i in case.program.inputs]
    namespace["program"](*[torch.randn(s) for s in shapes])


def test_a_bad_hints_file_says_what_is_wrong(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('library = "standin"\n[ops.blocksum]\nsignature = "(n)->(n)"\n')
    result = CliRunner().invoke(main, ["check-ops", str(bad)])
    assert result.exit_code == 2 and "qualified name" in result.output
    assert hints.load(HINTS).wants("standin::rowdot") and not hints.load(HINTS).wants("standin::exclude_me")


def _quant_program(body, dtypes=None, grad=False, outputs=()):
    """A hand-written program over the stand-in's quantiser: x0 (s0, s1) floats, x1 the
    same shape (int8 where ``dtypes`` says), x2 (s0, 1)."""
    import dataclasses

    from fuzzer.program.ir import Mode
    from fuzzer.user import selection
    from tests.helpers import prog

    selection.select([library.ModuleRef.of(HINTS)], only=True)  # audited: its results' dtypes known
    p = prog({"x0": ("s0", "s1"), "x1": ("s0", "s1"), "x2": ("s0", "1")}, body, outputs)
    inputs = tuple(dataclasses.replace(i, dtype=(dtypes or {}).get(i.name)) for i in p.inputs)
    return dataclasses.replace(p, inputs=inputs, mode=Mode(grad=grad), imports=(library.ModuleRef.of(HINTS).imported,))


def test_a_fixed_dtype_flows_only_where_an_op_takes_it():
    """int8 codes go from the quantiser to the dequantiser, and from an int8 input; a
    float where the op takes int8, or int8 where an aten form takes floats, is illegal;
    the dtype is typed, and an input's dtype round-trips through JSON."""
    import pytest

    from fuzzer.program.ir import InvalidProgram, Program, check

    q = ("standin::quant8", ["x0"], "v0", {"site": 0, "take": 0})
    scale = ("standin::quant8", ["x0"], "v1", {"site": 1, "take": 1})
    ok = _quant_program([q, scale, ("standin::dequant8", ["v0", "v1"], "v2", {"site": 2})], outputs=("v0", "v2"))
    typing = check(ok)
    assert typing.dtypes["v0"] == "int8" and typing.dtypes["v1"] is None and typing.dtypes["v2"] is None
    from_input = _quant_program([("standin::dequant8", ["x1", "x2"], "v0", {"site": 0})], {"x1": "int8"})
    assert check(from_input).dtypes["x1"] == "int8"
    assert Program.from_json(json.loads(json.dumps(from_input.to_json()))) == from_input
    with pytest.raises(InvalidProgram, match="takes int8"):
        check(_quant_program([("standin::dequant8", ["x0", "x2"], "v0", {"site": 0})]))
    with pytest.raises(InvalidProgram, match="program dtype there"):
        check(_quant_program([q, ("add", ["v0", "x0"], "v1", {})]))
    with pytest.raises(InvalidProgram, match="floating"):
        check(_quant_program([("standin::dequant8", ["x1", "x2"], "v0", {"site": 0})], {"x1": "int8"}, grad=True))


def test_codes_are_made_only_from_values_the_compiler_does_not_compute():
    """Exactness (fuzzer.program.exact): quantising an input, or a view of one, is
    legal; quantising what an aten form computed, or an input an aten form wrote into,
    is not (one rounding flips a code); what an opaque op made from exact values is exact."""
    import pytest

    from fuzzer.program.ir import InvalidProgram, check

    def quant(arg, site=5):
        return ("standin::quant8", [arg], "v9", {"site": site, "take": 0})

    check(_quant_program([quant("x0")]))
    check(_quant_program([("transpose", ["x0"], "v0", {}), ("transpose", ["v0"], "v1", {}), quant("v1")]))
    check(_quant_program([("standin::dequant8", ["x1", "x2"], "v0", {"site": 0}), quant("v0")], {"x1": "int8"}))
    with pytest.raises(InvalidProgram, match="compiler computes"):
        check(_quant_program([("add", ["x0", "x1"], "v0", {}), quant("v0")]))
    with pytest.raises(InvalidProgram, match="compiler computes"):
        check(_quant_program([("mul_", ["x0"], None, {"c": 0.5}), quant("x0")]))
    with pytest.raises(InvalidProgram, match="compiler computes"):  # the view reads what mul_ wrote
        check(_quant_program([("mul_", ["x0"], None, {"c": 2.0}), ("transpose", ["x0"], "v0", {}),
                              ("transpose", ["v0"], "v1", {}), quant("v1")]))


def test_a_conds_result_is_not_exact_a_bare_calls_is():
    """``cond_sin`` calls ``p_sin``, but the compiler computes its predicate (a sum)
    and its false branch's operand, so its result is not exact: quantising it is
    illegal; quantising a bare call's, or a call's in a compiled region, is legal."""
    import pytest

    from fuzzer.program.ir import InvalidProgram, check

    def quant(arg):
        return ("standin::quant8", [arg], "v9", {"site": 5, "take": 0})

    check(_quant_program([("p_sin", ["x0"], "v0", {"site": 0}), quant("v0")]))
    check(_quant_program([("in_region_p_sin", ["x0"], "v0", {"site": 0}), quant("v0")]))
    with pytest.raises(InvalidProgram, match="compiler computes"):
        check(_quant_program([("cond_sin", ["x0"], "v0", {"site": 0, "site2": 1}), quant("v0")]))


#: ``quantized_decomposed::quantize_per_tensor``'s scalars: int8 codes of x / 0.1 (the
#: ``quantized_decomposed`` ops are registered by ``torch.ao.quantization.fx._decomposed``)
QUANTIZE_SCALARS = {"scale": [0.1], "zero_point": [0], "quant_min": [-128], "quant_max": [127], "dtype": ["int8"]}


#: the Library that defines ``exactprobe::codes`` (its registration lives as long as it)
_COMPOSITE_LIB: list = []


def _composite_op() -> str:
    """An op whose only kernel is composite (CompositeImplicitAutograd), defined once."""
    import torch

    if not _COMPOSITE_LIB:
        lib = torch.library.Library("exactprobe", "DEF")
        lib.define("codes(Tensor x) -> Tensor")
        lib.impl("codes", lambda x: (x * 10).round().to(torch.int8), "CompositeImplicitAutograd")
        _COMPOSITE_LIB.append(lib)
    return "exactprobe::codes"


def test_an_op_is_opaque_only_where_the_compiled_program_calls_its_kernel():
    """An op with a kernel of its own that Inductor lowers (``quantize_per_tensor``)
    or decomposes (``choose_qparams``) is not opaque, nor one it traces through: its
    int8 codes are refused, by the declaration check and by the IR alike; an op with
    only a kernel (the stand-in's ``quant8``, a ``custom_op``) is called, so opaque."""
    import dataclasses

    import pytest
    import torch

    from fuzzer.program import forms
    from fuzzer.program.ir import InvalidProgram, check
    from fuzzer.user import audit, compiled
    from fuzzer.user.compiled import Treatment
    from fuzzer.user.form import form_of
    from tests.helpers import prog

    importlib.import_module("torch.ao.quantization.fx._decomposed")
    library.load(MODULE)
    quantize = declared.read("quantized_decomposed::quantize_per_tensor", scalars=QUANTIZE_SCALARS)
    assert quantize.compiled is Treatment.LOWERED and not quantize.opaque
    assert compiled.treatment("quantized_decomposed::choose_qparams.tensor") is Treatment.DECOMPOSED
    assert compiled.treatment(_composite_op()) is Treatment.TRACED
    assert declared.read("standin::quant8").opaque
    assert compiled.treatment("dcefuzz::p_sin") is Treatment.CALLED  # dcefuzz's own: custom_op
    dtypes, wrong = audit._result_dtypes(quantize, "cpu")
    assert dtypes == ("int8",) and "lowered by Inductor" in wrong[0]
    # the IR refuses its codes even where an op's declaration were taken at its word
    forms.add(form_of(dataclasses.replace(quantize, result_dtypes=("int8",))))
    body = [("quantized_decomposed::quantize_per_tensor", ["x0"], "v0", {"site": 0, "scalars": {
        k: (torch.int8 if k == "dtype" else v[0]) for k, v in QUANTIZE_SCALARS.items()}})]
    program = prog({"x0": ("s0", "s1")}, body, ("v0",))
    with pytest.raises(InvalidProgram, match="not opaque"):
        check(program)
    check(_quant_program([("standin::quant8", ["x0"], "v0", {"site": 0, "take": 0})], outputs=("v0",)))


@pytest.mark.compile
def test_what_an_op_is_read_as_is_what_inductors_code_does_with_it():
    """The static read (``fuzzer.user.compiled``) against Inductor's own code: the
    called op is an extern call in it, the lowered, decomposed and traced ones are
    not (their arithmetic is Inductor's); and a compile leaves each read as it was
    (the fallback it registers for the called op still reads as called)."""
    import torch
    from torch._inductor.utils import run_and_get_code

    from fuzzer.user import compiled
    from fuzzer.user.compiled import Treatment

    importlib.import_module("torch.ao.quantization.fx._decomposed")
    library.load(MODULE)
    composite = _composite_op()
    ops = {"quantized_decomposed::quantize_per_tensor": Treatment.LOWERED,
           "quantized_decomposed::choose_qparams.tensor": Treatment.DECOMPOSED,
           composite: Treatment.TRACED, "standin::quant8": Treatment.CALLED}

    def fn(x):
        qd = torch.ops.quantized_decomposed
        scale, zero = qd.choose_qparams.tensor(x, -128, 127, 1e-5, torch.int8)
        return (qd.quantize_per_tensor(x, 0.1, 0, -128, 127, torch.int8), torch.ops.exactprobe.codes(x),
                torch.ops.standin.quant8(x)[0], scale, zero)

    torch._dynamo.reset()
    with torch._inductor.config.patch(fx_graph_cache=False):  # lowered here, not read from a cache
        _, (code, *_) = run_and_get_code(torch.compile(fn, backend="inductor", fullgraph=True), torch.randn(4, 8))
    for qualname, want in ops.items():
        namespace, name = qualname.split("::")
        base, _, overload = name.partition(".")
        called = f"torch.ops.{namespace}.{base}.{overload or 'default'}(" in code
        assert called == want.opaque, (qualname, want)
        assert compiled.treatment(qualname) is want


def test_fixed_dtype_inputs_are_drawn_alike_everywhere_and_kept_in_the_reference():
    """An int8 input is drawn over the byte's range, in the fuzzer, in a repro script's
    driver and in a brief repro alike, and stays int8 in the float64 reference (only
    the program's own floats are raised); a fresh compile of a program that carries
    codes from the quantiser to the dequantiser is judged clean."""
    import torch

    from fuzzer.corpus.entry import Entry
    from fuzzer.judge import contract, execute
    from fuzzer.render import brief, driver, repro
    from tests.helpers import case as case_of

    q = ("standin::quant8", ["x0"], "v0", {"site": 0, "take": 0})
    scale = ("standin::quant8", ["x0"], "v1", {"site": 1, "take": 1})
    program = _quant_program([q, scale, ("standin::dequant8", ["v0", "v1"], "v2", {"site": 2}),
                              ("standin::dequant8", ["x1", "x2"], "v3", {"site": 3}), ("add", ["v2", "v3"], "v4", {})],
                             {"x1": "int8"}, outputs=("v0", "v4"))
    case = case_of(program, [{"s0": 3, "s1": 5}, {"s0": 4, "s1": 2}])
    xs, ref = execute.make_inputs(case, 0, "cpu"), execute.make_inputs(case, 0, "cpu", reference=True)
    assert xs[1].dtype == ref[1].dtype == torch.int8 and torch.equal(xs[1], ref[1])
    assert xs[0].dtype == torch.float32 and ref[0].dtype == torch.float64
    assert int(xs[1].min()) < -8 and int(xs[1].max()) > 8  # codes, not a normal's rounding
    entry = Entry(id="x", kind=contract.WRONG_OUTPUT, signature=Signature.parse("wrong-output|values :: x"), seed=None,
                  device="cpu", backend="inductor", torch_version=torch.__version__, case=case, detail=[])
    spec = json.loads(json.dumps(repro.spec(entry)))
    assert all(torch.equal(a, b) for a, b in zip(driver.make_inputs(spec, 0, "cpu"), xs))
    namespace: dict = {}
    exec("\n".join(brief.input_lines(entry, 0)), {"torch": torch}, namespace)  # noqa: S102 - our own lines
    assert torch.equal(namespace["x1"], xs[1]) and torch.equal(namespace["x0"], xs[0])
    torch._dynamo.reset()
    runs = execute.execute(case, "cpu", backend="aot_eager")
    execute.run_checks(case, "cpu", runs, contract.needs_checks(runs))
    verdict = contract.judge_runs([i.name for i in program.inputs], set(), runs)
    assert verdict.status == contract.OK and not verdict.divergences, verdict


def test_an_op_that_refuses_empty_tensors_is_used_with_sizes_kept_above_zero():
    from fuzzer.program.generate import generate
    from fuzzer.user import audit, selection

    library.load(MODULE)
    checked = audit.audit(declared.read("standin::rowmax"), opcheck=False)
    assert checked.op.nonempty and [p.check for p in checked.problems] == ["nonempty"]
    assert not checked.findings and not checked.skipped
    chosen = selection.select([library.ModuleRef.of(HINTS)], only=True)
    assert chosen.ops.nonempty == ("standin::rowmax",)
    cases = [generate(seed, ops=chosen.ops) for seed in range(20)]
    assert all(v >= 1 for c in cases for b in c.bindings for v in b.values())
    assert all(m >= 1 for c in cases for m in c.program.sym_min.values())


def test_a_block_size_letter_bound_to_a_size_from_data_is_illegal():
    """``[1, "m"]`` is written into the call as the program's name for m's size; a size
    only the data knows (u0) has none, so the call is illegal, not a NameError."""
    import pytest

    from fuzzer.program.ir import InvalidProgram, check
    from tests.helpers import prog

    library.load(library.ModuleRef.of(HINTS))
    scalars = {"scalars": {"block": [1, "m"]}}
    known = prog({"x0": ("s0", "s1")}, [("standin::blocksum", ["x0"], "v0", {"site": 0, **scalars})])
    check(known)
    unknown = prog({"x0": ("s0",)}, [("select_pos", ["x0"], "v0", {"size": "u0"}),
                                    ("unsqueeze", ["v0"], "v1", {}),
                                    ("standin::blocksum", ["v1"], "v2", {"site": 0, **scalars})])
    with pytest.raises(InvalidProgram, match="depends on data"):
        check(unknown)


def test_a_size_passed_as_a_plain_int_is_never_marked_unbacked():
    """``blocksum(x, [1, m])`` takes ``int[]``: the compiler must specialise m.  Marked
    dynamic, Dynamo refuses with ConstraintViolationError, the contract's refusal (no
    finding); marked unbacked it fails otherwise (a RuntimeError on the schema), which
    would be reported, so such a program is illegal and never drawn."""
    import dataclasses

    import pytest
    import torch

    from fuzzer.judge import contract, execute
    from fuzzer.program import features
    from fuzzer.program.generate import OpSet, generate
    from fuzzer.program.ir import InvalidProgram, Mode, check
    from tests.helpers import case as case_of
    from tests.helpers import prog

    ref = library.ModuleRef.of(HINTS)
    library.load(ref)
    body = [("standin::blocksum", ["x0"], "v0", {"site": 0, "scalars": {"block": [1, "m"]}})]
    base = dataclasses.replace(prog({"x0": ("s0", "s1")}, body, outputs=("v0",)), imports=(ref.imported,))
    with pytest.raises(InvalidProgram, match="plain int"):
        check(dataclasses.replace(base, mode=Mode(marks=(("x0", 1, "unbacked"),))))
    marked = dataclasses.replace(base, mode=Mode(marks=(("x0", 1, "dynamic"),)))
    torch._dynamo.reset()
    marked_case = case_of(marked, [{"s0": 3, "s1": 4}])
    runs = execute.execute(marked_case, "cpu", backend="eager")
    asks = contract.Asks(marks=frozenset({"dynamic"}))
    execute.run_checks(marked_case, "cpu", runs, contract.needs_checks(runs, asks))
    verdict = contract.judge_runs(["x0"], {}, runs, asks)
    assert not verdict.divergences and [gap.reason for gap in verdict.untested] == [contract.REFUSED], verdict
    ops = OpSet(builtin=False, user=("standin::blocksum",), imports=(ref.imported,))
    drawn = [generate(seed, features=features.ALL, ops=ops).program for seed in range(60)]
    calling = [p for p in drawn if any(s.form == "standin::blocksum" for s in p.body)]
    assert calling and not any(how == "unbacked" for p in calling for _, _, how in p.mode.marks)


def test_a_fake_impl_that_lies_about_strides_is_a_declaration_finding(tmp_path):
    """``empty_like`` for a kernel that returns a fresh contiguous tensor agrees on
    contiguous inputs and lies on a transposed one, where Inductor's stride assert then
    fails in compiled code: the op's lie, found before a campaign; the same op with a
    contiguous fake is clean."""
    from fuzzer.user import audit

    (tmp_path / "stridelib.py").write_text(
        "import torch\n"
        "LIB = torch.library.Library('stridelib', 'DEF')\n"
        "LIB.define('fresh(Tensor x) -> Tensor')\n"
        "LIB.define('honest(Tensor x) -> Tensor')\n"
        "for name in ('fresh', 'honest'):\n"
        "    LIB.impl(name, lambda x: (x * 2).contiguous(), 'CPU')\n"
        "torch.library.register_fake('stridelib::fresh', lambda x: torch.empty_like(x), lib=LIB)\n"
        "torch.library.register_fake('stridelib::honest', lambda x: x.new_empty(x.shape), lib=LIB)\n")
    library.load(str(tmp_path / "stridelib.py"))
    lying = audit.audit(declared.read("stridelib::fresh", signature="(n,m)->(n,m)"), opcheck=False)
    assert [p.check for p in lying.findings] == ["fake-strides"], lying.problems
    assert "transposed" in lying.findings[0].message
    honest = audit.audit(declared.read("stridelib::honest", signature="(n,m)->(n,m)"), opcheck=False)
    assert not honest.findings, honest.problems
