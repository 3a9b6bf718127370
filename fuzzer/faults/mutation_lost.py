"""mutation-lost: a mutating custom op's write never reaches the program input.

Why this is realistic.  After functionalization a mutating custom op is the
functional wrapper ``auto_functionalized_v2``; Inductor's post-grad pass
``decompose_auto_functionalized`` turns it back into "clone the bases the
reinplacing pass could not reuse, call the op, return the (cloned) bases", and
the graph's epilogue ``copy_`` writes those returned bases into the inputs.  Bugs
in exactly this glue (which base is cloned, which tensor is returned for it,
view regeneration) have recurred upstream.  Here the decomposition clones every
base (ignoring reinplace's decision) but hands back the original, unwritten base:
the op writes a temporary and the epilogue copies the old value back.

The dynamic variant does so only when a base has symbolic sizes.

Patched: ``torch._inductor.fx_passes.post_grad.decompose_auto_functionalized``
(marks the pass as running) and
``torch._higher_order_ops.auto_functionalize.auto_functionalized_v2_dense``, which
the decomposition imports at call time; other callers (the fake impl) are untouched.
"""

from __future__ import annotations

import contextvars

from fuzzer.faults import _patching
from fuzzer.faults._fault import MUTATION_LOST, Fault
from fuzzer.judge.targets import AOTI, COMPILE

DECOMPOSE = "torch._inductor.fx_passes.post_grad:decompose_auto_functionalized"
DENSE = "torch._higher_order_ops.auto_functionalize:auto_functionalized_v2_dense"

_in_decomposition: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "dcefuzz_in_decompose_auto_functionalized", default=False)


def build_with(affected):
    """The patch for the mutating custom calls whose bases ``affected(op, bases)`` picks out."""
    def build(current):
        original_decompose = current(DECOMPOSE)
        original_dense = current(DENSE)

        def decompose_auto_functionalized(graph):
            token = _in_decomposition.set(True)
            try:
                return original_decompose(graph)
            finally:
                _in_decomposition.reset(token)

        def auto_functionalized_v2_dense(_mutable_op, _only_clone_these_bases=None, **kwargs):
            bases = list(kwargs.get("_all_bases", []))
            hit = (_in_decomposition.get() and bases and _patching.is_custom_op(_mutable_op)
                   and affected(_mutable_op, bases))
            if not hit:
                return original_dense(_mutable_op, _only_clone_these_bases, **kwargs)
            out = original_dense(_mutable_op, tuple(range(len(bases))), **kwargs)
            # The bug: the clones the op wrote are dropped; the old bases are returned.
            return (*out[: len(out) - len(bases)], *bases)

        return {DECOMPOSE: decompose_auto_functionalized, DENSE: auto_functionalized_v2_dense}
    return build


def _build(dynamic: bool):
    return build_with(lambda op, bases: not dynamic or _patching.has_free_symbols(bases))


FAULTS = Fault.twins(
    _build, " when a base has symbolic sizes",
    name="mutation-lost",
    bug_class=MUTATION_LOST,
    expected_kind="wrong-mutation",
    description=(
        "Inductor's decompose_auto_functionalized (fx_passes/post_grad.py, via "
        "auto_functionalized_v2_dense) clones the mutated bases of a custom op but "
        "returns the unwritten originals{scope}, so the epilogue copy_ writes the old "
        "value back into the input"),
    targets=(DECOMPOSE, DENSE),
    quick=True,
    pipelines=(COMPILE, AOTI),
)
