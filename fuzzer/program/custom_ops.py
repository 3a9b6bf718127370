"""The custom-op library: every operator dcefuzz registers, kept as source text.

Why text: a finding is only useful if its standalone ``repro.py`` runs exactly the
operators the fuzzer ran.  Each operator is therefore written once, as a snippet of
plain ``torch.library.custom_op`` code; this module executes the snippets to
register them in the fuzzing process, and ``repro`` pastes the very same snippets
into the script it writes.  There is no second copy to drift.

Every real implementation calls ``_hit`` with its call-site id, so the trace tells
the oracle which call sites ran (ground truth: a custom op runs its Python body at
run time in compiled code too, while its fake impl only runs at compile time).
Effectful operators also append an event with a copy of their tensor inputs.

Honesty rules every operator obeys (a compiler may rely on them, so the fuzzer must
too): outputs are fresh tensors, never aliases of inputs; ``mutates_args`` names
exactly the tensors the body writes; fake impls give the real outputs' metadata:
shape, dtype and strides.  Every output is contiguous, in the real impl and the fake
alike, because Inductor checks a fallback's output strides against its fake impl's
(``assert_size_stride``): a layout that follows a non-contiguous input would break
that promise and a failing check would be our bug, not the compiler's.
``tests/test_custom_ops.py`` runs ``torch.library.opcheck`` on every operator, with
every test it has by default, on empty, size-1 and size-2 dims and several layouts.
"""

from __future__ import annotations

import types
from dataclasses import dataclass

NAMESPACE = "dcefuzz"

PURE = "pure"
MUTATING = "mutating"
EFFECTFUL = "effectful"
#: what an op's author declares it does, which is all the compiler may rely on
DECLARATIONS = (PURE, MUTATING, EFFECTFUL)

#: Shared by every snippet: the run-time trace and effect registration that works
#: across torch releases (``CustomOpDef.register_effect`` appeared after the private
#: ``_register_effectful_op``; feature-detect rather than pin a release).
HEADER = '''\
from typing import Optional

import torch

TRACE = {"calls": [], "effects": []}


def _hit(op, site, *tensors, effect=False):
    """Record that call site `site` of `op` ran; effects keep a copy of their inputs."""
    TRACE["calls"].append((op, site))
    if effect:
        TRACE["effects"].append((op, site, tuple(t.detach().to("cpu", copy=True) for t in tensors)))


def _register_ordered(opdef):
    """Mark a custom op as an ORDERED side effect on any torch from 2.11 on."""
    if hasattr(opdef, "register_effect"):
        from torch._library.effects import EffectType
        opdef.register_effect(EffectType.ORDERED)
    else:
        from torch._higher_order_ops.effects import _EffectType, _register_effectful_op
        _register_effectful_op(opdef._opoverload, _EffectType.ORDERED)
'''


@dataclass(frozen=True)
class CustomOp:
    """One registered operator: its name, what it declares (pure, mutating or
    effectful) and its defining source."""

    name: str
    declaration: str
    source: str
    doc: str

    @property
    def qualname(self) -> str:
        return f"{NAMESPACE}::{self.name}"

    @property
    def returns(self) -> bool:
        """Whether the op returns a tensor (read off its declared signature)."""
        header = self.source.split(f"def {self.name}(", 1)[1].split(":\n", 1)[0]
        return not header.rstrip().endswith("-> None")


def _op(name: str, declaration: str, doc: str, source: str) -> CustomOp:
    return CustomOp(name=name, declaration=declaration, source=source.strip("\n") + "\n", doc=doc)


