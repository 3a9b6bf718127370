"""compile-error-compiled-autograd (``fuzzer.faults.compiled_autograd``): with the fault, a
custom op's fallback kernel raises only while a compiled autograd graph is compiled;
no compile."""

import pytest
import torch

from fuzzer.faults import compiled_autograd
from fuzzer.program import custom_ops


def test_outside_a_compile_there_is_no_compiled_autograd_graph():
    assert compiled_autograd._in_compiled_autograd_graph() is False


def test_a_custom_ops_kernel_raises_in_a_compiled_autograd_graph_only(monkeypatch):
    custom_ops.install()
    monkeypatch.setattr(compiled_autograd._patching, "raw",
                        lambda target: classmethod(lambda cls, *a: "torch's create"))
    (fault,) = compiled_autograd.FAULTS
    create = fault.build(None)[compiled_autograd.TARGET].__func__
    monkeypatch.setattr(compiled_autograd, "_in_compiled_autograd_graph", lambda: True)
    with pytest.raises(compiled_autograd.UnsupportedInCompiledAutograd, match="compiled autograd graph"):
        create(None, torch.ops.dcefuzz.p_sin.default, "x", 0)
    assert create(None, torch.ops.aten.sin.default, "x") == "torch's create"
    monkeypatch.setattr(compiled_autograd, "_in_compiled_autograd_graph", lambda: False)
    assert create(None, torch.ops.dcefuzz.p_sin.default, "x", 0) == "torch's create"
    assert fault.pipelines == ("compiled-autograd",) and fault.unavailable() is None
