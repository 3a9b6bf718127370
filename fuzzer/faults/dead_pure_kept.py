"""dead-pure-kept: purity analysis calls a pure custom op impure, so DCE keeps it.

Why this is realistic.  Both dead-code eliminators ask the same oracle,
``torch._library.utils.is_impure``: FX's ``Node.is_impure`` (AOTAutograd and
post-grad DCE) and Inductor's ``FallbackKernel.has_side_effects`` (scheduler
dead-node elimination).  A conservative regression there, e.g. treating every
op without a known-pure schema as side-effectful, never breaks correctness and
so slips through correctness tests; it only costs time: dead custom calls run.

The dynamic variant is conservative only when sizes are symbolic ("purity of an
op with unbacked/symbolic arguments is unknown, assume impure").  The FX check
sees argument nodes; the scheduler passes no arguments, so the variant also
wraps ``FallbackKernel.has_side_effects`` to look at the kernel's inputs.

Patched: ``torch._library.utils.is_impure`` (both callers import it at call
time) and, for the dynamic variant, ``torch._inductor.ir.FallbackKernel.has_side_effects``.
"""

from __future__ import annotations

from fuzzer.faults import _patching
from fuzzer.faults._fault import DEAD_PURE_KEPT, Fault

IS_IMPURE = "torch._library.utils:is_impure"
HAS_SIDE_EFFECTS = "torch._inductor.ir:FallbackKernel.has_side_effects"


def _pure_custom(op) -> bool:
    return (_patching.is_custom_op(op) and not op._schema.is_mutable
            and _patching.op_effect(op) is None)


def _build(dynamic: bool):
    def build(current):
        original_is_impure = current(IS_IMPURE)

        def is_impure(op, *, args=None, kwargs=None, impure_random=True):
            if _pure_custom(op) and (not dynamic or _patching.has_free_symbols((args, kwargs))):
                return True
            return original_is_impure(op, args=args, kwargs=kwargs, impure_random=impure_random)

        replacements = {IS_IMPURE: is_impure}
        if dynamic:
            original_side_effects = current(HAS_SIDE_EFFECTS)

            def has_side_effects(self) -> bool:
                op = getattr(self, "op_overload", None)
                if _pure_custom(op) and _patching.has_free_symbols(list(self.inputs)):
                    return True
                return original_side_effects(self)

            replacements[HAS_SIDE_EFFECTS] = has_side_effects
        return replacements
    return build


FAULTS = Fault.twins(
    _build,
    " when an argument has symbolic sizes (plus the same rule in "
    "torch._inductor.ir.FallbackKernel.has_side_effects)",
    dynamic_targets=(HAS_SIDE_EFFECTS,),
    name="dead-pure-kept",
    bug_class=DEAD_PURE_KEPT,
    expected_kind="missed-dce",
    description=("torch._library.utils.is_impure reports pure custom ops as impure{scope}, "
                 "so FX DCE and Inductor's scheduler both keep dead calls"),
    targets=(IS_IMPURE,),
    quick=True,
)
