"""Custom ops with autocast rules in ``torch.autocast`` regions (``families.autocasts``,
feature ``autocast-rules``): what the generator draws, the text, what a rule makes a
call compute in eager, what the IR admits (exact operands only where a region casts),
how the forms shrink, and (marked ``compile``) that compiled code keeps each cast and
that a cast dropped while tracing (fault ``cast-dropped``) is caught."""

import dataclasses

import pytest
import torch
from helpers import case, prog, run_pass, stays_while

from fuzzer import faults
from fuzzer.judge import contract, paths, trial
from fuzzer.judge.execute import run_eager
from fuzzer.judge.observe import Run
from fuzzer.program import codegen, custom_ops, features
from fuzzer.program.families import autocasts
from fuzzer.program.generate import generate
from fuzzer.program.ir import InvalidProgram, Mode, check

REGIONS = ("autocast_square", "autocast_back", "autocast_off", "autocast_mix", "autocast_scale")
TWINS = {f.name for f in autocasts.FORMS} - set(REGIONS)
DIMS = {"x0": ("s0", "s1"), "x1": ("s0", "s1")}

#: each form once: the write reads the bfloat16 value ``autocast_square`` made
EVERY = prog(DIMS, [
    ("autocast_square", ["x0"], "v0", {"site": 0, "region": "float16"}),
    ("autocast_scale", ["v0"], None, {"site": 1, "region": "bfloat16"}),
    ("autocast_back", ["x1"], "v1", {"site": 2, "region": "bfloat16"}),
    ("autocast_off", ["v1"], "v2", {"site": 3, "region": "bfloat16"}),
    ("autocast_mix", ["x0", "x1"], "v3", {"site": 4, "region": "float16"}),
], outputs=["v0", "v2", "v3"])


def _outputs(program, dtype="float32"):
    program = dataclasses.replace(program, mode=Mode(dtype=dtype))
    run = run_eager(case(program, [{"s0": 3, "s1": 4}]), "cpu")[0].eager
    assert run.failure is None, run.failure
    return run.outputs


def test_drawn_programs_are_legal_use_every_region_never_a_twin_and_return_every_value_of_the_rules_dtype():
    table = features.parse("autocast-rules=1.0")
    drawn = set()
    for seed in range(120):
        program = generate(seed, features=table).program
        typing = check(program)
        drawn |= {s.form for s in program.body}
        own = {s.out for s in program.body if s.out is not None and typing.dtypes[s.out] is not None}
        assert own <= set(program.outputs)  # their dtype is what shows a cast compiled code lost
    assert set(REGIONS) <= drawn and not drawn & TWINS


def test_without_the_feature_no_region_is_drawn():
    for seed in range(40):
        body = generate(seed, features=features.ALL | {autocasts.FEATURE: 0.0}).program.body
        assert not {s.form for s in body} & {f.name for f in autocasts.FORMS}


def test_the_text_is_a_region_on_the_operands_device_of_the_drawn_dtype_switched_off_where_it_says():
    text = codegen.source(EVERY)
    assert ("def autocast_square0(t):\n    with torch.autocast(t.device.type, dtype=torch.float16):\n"
            "        return torch.ops.dcefuzz.a_square(t, 0)\n") in text
    assert ("def autocast_back2(t):\n    with torch.autocast(t.device.type, dtype=torch.bfloat16):\n"
            "        y = torch.ops.dcefuzz.a_square(t, 2)\n    return y.to(t.dtype)\n") in text
    assert "        with torch.autocast(t.device.type, enabled=False):\n            return" in text
    assert "def autocast_mix4(a, b):\n    with torch.autocast(a.device.type, dtype=torch.float16)" in text
    assert "v0 = autocast_square0(x0)" in text and "    autocast_scale1(v0)" in text
    assert "torch.ops.dcefuzz.a_mix(a, b)\n" in codegen.source(EVERY, plain=True)


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float16"])
def test_a_rule_casts_to_its_own_dtype_whatever_the_regions_and_the_programs(dtype):
    square, off, mix = _outputs(EVERY, dtype)
    assert (square.dtype, off.dtype, mix.dtype) == (torch.bfloat16, getattr(torch, dtype), torch.float32)
    x0 = run_eager(case(dataclasses.replace(EVERY, mode=Mode(dtype=dtype)), [{"s0": 3, "s1": 4}]), "cpu")
    assert x0[0].eager.calls == [("a_square", 0), ("a_scale", 1), ("a_square", 2), ("a_square", 3), ("a_mix", 4)]


def test_the_write_of_a_bfloat16_value_lands_in_it_since_its_cast_is_the_tensor_itself():
    square = prog(DIMS, [("autocast_square", ["x0"], "v0", {"site": 0, "region": "bfloat16"})], outputs=["v0"])
    written = _outputs(EVERY)[0]
    torch.testing.assert_close(written, _outputs(square)[0] * 0.5 + 1, rtol=0, atol=0)