CUSTOM_OPS: tuple[CustomOp, ...] = (
    # ---- pure: mutates_args=(), no effect; the compiler may drop or repeat them.
    _op("p_sin", PURE, "elementwise sin, fresh output", '''
@torch.library.custom_op("dcefuzz::p_sin", mutates_args=())
def p_sin(x: torch.Tensor, site: int) -> torch.Tensor:
    _hit("p_sin", site)
    return torch.sin(x).contiguous()


@p_sin.register_fake
def _(x, site):
    return x.new_empty(x.shape)
'''),
    _op("p_mix", PURE, "two same-shape inputs combined elementwise", '''
@torch.library.custom_op("dcefuzz::p_mix", mutates_args=())
def p_mix(x: torch.Tensor, y: torch.Tensor, site: int) -> torch.Tensor:
    _hit("p_mix", site)
    return (x * 0.5 + torch.tanh(y)).contiguous()


@p_mix.register_fake
def _(x, y, site):
    return x.new_empty(x.shape)
'''),
    _op("p_rowsum", PURE, "reduction over the last dim: output rank drops by one", '''
@torch.library.custom_op("dcefuzz::p_rowsum", mutates_args=())
def p_rowsum(x: torch.Tensor, site: int) -> torch.Tensor:
    _hit("p_rowsum", site)
    return x.sum(-1).contiguous()


@p_rowsum.register_fake
def _(x, site):
    return x.new_empty(x.shape[:-1])
'''),
    _op("p_head", PURE, "first n rows as a fresh tensor; n is a symbolic size argument", '''
@torch.library.custom_op("dcefuzz::p_head", mutates_args=())
def p_head(x: torch.Tensor, n: int, site: int) -> torch.Tensor:
    _hit("p_head", site)
    return (x[:n] * 1.5).contiguous()


@p_head.register_fake
def _(x, n, site):
    return x.new_empty((n,) + tuple(x.shape[1:]))
'''),
    # ---- mutating: mutates_args non-empty; writes must reach program inputs.
    _op("m_addto", MUTATING, "a += b, returns None", '''
@torch.library.custom_op("dcefuzz::m_addto", mutates_args=("a",))
def m_addto(a: torch.Tensor, b: torch.Tensor, site: int) -> None:
    _hit("m_addto", site)
    a.add_(b)


@m_addto.register_fake
def _(a, b, site):
    return None
'''),
    _op("m_scale", MUTATING, "a = a * 0.5 + 1 in place, returns None", '''
@torch.library.custom_op("dcefuzz::m_scale", mutates_args=("a",))
def m_scale(a: torch.Tensor, site: int) -> None:
    _hit("m_scale", site)
    a.mul_(0.5).add_(1.0)


@m_scale.register_fake
def _(a, site):
    return None
'''),
    _op("m_shift", MUTATING,
        "row i of a += row i+1 of b, in order; returns a fresh tensor. If a compiler "
        "hands it one buffer for a and b, the rows read are already written", '''
@torch.library.custom_op("dcefuzz::m_shift", mutates_args=("a",))
def m_shift(a: torch.Tensor, b: torch.Tensor, site: int) -> torch.Tensor:
    _hit("m_shift", site)
    n = a.shape[0]
    for i in range(n):
        a[i] += 0.5 * b[(i + 1) % n]
    return (a * 2.0).contiguous()


@m_shift.register_fake
def _(a, b, site):
    return a.new_empty(a.shape)
'''),
    _op("m_cumrow", MUTATING, "running sum over rows of a, in place, order-dependent", '''
@torch.library.custom_op("dcefuzz::m_cumrow", mutates_args=("a",))
def m_cumrow(a: torch.Tensor, site: int) -> None:
    _hit("m_cumrow", site)
    for i in range(1, a.shape[0]):
        a[i] += 0.5 * a[i - 1]


@m_cumrow.register_fake
def _(a, site):
    return None
'''),
    _op("m_swap", MUTATING,
        "mutates two arguments, each from the other's old value; returns a fresh tensor", '''
@torch.library.custom_op("dcefuzz::m_swap", mutates_args=("a", "b"))
def m_swap(a: torch.Tensor, b: torch.Tensor, site: int) -> torch.Tensor:
    _hit("m_swap", site)
    old = a.clone()
    a.mul_(0.25).add_(b)
    b.sub_(old * 0.5)
    return old.sum(0).contiguous()


@m_swap.register_fake
def _(a, b, site):
    return a.new_empty(a.shape[1:])
'''),
    # ---- richer signatures (the "signatures" feature): several results, an optional
    # tensor, scalars of every kind, a list of tensors, undeclared writes, and a
    # result whose size only the data knows.  Pure ones carry their backward here.
    _op("p_pair", PURE, "two fresh results from one input (a multi-output op)", """
@torch.library.custom_op("dcefuzz::p_pair", mutates_args=())
def p_pair(x: torch.Tensor, site: int) -> tuple[torch.Tensor, torch.Tensor]:
    _hit("p_pair", site)
    return torch.sin(x).contiguous(), (x * x * 0.5).contiguous()


@p_pair.register_fake
def _(x, site):
    return x.new_empty(x.shape), x.new_empty(x.shape)


def _p_pair_setup(ctx, inputs, output):
    ctx.save_for_backward(inputs[0])


def _p_pair_backward(ctx, grad_sin, grad_square):
    x, = ctx.saved_tensors
    return grad_sin * torch.cos(x) + grad_square * x, None


p_pair.register_autograd(_p_pair_backward, setup_context=_p_pair_setup)
"""),
    _op("p_opt", PURE, "x * 0.5 plus tanh(y) when the optional y is given, else plus 1", """
@torch.library.custom_op("dcefuzz::p_opt", mutates_args=())
def p_opt(x: torch.Tensor, y: Optional[torch.Tensor], site: int) -> torch.Tensor:
    _hit("p_opt", site)
    return (x * 0.5 + (1.0 if y is None else torch.tanh(y))).contiguous()


@p_opt.register_fake
def _(x, y, site):
    return x.new_empty(x.shape)


def _p_opt_setup(ctx, inputs, output):
    ctx.has_y = inputs[1] is not None
    ctx.save_for_backward(inputs[1] if ctx.has_y else inputs[0])


def _p_opt_backward(ctx, grad):
    y, = ctx.saved_tensors
    return grad * 0.5, (grad * (1 - torch.tanh(y) ** 2) if ctx.has_y else None), None


p_opt.register_autograd(_p_opt_backward, setup_context=_p_opt_setup)
"""),
    _op("p_affine", PURE, "x * a + k, or x * a - k when flag is false: float, int and bool scalars", """
@torch.library.custom_op("dcefuzz::p_affine", mutates_args=())
def p_affine(x: torch.Tensor, a: float, k: int, flag: bool, site: int) -> torch.Tensor:
    _hit("p_affine", site)
    return (x * a + (k if flag else -k)).contiguous()


@p_affine.register_fake
def _(x, a, k, flag, site):
    return x.new_empty(x.shape)


def _p_affine_setup(ctx, inputs, output):
    ctx.a = inputs[1]


def _p_affine_backward(ctx, grad):
    return grad * ctx.a, None, None, None, None


p_affine.register_autograd(_p_affine_backward, setup_context=_p_affine_setup)
"""),
    _op("p_pos", PURE, "the positive elements, times 1.5: a result whose size the data decides", """
@torch.library.custom_op("dcefuzz::p_pos", mutates_args=())
def p_pos(x: torch.Tensor, site: int) -> torch.Tensor:
    _hit("p_pos", site)
    return (x[x > 0] * 1.5).contiguous()


@p_pos.register_fake
def _(x, site):
    n = torch.library.get_ctx().new_dynamic_size()
    return x.new_empty((n,))
"""),
    _op("m_list", MUTATING, "writes the second tensor of a list from the first: xs[1] = xs[1] * 0.5 + xs[0]", """
@torch.library.custom_op("dcefuzz::m_list", mutates_args=("xs",))
def m_list(xs: list[torch.Tensor], site: int) -> None:
    _hit("m_list", site)
    xs[1].mul_(0.5).add_(xs[0])


@m_list.register_fake
def _(xs, site):
    return None
"""),
    _op("m_unknown", MUTATING,
        'declares mutates_args="unknown" (every tensor may be written); writes a, returns a fresh tensor', """
@torch.library.custom_op("dcefuzz::m_unknown", mutates_args="unknown")
def m_unknown(a: torch.Tensor, b: torch.Tensor, site: int) -> torch.Tensor:
    _hit("m_unknown", site)
    a.add_(torch.sin(b))
    return (b * 2.0).contiguous()


@m_unknown.register_fake
def _(a, b, site):
    return b.new_empty(b.shape)
"""),
    # ---- effectful: registered ORDERED; must run, exactly once, in program order.
    _op("e_log", EFFECTFUL, "logs its input, returns None", '''
@torch.library.custom_op("dcefuzz::e_log", mutates_args=())
def e_log(x: torch.Tensor, site: int) -> None:
    _hit("e_log", site, x, effect=True)


@e_log.register_fake
def _(x, site):
    return None


_register_ordered(e_log)
'''),
    _op("e_tap", EFFECTFUL, "logs its input and returns a fresh function of it", '''
@torch.library.custom_op("dcefuzz::e_tap", mutates_args=())
def e_tap(x: torch.Tensor, site: int) -> torch.Tensor:
    _hit("e_tap", site, x, effect=True)
    return torch.cos(x).contiguous()


@e_tap.register_fake
def _(x, site):
    return x.new_empty(x.shape)


_register_ordered(e_tap)
'''),
)

