"""compile-error-compiled-autograd: Inductor refuses a custom op in the graph compiled
autograd hands it.

Why this is realistic.  Compiled autograd traces the backward the autograd engine
would run (an ``autograd.Function``'s ``backward``, an op's ``register_autograd``
formula) into one graph and hands it to ``torch.compile``, under a compile id of its
own (``CompileId.compiled_autograd_id``).  A custom op in that graph reaches Inductor
as a fallback kernel like any other, but through a path only that graph takes (its
inputs are lifted, its sizes are a list it is given), and lowerings have failed there
where the same op lowers in an ordinary graph: torch 2.13 raises ``'NoneType' object
has no attribute 'get_size'`` lowering an ORDERED effect in such a backward
(docs/targets.md).  Here the lowering raises for every custom op while a compiled
autograd graph is compiled.

It is a fault of the ``compiled-autograd`` target (``fuzzer.judge.targets``): through
``compile`` the backward is AOTAutograd's own, compiled under the forward's id, and
the fault never fires (``tests/test_targets.py``).

Patched: ``torch._inductor.ir.FallbackKernel.create`` (a classmethod; the patch keeps
it one).
"""

from __future__ import annotations

from fuzzer.faults import _patching
from fuzzer.faults._fault import COMPILE_ERROR, Fault
from fuzzer.faults.compile_error import TARGET
from fuzzer.judge.targets import COMPILED_AUTOGRAD


class UnsupportedInCompiledAutograd(NotImplementedError):
    """What the planted lowering bug raises."""


def _in_compiled_autograd_graph() -> bool:
    from torch._guards import CompileContext

    return getattr(CompileContext.current_compile_id(), "compiled_autograd_id", None) is not None


def _build(current):
    original = _patching.raw(TARGET).__func__

    def create(cls, kernel, *args, **kwargs):
        if _patching.is_custom_op(kernel) and _in_compiled_autograd_graph():
            raise UnsupportedInCompiledAutograd(f"fallback for {kernel} in a compiled autograd graph")
        return original(cls, kernel, *args, **kwargs)

    return {TARGET: classmethod(create)}


FAULTS = (
    Fault(
        name="compile-error-compiled-autograd",
        bug_class=COMPILE_ERROR,
        expected_kind="compile-error",
        dynamic_only=False,
        description=("torch._inductor.ir.FallbackKernel.create raises for a custom op while torch.compile "
                     "compiles a compiled autograd graph (the backward compiled autograd traced)"),
        targets=(TARGET,),
        build=_build,
        features=(("autograd", 1.0), ("autograd-function", 1.0)),
        pipelines=(COMPILED_AUTOGRAD,),
        # one program in eight of seed 0 reaches it (its eighth, 135 s into the campaign):
        # a backward runs only where an output requires grad, and compiled autograd's runs
        # cost some 10 s a program on two shared cores
        seconds=300.0,
    ),
)
