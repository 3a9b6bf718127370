"""effect-dropped: an ORDERED custom op is treated as pure, so DCE deletes it.

Why this is realistic.  An effectful custom op survives compilation because of
two cooperating checks: functionalization threads it through an effect token
(``handle_effects`` in ``torch/_higher_order_ops/effects.py`` emits
``with_effects``), and FX DCE asks ``torch._library.utils.is_impure``, which
consults the effect registry.  Effects registered through
``CustomOpDef.register_effect`` live in ``torch._library.simple_registry``; a
regression in how library-defined ops are looked up (wrong key, entry not
consulted) makes such an op look like a plain pure call to both checks at once.
A call with an unused result (``e_log``) is then erased by ``eliminate_dead_code``
and never runs.

The patch sits on both checks rather than on the registry lookup
``_get_effect`` alone because on torch 2.13 tracing ``with_effects`` also adds
the op to ``torch.fx.node._side_effectful_functions`` for the rest of the
process, so a registry-only fault would stop working after the first clean
compile of the same op.

The dynamic variant fires only when an argument has symbolic sizes, like a
regression confined to the symbolic-shape path (cf. the disabled upstream test
``test_custom_op_dce_dynamic_shapes``): ``is_impure`` sees the FX argument nodes
and ``handle_effects`` the fake tensors, so both can tell.

Patched: ``torch._higher_order_ops.effects.handle_effects`` (looked up by
``FunctionalTensorMode`` at call time) and ``torch._library.utils.is_impure``
(looked up by ``Node.is_impure`` and Inductor at call time).
"""

from __future__ import annotations

from fuzzer.faults import _patching
from fuzzer.faults._fault import EFFECT_DROPPED, Fault

HANDLE_EFFECTS = "torch._higher_order_ops.effects:handle_effects"
IS_IMPURE = "torch._library.utils:is_impure"


def _effectful_custom(op) -> bool:
    return (_patching.is_custom_op(op) and not op._schema.is_mutable
            and _patching.op_effect(op) is not None)


def build_with(affected, forget=None):
    """The patch of both checks for the calls ``affected(op, args, kwargs)`` picks out at
    functionalization time; ``forget(op, args, kwargs)``, when given, is what
    ``is_impure`` asks instead (a scope known only while functionalizing, such as a
    training graph, is remembered for the rest of that compile)."""
    forget = forget or affected

    def build(current):
        original_handle = current(HANDLE_EFFECTS)
        original_is_impure = current(IS_IMPURE)

        def handle_effects(allow_token_discovery, tokens, op, args, kwargs):
            if not (_effectful_custom(op) and affected(op, args, kwargs)):
                return original_handle(allow_token_discovery, tokens, op, args, kwargs)
            # The bug: the op is redispatched as if it had no effect (no token).
            from torch._subclasses.functional_tensor import PythonFunctionalizeAPI

            ctx = PythonFunctionalizeAPI()
            unwrapped_args = ctx.unwrap_tensors(args)
            unwrapped_kwargs = ctx.unwrap_tensors(kwargs)
            with ctx.redispatch_to_next():
                out = op(*unwrapped_args, **unwrapped_kwargs)
            return ctx.wrap_tensors(out)

        def is_impure(op, *, args=None, kwargs=None, impure_random=True):
            if args is not None and _effectful_custom(op) and forget(op, args, kwargs):
                return False
            return original_is_impure(op, args=args, kwargs=kwargs, impure_random=impure_random)

        return {HANDLE_EFFECTS: handle_effects, IS_IMPURE: is_impure}
    return build


def _build(dynamic: bool):
    return build_with(lambda op, args, kwargs: not dynamic or _patching.has_free_symbols((args, kwargs)))


FAULTS = Fault.twins(
    _build, " when an argument has symbolic sizes",
    name="effect-dce",
    bug_class=EFFECT_DROPPED,
    expected_kind="effect-log",
    description=(
        "handle_effects (torch/_higher_order_ops/effects.py) calls an effectful custom op "
        "without an effect token and torch._library.utils.is_impure calls it pure{scope}, "
        "so FX DCE deletes calls whose result is unused"),
    targets=(HANDLE_EFFECTS, IS_IMPURE),
    quick=True,
)