BY_NAME: dict[str, CustomOp] = {op.name: op for op in CUSTOM_OPS}


#: honest backward formulas of the first pure ops, kept apart from their snippets so a
#: cache pair can register a wrong one (``fuzzer.cache.variants``): (saved inputs, gradient expressions per argument)
BACKWARD = {
    "p_sin": ("x, = ctx.saved_tensors", "grad * torch.cos(x), None"),
    "p_mix": ("y, = ctx.saved_tensors", "grad * 0.5, grad * (1 - torch.tanh(y) ** 2), None"),
    "p_rowsum": ("x, = ctx.saved_tensors", "grad.unsqueeze(-1).expand(x.shape).contiguous(), None"),
    "p_head": ("x, = ctx.saved_tensors",
               "torch.cat([grad * 1.5, grad.new_zeros((x.shape[0] - grad.shape[0],) + tuple(x.shape[1:]))]), "
               "None, None"),
}
_SAVED = {"p_sin": "inputs[0]", "p_mix": "inputs[1]", "p_rowsum": "inputs[0]", "p_head": "inputs[0]"}


def backward_source(name: str, scale: float = 1.0) -> str:
    """``register_autograd`` for pure op ``name``; ``scale`` != 1 makes its formula wrong."""
    saved, grads = BACKWARD[name]
    if scale != 1.0:
        grads = ", ".join(g if g == "None" else f"({g}) * {scale}" for g in _split(grads))
    return (f"def _{name}_setup(ctx, inputs, output):\n    ctx.save_for_backward({_SAVED[name]})\n\n\n"
            f"def _{name}_backward(ctx, grad):\n    {saved}\n    return {grads}\n\n\n"
            f"{name}.register_autograd(_{name}_backward, setup_context=_{name}_setup)\n")


