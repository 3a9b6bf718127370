"""Reversible monkeypatches of torch internals, and the predicates faults share.

A fault names the attributes it replaces as *targets* (``"module:Attr.path"``), so
that whether it applies to the running torch can be answered without patching
anything (:func:`missing`), and undo can put back exactly what was there: the raw
entry of the owner's ``__dict__`` (a ``classmethod`` object stays one), or no
entry at all when the attribute was inherited.

Patches live only in this process and only between ``install`` and undo.  While one
is installed the on-disk compile caches are off (a cached artifact compiled without
the fault would mask it; one compiled with it would leak it into later runs) and
dynamo forgets its compiled graphs on both edges for the same reason.
"""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

# the on-disk compile caches: a planted fault must not be hidden by an artifact
# compiled without it, nor leave one behind
from fuzzer.judge.observe import CACHE_SETTINGS
from fuzzer.judge.observe import caches_off as _caches_off

_MISSING = object()

#: Namespaces whose operators belong to torch itself.  Every fault but
#: ``index_put_overlap`` (an aten index write's lowering) and ``view_offset_added`` (an
#: aten ``as_strided``'s) misbehaves only for operators outside them, i.e. user ``torch.library`` custom ops: the regressions mimicked here
#: live in the custom-op paths.
TORCH_NAMESPACES = frozenset({
    "aten", "prims", "prim", "profiler", "inductor", "higher_order", "quantized",
    "_quantized", "_c10d_functional", "c10d_functional", "_dtensor", "debugprims",
    "rngprims", "fsdp", "streams", "_inductor_test",
})

#: (module, attribute, value while a fault is installed): the caches of whole
#: compiled artifacts off.  Those are keyed by graph and config, not by our patches,
#: so they could mask or leak a fault.  Kernel code caches stay on: they are keyed
#: by the generated source, which a fault changes when it changes anything.
#: (``force_disable_caches`` is not used: it also gives every compile a fresh temp
#: cache dir that Inductor keeps on disk whenever the compile fails, which over a
#: campaign of planted compile errors fills the disk.)


def split_target(target: str) -> tuple[str, list[str]]:
    module, _, path = target.partition(":")
    return module, path.split(".")


def resolve_owner(target: str) -> tuple[Any, str]:
    """The object holding the target's last attribute, and that attribute's name.

    Raises ``LookupError`` with a readable reason when any part is missing.
    """
    module_name, path = split_target(target)
    try:
        owner: Any = importlib.import_module(module_name)
    except ImportError as exc:
        raise LookupError(f"module {module_name} not importable ({exc})") from None
    for part in path[:-1]:
        if not hasattr(owner, part):
            raise LookupError(f"{module_name}.{'.'.join(path)} not found")
        owner = getattr(owner, part)
    if not hasattr(owner, path[-1]):
        raise LookupError(f"{module_name}.{'.'.join(path)} not found")
    return owner, path[-1]


def missing(targets, settings=CACHE_SETTINGS) -> str | None:
    """The first reason the targets cannot be patched in this torch, or None."""
    import torch

    for target in targets:
        try:
            resolve_owner(target)
        except LookupError as exc:
            return f"{exc} in torch {torch.__version__}"
    for module_name, attr, _ in settings:
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            return f"module {module_name} not importable in torch {torch.__version__}"
        if not hasattr(module, attr):
            return f"{module_name}.{attr} not found in torch {torch.__version__}"
    return None


def current(target: str) -> Any:
    """The target's value as code sees it (bound for a classmethod)."""
    owner, name = resolve_owner(target)
    return getattr(owner, name)


def raw(target: str) -> Any:
    """The target's own ``__dict__`` entry (a classmethod object stays one)."""
    owner, name = resolve_owner(target)
    return owner.__dict__.get(name, _MISSING) if hasattr(owner, "__dict__") else _MISSING


@dataclass
class _Saved:
    owner: Any
    name: str
    value: Any  # the raw __dict__ entry, or _MISSING when inherited


def apply(replacements: dict[str, Any]) -> Callable[[], None]:
    """Set every target to its replacement; return an undo (idempotent)."""
    saved: list[_Saved] = []
    try:
        for target, value in replacements.items():
            owner, name = resolve_owner(target)
            # Inherited attributes have no entry of their own: undo deletes ours.
            entry = owner.__dict__.get(name, _MISSING)
            saved.append(_Saved(owner, name, entry))
            setattr(owner, name, value)
    except BaseException:
        _restore(saved)
        raise
    done = False

    def undo() -> None:
        nonlocal done
        if not done:
            done = True
            _restore(saved)

    return undo


def _restore(saved: list[_Saved]) -> None:
    for s in reversed(saved):
        if s.value is _MISSING:
            delattr(s.owner, s.name)
        else:
            setattr(s.owner, s.name, s.value)


def caches_off() -> Callable[[], None]:
    """Turn the on-disk compile caches off; return an undo restoring the old values."""
    stack = contextlib.ExitStack()
    stack.enter_context(_caches_off())
    return stack.close


# ------------------------------------------------------------------ predicates

def is_custom_op(op: Any) -> bool:
    """A user ``torch.library`` operator overload (not one of torch's own)."""
    import torch

    return isinstance(op, torch._ops.OpOverload) and op.namespace not in TORCH_NAMESPACES


def op_effect(op: Any) -> Any:
    """The effect registered for ``op`` (None when pure or unknown)."""
    from torch._higher_order_ops.effects import _get_effect

    try:
        return _get_effect(op)
    except Exception:  # noqa: BLE001 - an op the registry can't name has no effect
        return None


def _mentions(value: Any, symbols: Callable[[Any], Any], ir_sizes: bool) -> bool:
    """Whether ``symbols`` finds any symbol in a value's (fake) tensors and SymInts, the
    nodes' ``meta["val"]`` of FX nodes and, with ``ir_sizes``, the ``get_size()`` of
    Inductor IR nodes, through any nesting of lists, tuples and dicts of those."""
    import torch

    if isinstance(value, (list, tuple)):
        return any(_mentions(v, symbols, ir_sizes) for v in value)
    if isinstance(value, dict):
        return any(_mentions(v, symbols, ir_sizes) for v in value.values())
    if isinstance(value, torch.fx.Node):
        return _mentions(value.meta.get("val"), symbols, ir_sizes)
    if isinstance(value, (torch.Tensor, torch.SymInt)):
        return bool(symbols(value))
    get_size = getattr(value, "get_size", None)
    if ir_sizes and callable(get_size):
        try:
            return any(bool(getattr(d, "free_symbols", ())) for d in get_size())
        except Exception:  # noqa: BLE001 - IR nodes without a size (e.g. NoneLayout)
            return False
    return False


def has_free_unbacked_symbols(value: Any) -> bool:
    """Whether a value's sizes mention a size only the data knows (``u0``): the same
    walk as :func:`has_free_symbols`, for unbacked symbols (IR nodes' sizes unread)."""
    from torch.fx.experimental.symbolic_shapes import free_unbacked_symbols

    return _mentions(value, free_unbacked_symbols, ir_sizes=False)


def has_free_symbols(value: Any) -> bool:
    """Whether a value's sizes mention a shape symbol.

    Understands what the patched passes hold: (fake) tensors and SymInts, FX nodes
    (through ``meta["val"]``), Inductor IR nodes (through ``get_size()``), and any
    nesting of lists, tuples and dicts of those.
    """
    from torch.fx.experimental.symbolic_shapes import free_symbols

    return _mentions(value, free_symbols, ir_sizes=True)
