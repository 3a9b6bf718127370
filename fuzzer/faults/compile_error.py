"""compile-error: Inductor refuses to lower a mutating custom op applied to a view.

Why this is realistic.  A mutating custom op whose mutated argument is a view
(``m_scale(x[: n // 2])``) reaches Inductor, after ``decompose_auto_functionalized``,
as a fallback kernel whose mutated input is a ``ReinterpretView`` of a graph
input.  Lowering such kernels has repeatedly hit unsupported-case errors
(aliasing checks in ``FallbackKernel``, "TODO: dynamic shapes" asserts), so a
lowering that raises for this pattern is a typical compile-time regression.

The dynamic variant raises only when the view's sizes are symbolic (the classic
"not supported with dynamic shapes" gap).

Patched: ``torch._inductor.ir.FallbackKernel.create`` (a classmethod; the patch
keeps it one).
"""

from __future__ import annotations

from fuzzer.faults import _patching
from fuzzer.faults._fault import COMPILE_ERROR, Fault

TARGET = "torch._inductor.ir:FallbackKernel.create"


class UnsupportedViewMutation(NotImplementedError):
    """What the planted lowering bug raises."""


def _mutated_args(kernel, args, kwargs) -> list:
    schema = kernel._schema
    out = []
    for i, arg in enumerate(schema.arguments):
        if arg.alias_info is None or not arg.alias_info.is_write:
            continue
        if arg.kwarg_only or i >= len(args):
            if arg.name in kwargs:
                out.append(kwargs[arg.name])
        else:
            out.append(args[i])
    return out


def _is_view(node) -> bool:
    from torch._inductor import ir

    data = getattr(node, "data", node)  # unwrap TensorBox
    return isinstance(data, (ir.ReinterpretView, ir.BaseView))


def _build(dynamic: bool):
    def build(current):
        original = _patching.raw(TARGET).__func__

        def create(cls, kernel, *args, **kwargs):
            if _patching.is_custom_op(kernel) and kernel._schema.is_mutable:
                views = [a for a in _mutated_args(kernel, args, kwargs) if _is_view(a)]
                if views and (not dynamic or _patching.has_free_symbols(views)):
                    raise UnsupportedViewMutation(
                        f"fallback for {kernel} cannot mutate a view"
                        + (" with symbolic sizes" if dynamic else ""))
            return original(cls, kernel, *args, **kwargs)

        return {TARGET: classmethod(create)}
    return build


FAULTS = Fault.twins(
    _build, " with symbolic sizes",
    name="compile-error",
    bug_class=COMPILE_ERROR,
    expected_kind="compile-error",
    description=("torch._inductor.ir.FallbackKernel.create raises for a mutating custom op "
                 "whose mutated argument is a view{scope}"),
    targets=(TARGET,),
    quick=True,
)