def _split(expressions: str) -> list[str]:
    """Top-level comma-separated parts of an expression list."""
    parts, depth, cur = [], 0, ""
    for ch in expressions:
        depth += ch in "([" and 1 or (-1 if ch in ")]" else 0)
        if ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    return parts + [cur.strip()]


def with_backward(op: CustomOp) -> str:
    """An op's snippet with its honest backward, where it has one kept apart."""
    if op.name in BACKWARD:
        return op.source + "\n\n" + backward_source(op.name)
    return op.source


def source_for(names, replaced: dict | None = None, backward: bool = True) -> str:
    """The header plus the snippets of the named operators, in library order.

    ``replaced`` maps an op's name to the snippet to use instead of its own (a cache
    pair's declaration variant, ``fuzzer.cache.variants``); ``backward=False`` leaves
    out the backward formulas kept apart (a cache pair's library has them only when
    it takes gradients, as before they were part of the standard library).
    """
    wanted = set(names)
    unknown = wanted - set(BY_NAME)
    if unknown:
        raise KeyError(f"unknown custom ops: {sorted(unknown)}")
    replaced = replaced or {}
    parts = [HEADER] + [replaced.get(op.name, with_backward(op) if backward else op.source)
                        for op in CUSTOM_OPS if op.name in wanted]
    return "\n\n".join(parts)


def _register(source: str) -> types.ModuleType:
    """Execute a library's source once, in a module of its own, registering its ops."""
    module = types.ModuleType("fuzzer._registered_ops")
    code = compile(source, "<dcefuzz oplib>", "exec")
    exec(code, module.__dict__)
    return module


_installed: types.ModuleType | None = None


def install(source: str | None = None) -> types.ModuleType:
    """Register the op library in this process, once: the standard one, or ``source``.

    A process registers its ops once and for good (torch has no way to redefine an
    op), so the library is installed on first use rather than at import: the side
    processes of a cache pair (``fuzzer.cache``) install a *variant* of it under the
    same names before anything else asks for it.
    """
    global _installed
    if _installed is None:
        _installed = _register(source if source is not None else source_for(BY_NAME))
    elif source is not None:
        raise RuntimeError("the op library is already registered in this process")
    return _installed


def __getattr__(name: str):
    # ``LIB``: the namespace the generated programs run in, every op callable by its
    # bare name, plus ``torch`` and ``TRACE``; registered on first use (``install``)
    if name == "LIB":
        return install()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def reset_trace() -> None:
    lib = install()
    lib.TRACE["calls"].clear()
    lib.TRACE["effects"].clear()


def take_trace() -> tuple[list, list]:
    """Return and clear (calls, effects) recorded since the last reset."""
    lib = install()
    calls = list(lib.TRACE["calls"])
    effects = list(lib.TRACE["effects"])
    reset_trace()
    return calls, effects
