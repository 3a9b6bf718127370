"""The lines of Inductor's output code a report quotes (``fuzzer.render.output_code``):
the custom-op calls with their context and the kernels, from a hand-written wrapper;
which entries show code.  No compile."""

from types import SimpleNamespace

from fuzzer.judge import contract
from fuzzer.limits import REPORT
from fuzzer.render import output_code

WRAPPER = '''
def helper():
    torch.ops.dcefuzz.p_sin.default(x, 9)

def call(args):
    arg0_1, = args
    buf0 = empty_strided_cpu((4,), (1,), torch.float32)
    cpp_fused_sin_0(arg0_1, buf0)
    a = 1
    b = 2
    c = 3
    d = 4
    torch.ops.dcefuzz.e_log.default(buf0, 1)
    del buf0
    return (arg0_1, )

def other():
    pass
'''


def test_the_calls_of_the_ops_with_their_context_and_every_kernel_are_kept():
    lines = output_code.relevant(WRAPPER, ("dcefuzz",))
    assert "torch.ops.dcefuzz.e_log.default(buf0, 1)" in lines
    assert "cpp_fused_sin_0(arg0_1, buf0)" in lines
    assert "..." in lines and "arg0_1, = args" not in lines
    assert not any("9)" in ln for ln in lines)  # only the call function's own lines
    assert all(not ln.startswith(" ") for ln in lines)  # dedented


def test_a_wrapper_without_a_call_function_shows_nothing_and_a_long_one_is_cut():
    assert output_code.relevant("def other():\n    pass\n", ("dcefuzz",)) == []
    long = "def call(args):\n" + "".join(f"    cpp_fused_{k}(a)\n" for k in range(REPORT.output_code_lines + 5))
    lines = output_code.relevant(long, ("dcefuzz",))
    assert len(lines) == REPORT.output_code_lines + 1 and lines[-1] == "..."


def test_only_an_inductor_entry_of_a_single_compiles_wrong_result_shows_code():
    assert output_code.shows_code(SimpleNamespace(backend="inductor", kind=contract.WRONG_OUTPUT))
    assert not output_code.shows_code(SimpleNamespace(backend="aot_eager", kind=contract.WRONG_OUTPUT))
    assert not output_code.shows_code(SimpleNamespace(backend="inductor", kind=contract.COMPILE_ERROR))
    assert output_code.for_entry(SimpleNamespace(backend="inductor", kind=contract.COMPILE_ERROR)) == []
