"""layout-write-lost: a layout tag's copy of a written argument is never written back.

Why this is realistic.  Where the argument compiled code has for a layout-tagged
custom op is not laid out as the tag promises (``needs_exact_strides``,
``needs_fixed_stride_order``, ``needs_contiguous_strides``), Inductor's
``GraphLowering.call_function`` hands the kernel a restrided copy, and for an op that
writes the argument ``GraphLowering.propagate_mutation`` copies the written copy back
into the original.  That copy-back is exactly what was missing when PyTorch made
``needs_fixed_stride_order`` the default for custom ops in 2024: "it creates clones of
those args, writes into them, and doesn't update the original args", and the default
was reverted (#127923; #128084, fixed by #133639).

The regression planted here is that one, for the ops that carry a layout tag of their
own: the tag's constraint (``lowering.tag_to_layout_constraint``, which
``maybe_layout_constraints`` asks for a tagged op only: an untagged op's default
constraint is decided in ``graph.py`` and keeps its behaviour, so the fault stays in
the ``layout-tags`` feature's path) restrides each tensor argument through a fresh copy,
as the reverted default did, and ``propagate_mutation`` skips the copy-back for such
an op.  The kernel writes a buffer that nothing reads, and what later reads the
argument sees its old value.  (Planting the lost copy-back alone shows nothing on
programs today: Inductor lays an argument out as the tag wants before the op, so it
never needs a copy there.)

Patched: ``torch._inductor.lowering.tag_to_layout_constraint`` and
``torch._inductor.graph.GraphLowering.propagate_mutation``.
"""

from __future__ import annotations

from fuzzer.faults import _patching
from fuzzer.faults._fault import MUTATION_LOST, Fault

CONSTRAINT = "torch._inductor.lowering:tag_to_layout_constraint"
PROPAGATE = "torch._inductor.graph:GraphLowering.propagate_mutation"
#: the layout tags an op may carry of its own (``contract.LAYOUT_TAGS``)
LAYOUT_TAGS = ("needs_exact_strides", "needs_contiguous_strides", "needs_fixed_stride_order", "flexible_layout")


def _tagged(op) -> bool:
    """A user custom op that carries a layout tag of its own."""
    return _patching.is_custom_op(op) and any(str(tag).rsplit(".", 1)[-1] in LAYOUT_TAGS for tag in op.tags)


def _copying(constrain):
    """``constrain`` (called as ``layout_constraints(fx_node, *args, **kwargs)``) handed
    fresh copies of the tensor arguments, which it lays out as the tag wants; exact
    strides are those of the fx arguments' values (``constrain_to_fake_tensors``)."""
    import torch
    from torch._inductor import ir, lowering

    def copied(arg):
        return ir.ExternKernel.copy_input(arg) if lowering._is_tensor_irnode(arg) else arg

    def value(arg):
        return arg.meta.get("val") if isinstance(arg, torch.fx.Node) else arg

    def copy_then_constrain(fx_node, *args, **kwargs):
        args, kwargs = tuple(map(copied, args)), {k: copied(v) for k, v in kwargs.items()}
        if constrain is lowering.constrain_to_fake_tensors:
            return constrain(args, kwargs, tuple(map(value, fx_node.args)),
                             {k: value(v) for k, v in fx_node.kwargs.items()})
        return constrain(fx_node, *args, **kwargs)

    return copy_then_constrain


def _build(current):
    original_constraint = current(CONSTRAINT)
    original_propagate = current(PROPAGATE)

    def tag_to_layout_constraint(tag):
        constrain = original_constraint(tag)
        return None if constrain is None else _copying(constrain)  # the reverted default's copies

    def propagate_mutation(self, fx_node, old_args, old_kwargs, new_args, new_kwargs):
        if _tagged(fx_node.target):
            return None  # the bug: the restrided copy the kernel wrote is dropped
        return original_propagate(self, fx_node, old_args, old_kwargs, new_args, new_kwargs)

    return {CONSTRAINT: tag_to_layout_constraint, PROPAGATE: propagate_mutation}


FAULTS = (
    Fault(name="layout-write-lost", bug_class=MUTATION_LOST, expected_kind="wrong-mutation", dynamic_only=False,
          description=("a custom op's own layout tag restrides its arguments through copies "
                       "(lowering.tag_to_layout_constraint, as the reverted needs_fixed_stride_order default "
                       "did) and GraphLowering.propagate_mutation (torch/_inductor/graph.py) skips the copy-back "
                       "of a written one, so the kernel's write is lost (#128084)"),
          targets=(CONSTRAINT, PROPAGATE), build=_build, features=(("layout-tags", 1.0),)),
)
