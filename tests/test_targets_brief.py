"""A target as a report says it and a brief writes it (``fuzzer.judge.targets.brief``,
each target's ``through``): every target has its words, and the code each writes; no
compile."""

from helpers import prog

from fuzzer.judge import targets
from fuzzer.judge.targets import brief


def test_every_target_has_its_words_and_a_call():
    for name in targets.TARGETS:
        said = targets.get(name).through
        assert said.other in ("compiled", "exported")
        assert said.opening.format(args="dynamic=True", backend="inductor", device="cpu")


def test_a_compile_is_written_with_its_arguments_and_mode_and_an_export_through_its_helper():
    assert targets.get(targets.COMPILE).through.call("program", "dynamic=True", "inductor") == \
        "torch.compile(program, dynamic=True, backend='inductor')"
    assert targets.get(targets.REDUCE_OVERHEAD).through.call("program", "dynamic=True", "inductor").endswith(
        "mode='reduce-overhead')")
    p = prog({"x0": ("s0", "4"), "x1": ("3",)}, [])
    export = targets.get(targets.EXPORT).through
    assert export.call("program", "", "") == "exported"
    helper = export.helper(p, "inductor")
    assert "shapes = ({0: torch.export.Dim.AUTO}, None)" in helper and "module = ep.module()" in helper


def test_dynamic_shapes_mark_every_dim_that_holds_a_symbol():
    p = prog({"x0": ("s0", "3", "s1")}, [])
    assert brief.dynamic_shapes(p) == "({0: torch.export.Dim.AUTO, 2: torch.export.Dim.AUTO},)"


def test_compiled_autograd_wraps_the_step_under_this_torchs_entry_point():
    ca = targets.get(targets.COMPILED_AUTOGRAD).through
    assert ca.wraps_step
    assert "torch._dynamo.compiled_autograd._enable(BACKWARD_COMPILER)" in ca.helper(prog({"x0": ("s0",)}, []),
                                                                                     "inductor")