def test_a_region_that_casts_reads_exact_values_only_and_one_switched_off_reads_any():
    """A float the compiler computed one ulp apart may round to the other bfloat16: the
    IR keeps such a value out of a cast (``Form.exact_operands``)."""
    computed = [("unary", ["x0"], "v0", {"fn": "sin"})]
    for form in ("autocast_square", "autocast_back"):
        with pytest.raises(InvalidProgram, match="rounds or truncates its operands"):
            check(prog(DIMS, computed + [(form, ["v0"], "v1", {"site": 0, "region": "bfloat16"})]))
    check(prog(DIMS, computed + [("autocast_off", ["v0"], "v1", {"site": 0, "region": "bfloat16"})]))
    check(prog(DIMS, [("autocast_square", ["x0"], "v0", {"site": 0, "region": "bfloat16"}),
                      ("autocast_scale", ["v0"], None, {"site": 1, "region": "bfloat16"})]))


def test_a_write_in_a_region_takes_a_bfloat16_value_only_since_another_is_written_as_a_dropped_copy():
    """A float32 operand would be cast to a bfloat16 copy, which the op writes and drops,
    where the float64 reference (never cast) writes the operand: no reference."""
    with pytest.raises(InvalidProgram, match="takes bfloat16"):
        check(prog(DIMS, [("autocast_scale", ["x0"], None, {"site": 0, "region": "bfloat16"})]))


def test_a_region_of_a_dtype_autocast_has_no_rule_for_is_illegal():
    with pytest.raises(InvalidProgram, match="autocast region"):
        check(prog(DIMS, [("autocast_square", ["x0"], "v0", {"site": 0, "region": "float64"})]))


@pytest.mark.parametrize("form,args,simplest", [("autocast_back", ["x0"], "p_sin"), ("autocast_off", ["x0"], "p_sin"),
                                                ("autocast_square", ["x0"], "p_sin"),
                                                ("autocast_mix", ["x0", "x1"], "p_sin")])
def test_a_region_shrinks_to_the_bare_call_then_to_the_first_librarys_op(form, args, simplest):
    c = case(prog(DIMS, [(form, args, "v0", {"site": 0, "region": "bfloat16"})], outputs=["v0"]))
    run = run_pass("rewrite", c, stays_while(lambda cc: True))
    assert [s.form for s in run.best.program.body] == [simplest]


def _path(dtype):
    """The path eager takes through a call of ``a_square`` in a bfloat16 region, on
    inputs of ``dtype`` (float64: the reference's)."""
    custom_ops.install()
    recorder, _ = paths.modes()
    with recorder() as rec, torch.autocast("cpu", dtype=torch.bfloat16):
        torch.ops.dcefuzz.a_square(torch.ones(3, 4, dtype=dtype), 0)
    return tuple(rec.path)


def test_allowed_the_reference_keeps_eagers_path_though_it_makes_none_of_the_casts():
    """AUTOCAST'S CASTS: eager casts in and the float64 reference does not (autocast
    never casts float64): the same path, casts aside."""
    eager, ref = _path(torch.float32), _path(torch.float64)
    assert contract.CAST in {step[0] for step in eager} and contract.CAST not in {step[0] for step in ref}
    assert contract.another_path(Run(outputs=[], path=eager), Run(outputs=[], path=ref)) is None


def test_forbidden_any_other_step_still_parts_the_reference_from_eagers_path():
    eager, ref = _path(torch.float32), _path(torch.float64)
    other = ref[:-1] + ((ref[-1][0], (3, 5)),)  # the op returned another shape
    assert contract.another_path(Run(outputs=[], path=eager), Run(outputs=[], path=other)) is not None
    more = ref + (("aten.sin", (3, 4)),)
    assert contract.another_path(Run(outputs=[], path=eager), Run(outputs=[], path=more)) is not None


# ------------------------------------------------------- real compiles

@pytest.mark.compile
def test_compiled_code_keeps_every_cast_and_a_cast_dropped_while_tracing_is_a_wrong_dtype():
    c = case(EVERY, [{"s0": 3, "s1": 4}, {"s0": 5, "s1": 2}])
    assert trial.run_trial(c, "cpu", confirm=False).status == "clean"
    with faults.planted("cast-dropped"):
        planted = trial.run_trial(c, "cpu", confirm=False)
    found = [(f.kind, d.where, d.symptoms) for f in planted.findings for d in f.divergences if d.binding == 0]
    assert found == [(contract.WRONG_OUTPUT, "output 0", (contract.DTYPE,))]
