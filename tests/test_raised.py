"""Where torch raised an error (``fuzzer.judge.raised``): a place that names no one thing
(autograd's engine, Inductor's generated code) says what raised under it."""

import linecache

import torch

from fuzzer.judge import legacy, observe, raised
from fuzzer.judge.contract import COMPILE_ERROR, Divergence


def _defined(module: str, source: str, name: str = "f"):
    """``name`` of ``source``, defined as if in ``module``, its lines readable as a file's."""
    filename = f"<{module}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    space = {"__name__": module}
    exec(compile(source, filename, "exec"), space)  # noqa: S102 - hand-written test code
    return space[name]


def _caught(fn, *args):
    try:
        fn(*args)
    except Exception as exc:  # noqa: BLE001
        return exc
    raise AssertionError("did not raise")


GUARD = _defined("torch.fx.experimental.symbolic_shapes", "def f(n):\n    raise ValueError(f'guard on u0 <= {n}')\n")
ENGINE = _defined("torch.autograd.graph", "def _engine_run_backward(g, n):\n    return g(n)\n", "_engine_run_backward")


def test_an_error_under_autograds_engine_names_the_node_whose_backward_raised():
    cumsum = raised.raised_at(_caught(ENGINE, GUARD, 3), ["CumsumBackward0"])
    cumprod = raised.raised_at(_caught(ENGINE, GUARD, 3), ["CumprodBackward0"])
    assert cumsum == ("raised ValueError in torch.autograd:_engine_run_backward (backward of CumsumBackward0)", "")
    assert cumsum != cumprod
    # the same node with other sizes in the guard's words: the same class
    assert raised.raised_at(_caught(ENGINE, GUARD, 7), ["CumsumBackward0"]) == cumsum
    # no node named (anomaly mode off): the words say which formula
    assert raised.raised_at(_caught(ENGINE, GUARD, 3)) == (
        "raised ValueError in torch.autograd:_engine_run_backward", "guard on u0 <= 3")


def _below_python(*args):
    """A check the generated code calls (in C++ there; here code that is not torch's)."""
    raise TypeError("expected Tensor() for op: input")


def test_an_error_of_generated_code_names_what_its_line_calls():
    module = "torch._inductor.runtime.compile_tasks.ckabc"
    source = ("class Runner:\n    def call(self, which):\n"
              "        if which:\n            assert_size_stride(which)\n"
              "        buf0 = cpp_fused_mul_0(which)\n")
    space = {"__name__": module}
    filename = f"<{module}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    exec(compile(source, filename, "exec"), space)  # noqa: S102
    space["assert_size_stride"] = space["cpp_fused_mul_0"] = _below_python
    check = raised.raised_at(_caught(space["Runner"]().call, 1))
    kernel = raised.raised_at(_caught(space["Runner"]().call, 0))
    assert check == ("raised TypeError in torch._inductor:Runner.call (generated: assert_size_stride)",
                     "expected Tensor() for op: input")
    assert kernel[0] == "raised TypeError in torch._inductor:Runner.call (generated: cpp_fused_mul_#)"
    # the class saved before said the place alone: what reclass and triage read it back as
    div = Divergence(COMPILE_ERROR, 0, "compile", "TypeError", (f"{check[0]}: {check[1]}",))
    assert legacy.unnamed_raiser(COMPILE_ERROR, [div]).text == \
        "compile-error|raised TypeError in torch._inductor:Runner.call"


def test_a_compiled_run_names_the_backward_that_raised_a_guard_on_a_size_from_data():
    """One real compile a formula (``aot_eager``, no Inductor): a guard on a size from data
    raised in ``cumsum``'s backward and one in ``cumprod``'s are two classes."""
    torch._dynamo.config.capture_dynamic_output_shape_ops = True
    sites = []
    try:
        for op in ("cumsum", "cumprod"):
            torch._dynamo.reset()

            def f(x, op=op):
                return getattr(torch.masked_select(x, x > 0), op)(0).sum()

            compiled = torch.compile(f, dynamic=True, backend="aot_eager")

            def step(x, compiled=compiled):
                compiled(x).backward()
                return (x.grad,)
            run = observe.run_once(step, [torch.randn(6, requires_grad=True)], {"calls": [], "effects": []},
                                   compiled=True)
            sites.append(run.failure.site)
    finally:
        torch._dynamo.config.capture_dynamic_output_shape_ops = False
        torch._dynamo.reset()
    assert sites == [f"raised GuardOnDataDependentSymNode in torch.autograd:_engine_run_backward (backward of {n})"
                     for n in ("CumsumBackward0", "CumprodBackward0")]


def test_a_generated_line_that_calls_nothing_is_still_said_generated():
    """A generated line with no call (a guard's ``if``) still names its place as generated
    code, so the class read back as it was saved before is the place alone."""
    module = "torch._inductor.runtime.compile_tasks.ckdef"
    source = "def repeated_subgraph0(u1):\n    if not u1 <= s4:\n        raise AssertionError\n"
    space = {"__name__": module}
    filename = f"<{module}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    exec(compile(source, filename, "exec"), space)  # noqa: S102
    site = raised.raised_at(_caught(space["repeated_subgraph0"], 1))
    assert site == ("raised NameError in torch._inductor:repeated_subgraph# (generated)", "name 's4' is not defined")
    div = Divergence(COMPILE_ERROR, 0, "compile", "NameError", (f"{site[0]}: {site[1]}",))
    assert legacy.unnamed_raiser(COMPILE_ERROR, [div]).text == (
        "compile-error|raised NameError in torch._inductor:repeated_subgraph#")
