"""A target as a report says it and a brief writes it (``fuzzer.render.through``):
every target has its words, and the code each writes; no compile."""

from helpers import prog

from fuzzer.judge import targets
from fuzzer.render import through


def test_every_target_has_its_words_and_a_call():
    assert set(through.THROUGH) == set(targets.TARGETS)
    for name in targets.TARGETS:
        said = through.of(name)
        assert said.other in ("compiled", "exported")
        assert said.opening.format(args="dynamic=True", backend="inductor", device="cpu")


def test_a_compile_is_written_with_its_arguments_and_mode_and_an_export_through_its_helper():
    assert through.of(targets.COMPILE).call("program", "dynamic=True", "inductor") == \
        "torch.compile(program, dynamic=True, backend='inductor')"
    assert through.of(targets.REDUCE_OVERHEAD).call("program", "dynamic=True", "inductor").endswith(
        "mode='reduce-overhead')")
    p = prog({"x0": ("s0", "4"), "x1": ("3",)}, [])
    export = through.of(targets.EXPORT)
    assert export.call("program", "", "") == "exported"
    helper = export.helper(p, "inductor")
    assert "shapes = ({0: torch.export.Dim.AUTO}, None)" in helper and "module = ep.module()" in helper


def test_dynamic_shapes_mark_every_dim_that_holds_a_symbol():
    p = prog({"x0": ("s0", "3", "s1")}, [])
    assert through.dynamic_shapes(p) == "({0: torch.export.Dim.AUTO, 2: torch.export.Dim.AUTO},)"


def test_compiled_autograd_wraps_the_step_under_this_torchs_entry_point():
    ca = through.of(targets.COMPILED_AUTOGRAD)
    assert ca.wraps_step
    assert "torch._dynamo.compiled_autograd._enable(BACKWARD_COMPILER)" in ca.helper(prog({"x0": ("s0",)}, []),
                                                                                     "inductor")
