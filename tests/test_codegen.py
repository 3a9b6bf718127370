"""Lowering a program to Python (``fuzzer.program.codegen``): the text, its step, and the
built function run eagerly; hand-written programs, no compile."""

import dataclasses

import torch
from helpers import prog

from fuzzer.program import codegen, custom_ops
from fuzzer.program.ir import Mode

BODY = [("p_sin", ["x0"], "v0", {"site": 0}), ("head", ["v0"], "v1", {"dim": 0}),
        ("e_log", ["v1"], None, {"site": 1})]
PROGRAM = prog({"x0": ("s0", "s1")}, BODY, outputs=["v1"])


def test_sizes_are_read_once_from_the_inputs_and_the_outputs_are_a_tuple():
    text = codegen.source(PROGRAM)
    assert text.splitlines()[:3] == ["def program(x0):", "    s0 = x0.shape[0]", "    s1 = x0.shape[1]"]
    assert "    v0 = torch.ops.dcefuzz.p_sin(x0, 0)" in text
    assert text.rstrip().endswith("return (v1,)")
    assert f"def {codegen.STEP_NAME}" not in text  # the default mode needs no step


def test_plain_text_leaves_the_call_sites_out_and_sites_matter_only_where_two_calls_would_merge():
    plain = codegen.source(PROGRAM, plain=True)
    assert "p_sin(x0)" in plain and "e_log(v1)" in plain
    assert not codegen.sites_matter(PROGRAM)
    twice = prog({"x0": ("s0",)}, [("p_sin", ["x0"], "v0", {"site": 0}), ("p_sin", ["x0"], "v1", {"site": 1})])
    assert codegen.sites_matter(twice)
    identical = prog({"x0": ("s0",)}, [("p_sin", ["x0"], "v0", {"site": 0}), ("p_sin", ["x0"], "v1", {"site": 0})])
    assert not codegen.sites_matter(identical)


def test_a_mode_brings_a_step_with_its_marks_and_its_backward():
    p = dataclasses.replace(PROGRAM, mode=Mode(dynamic="auto", grad=True, marks=(("x0", 1, "maybe"),)))
    text = codegen.source(p)
    assert codegen.needs_step(p) and not codegen.needs_step(PROGRAM)
    assert codegen.compile_args(p) == "dynamic=None" and codegen.compile_args(PROGRAM) == "dynamic=True"
    assert "    torch._dynamo.maybe_mark_dynamic(x0, 1)" in text
    assert f"def {codegen.LOSS_NAME}(outs):" in text and "loss.backward()" in text


def test_the_header_says_how_it_is_compiled_and_its_inputs_are_made():
    p = dataclasses.replace(PROGRAM, mode=Mode(dtype="float16", strided=("x0",)))
    head = codegen.header(p).splitlines()
    assert head[0] == "# compiled = torch.compile(program, dynamic=True); each binding runs step(compiled, ...)"
    assert head[2] == "# inputs: dtype float16; x0 strided (last dim by 2)"


def test_the_built_function_runs_eagerly_and_its_step_applies_the_mode():
    custom_ops.install()
    fn, step = codegen.build_with_step(PROGRAM)
    assert step is None
    x = torch.rand(4, 3)
    (out,) = codegen.driven(step, fn)(x)
    torch.testing.assert_close(out, torch.sin(x)[:2])
    assert codegen.build(PROGRAM) is not fn  # a fresh code object for each build


def test_a_module_programs_step_loads_its_buffer_and_writes_back_what_the_call_left():
    custom_ops.install()
    p = prog({"x0": ("s0",)}, [("m_scale", ["x0"], None, {"site": 0})])
    p = dataclasses.replace(p, mode=Mode(module=("x0",)))
    fn, step = codegen.build_with_step(p)
    x = torch.ones(3)
    codegen.driven(step, fn)(x)
    assert isinstance(fn, torch.nn.Module) and not torch.equal(x, torch.ones(3))
    torch.testing.assert_close(fn.x0, x)  # the buffer's state is what the input holds after
