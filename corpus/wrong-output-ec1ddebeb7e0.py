"""dcefuzz finding wrong-output-ec1ddebeb7e0: wrong-output

[wrong-output] binding 0, output 0: values differ at 1 of 2 elements; worst at flat index 1: compiled 2.41513562 eager 1.81889188 fp64 1.81889188 (error 0.596, allowed 0.000206)

Found with torch 2.13.0+cpu on cpu.
Run: python wrong-output-ec1ddebeb7e0.py [cpu|cuda]   (default: cpu)
Exit 1: reproduces, 0: does not, 125: cannot judge (for git bisect run).
"""

from __future__ import annotations


import sys

sys.excepthook = lambda kind, value, tb: (
    __import__("traceback").print_exception(kind, value, tb),
    print(f"cannot judge: {kind.__name__} (exit 125)", flush=True),
    __import__("os")._exit(125))


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


@torch.library.custom_op("dcefuzz::m_unknown", mutates_args="unknown")
def m_unknown(a: torch.Tensor, b: torch.Tensor, site: int) -> torch.Tensor:
    _hit("m_unknown", site)
    a.add_(torch.sin(b))
    return (b * 2.0).contiguous()


@m_unknown.register_fake
def _(a, b, site):
    return b.new_empty(b.shape)


@torch.library.custom_op("dcefuzz::e_tap", mutates_args=())
def e_tap(x: torch.Tensor, site: int) -> torch.Tensor:
    _hit("e_tap", site, x, effect=True)
    return torch.cos(x).contiguous()


@e_tap.register_fake
def _(x, site):
    return x.new_empty(x.shape)


_register_ordered(e_tap)


import torch

#: Compiled may carry this many times eager's own error against fp64 at the same
#: element.  ``same`` uses 3.0 for tensors under 1000 elements (2.0 for larger
#: float32 ones, whose RMSE averages noise away); per element nothing is averaged,
#: so the larger factor.
ERROR_MULTIPLIER = 3.0
#: Relative slack on the element's fp64 value: ``same``'s default ``tol`` (1e-4),
#: about 800 float32 ulps, room for a different but legitimate float32 formula.
RELATIVE_SLACK = 1e-4
#: Absolute slack: ``same``'s ``tol / 10`` (1e-5), for elements at or near zero.
ABSOLUTE_SLACK = 1e-5
#: Floor proportional to the tensor's magnitude (max |fp64| over judged elements):
#: reassociating a float32 reduction moves its result by some ulps of its
#: *summands*, which for a cancelling element (result much smaller than its terms)
#: is far beyond RELATIVE_SLACK of the result; the tensor's largest value stands in
#: for the summands' scale.  64 * float32 eps (~7.6e-6) is the worst-case bound for
#: reordering a sum of ~64 such terms and the typical (random-walk, ~sqrt(n) ulps)
#: error for thousands, yet stays ~1300x below a 1% error at the tensor's scale.
SCALE_SLACK = 64 * torch.finfo(torch.float32).eps
#: ``torch.testing.assert_close``'s float32 default rtol: compiled this close to
#: eager at an element (about 10 ulps) is acceptable whatever the reference says.
RTOL_CLOSE = 1.3e-6
#: ``torch.testing.assert_close``'s float32 default atol, the same test's floor near 0.
ATOL_CLOSE = 1e-5


#: The float16 and bfloat16 counterparts of (RTOL_CLOSE, ATOL_CLOSE, RELATIVE_SLACK,
#: SCALE_SLACK): ``assert_close``'s defaults for the dtype (about two ulps), two ulps
#: of slack on the fp64 value, and, only where no noisy reference could be made, 4
#: ulps of the tensor's magnitude for a cancelling element.  With noisy references
#: (``noisy``) the allowance of each element is scaled by what rounding carries to
#: it instead: a compiled kernel keeps float32 between ops where eager rounds after
#: each one, so compiled is mostly nearer the reference than eager, and a cancelling
#: element (small, made of large terms) gets the room its terms' rounding needs,
#: while a small element made of small terms gets little.
LOW_PRECISION = {
    torch.float16: (1e-3, 1e-5, 2 * torch.finfo(torch.float16).eps, 4 * torch.finfo(torch.float16).eps),
    torch.bfloat16: (1.6e-2, 1e-5, 2 * torch.finfo(torch.bfloat16).eps, 4 * torch.finfo(torch.bfloat16).eps),
}


def is_fixed(dtype) -> bool:
    """A dtype no program computes in: integers, bool, float8 (its values are exact)."""
    return not dtype.is_floating_point or dtype.itemsize == 1


def fixed_difference(eager, compiled):
    """None when a fixed-dtype ``compiled`` equals ``eager`` element for element (NaN
    equal to NaN), else a one-line reason."""
    e = eager.detach().to("cpu").flatten()
    c = compiled.detach().to("cpu").flatten()
    if e.dtype.is_floating_point:
        e, c = e.to(torch.float32), c.to(torch.float32)
        differ = ~((e == c) | (torch.isnan(e) & torch.isnan(c)))
    else:
        differ = e != c
    if not bool(differ.any()):
        return None
    i = int(differ.nonzero()[0])
    return (f"values differ at {int(differ.sum())} of {e.numel()} elements of a {str(eager.dtype).removeprefix('torch.')} "
            f"tensor (compared exactly); first at flat index {i}: compiled {c[i].item()} eager {e[i].item()}")


def unit_roundoff(dtype) -> float:
    """Half an ulp of 1.0: the largest relative error of one rounding to ``dtype``."""
    return torch.finfo(dtype).eps / 2


def close_tolerances(dtype) -> tuple[float, float]:
    """(rtol, atol) of ``torch.testing.assert_close`` for ``dtype``: this close is close."""
    if dtype in LOW_PRECISION:
        return LOW_PRECISION[dtype][:2]
    return RTOL_CLOSE, ATOL_CLOSE


def tensor_difference(ref64, eager, compiled,
                      multiplier=ERROR_MULTIPLIER, rel=RELATIVE_SLACK, abs_=ABSOLUTE_SLACK,
                      scale_slack=SCALE_SLACK, rtol_close=RTOL_CLOSE, atol_close=ATOL_CLOSE,
                      noisy=()):
    """None when ``compiled`` is acceptable, else a one-line reason.

    Element k (finite in ref, eager and compiled) is acceptable when
    ``|c-e| <= atol_close + rtol_close*|e|`` or
    ``|c-r| <= multiplier*|e-r| + rel*|r| + scale_slack*max|r| + abs_``.
    In float16 and bfloat16, given ``noisy`` references (the float64 program with
    the dtype's rounding made up after every op, ``observe.NoisyReference``), the
    second rule reads ``|c-r| <= multiplier*max(|e-r|, |n-r| for each n) + rel*|r| + abs_``:
    the room at each element is what rounding can carry there, not a share of the
    tensor's largest value.
    """
    if tuple(compiled.shape) != tuple(eager.shape):
        return f"shape {tuple(compiled.shape)} != eager {tuple(eager.shape)}"
    if compiled.dtype != eager.dtype:
        return f"dtype {compiled.dtype} != eager {eager.dtype}"
    if eager.numel() == 0:
        return None
    if is_fixed(eager.dtype):
        return fixed_difference(eager, compiled)
    spread = None
    if eager.dtype in LOW_PRECISION:
        rtol_close, atol_close, rel, scale_slack = LOW_PRECISION[eager.dtype]
        usable = [n for n in noisy if tuple(n.shape) == tuple(eager.shape)]
        if usable:
            scale_slack = 0.0
            r64 = ref64.detach().to("cpu", torch.float64).flatten()
            spread = torch.stack([(n.detach().to("cpu", torch.float64).flatten() - r64).abs()
                                  for n in usable]).amax(0)
    r = ref64.detach().to("cpu", torch.float64).flatten()
    e = eager.detach().to("cpu", torch.float64).flatten()
    c = compiled.detach().to("cpu", torch.float64).flatten()
    fe, fc, fr = torch.isfinite(e), torch.isfinite(c), torch.isfinite(r)
    same_nonfinite = (torch.isnan(e) & torch.isnan(c)) | (~fe & ~fc & (e == c))
    odd = (fe != fc) | (~fe & ~same_nonfinite)
    # only where eager itself matches the fp64 reference's finiteness is eager trusted
    trusted = odd & (fe == fr)
    if bool(trusted.any()):
        i = int(trusted.nonzero()[0])
        return (f"non-finite mismatch at flat index {i}: compiled {c[i].item()} "
                f"vs eager {e[i].item()}")
    both = fe & fc & fr
    if not bool(both.any()):
        return None
    idx = both.nonzero().flatten()
    r, e, c = r[idx], e[idx], c[idx]
    close = (c - e).abs() <= atol_close + rtol_close * e.abs()
    err = (c - r).abs()
    own = (e - r).abs()
    if spread is not None:
        own = torch.maximum(own, torch.nan_to_num(spread[idx], nan=0.0, posinf=0.0))
    allowed = (multiplier * own + rel * r.abs()
               + scale_slack * r.abs().max() + abs_)
    bad = ~close & (err > allowed)
    if not bool(bad.any()):
        return None
    n = int(bad.sum())
    worst = int(torch.where(bad, err / allowed, torch.zeros_like(err)).argmax())
    i = int(idx[worst])
    return (f"values differ at {n} of {int(both.sum())} elements; worst at flat index {i}: "
            f"compiled {c[worst].item():.9g} eager {e[worst].item():.9g} "
            f"fp64 {r[worst].item():.9g} (error {err[worst].item():.3g}, "
            f"allowed {allowed[worst].item():.3g})")


def bitwise_equal(a, b):
    """Exact equality, NaN equal to NaN: how eager is checked against itself."""
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    return bool(torch.equal(a, b) or torch.allclose(a, b, rtol=0, atol=0, equal_nan=True))


def agrees(expected, got) -> bool:
    """``got`` is ``expected`` up to ``assert_close``'s tolerances for its dtype: the
    same shape and dtype, the same non-finite pattern, and every finite element within
    ``atol + rtol * |expected|``.  This is all that can be asked where the float64
    reference took another path and so says nothing of the error one may expect."""
    if tuple(got.shape) != tuple(expected.shape) or got.dtype != expected.dtype:
        return False
    if got.numel() == 0:
        return True
    if is_fixed(got.dtype):
        return fixed_difference(expected, got) is None
    rtol, atol = close_tolerances(got.dtype)
    a = expected.detach().to("cpu", torch.float64).flatten()
    b = got.detach().to("cpu", torch.float64).flatten()
    fa, fb = torch.isfinite(a), torch.isfinite(b)
    if bool((fa != fb).any()) or not bool(((a == b) | torch.isnan(a) & torch.isnan(b) | fa).all()):
        return False
    return bool(((b - a).abs()[fa] <= atol + rtol * a.abs()[fa]).all())


import torch

#: the ops that move or select data without rounding it: a noisy reference leaves
#: their results as they are (``NoisyReference``)
EXACT_OPS = frozenset({
    "aten.clone", "aten.copy_", "aten._to_copy", "aten.masked_select", "aten.index", "aten.slice",
    "aten.select", "aten.cat", "aten.stack", "aten.detach", "aten.alias", "aten.expand", "aten.zeros_like",
    "aten.new_zeros", "aten.new_empty", "aten.empty_like", "aten.lift_fresh", "aten.t", "aten.transpose",
    "aten.unsqueeze", "aten.view", "aten._unsafe_view", "aten.narrow", "aten.relu", "aten.neg",
})


def modes():
    """The dispatch modes the eager reference runs use (built on first use: torch's
    ``TorchDispatchMode``)."""
    from torch._ops import HigherOrderOperator
    from torch.utils._python_dispatch import TorchDispatchMode

    class PathRecorder(TorchDispatchMode):
        """Records the path a run takes: each op's name and the shapes it returns, and
        the ints and bools it decides (``.item()``, a ``torch.cond`` predicate).  Two
        runs of one program on one binding that record the same path took the same
        branches and sizes from data."""

        supports_higher_order_operators = True

        def __init__(self) -> None:
            super().__init__()
            self.path: list = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            if isinstance(func, HigherOrderOperator):
                pred = args[0] if args else None
                decided = bool(pred) if isinstance(pred, torch.Tensor) and pred.numel() == 1 else None
                self.path.append((func.name(), decided))
                return func(*args, **(kwargs or {}))
            out = func(*args, **(kwargs or {}))
            self.path.append((str(func.overloadpacket), _shape_of(out)))
            return out

    class NoisyReference(PathRecorder):
        """A float64 run with the rounding of a low precision made up: every result of
        an op that computes (not one that only moves data) is multiplied in place by
        ``1 + u``, ``u`` uniform in ``[-unit, unit]`` from a seeded generator.  How far
        such a run lands from the exact reference at an element is how far rounding
        errors can carry there: what can cancel into that element."""

        def __init__(self, unit: float, seed: int) -> None:
            super().__init__()
            self.unit = unit
            self.generator = torch.Generator().manual_seed(seed)

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            out = super().__torch_dispatch__(func, types, args, kwargs)
            if isinstance(func, HigherOrderOperator) or str(func.overloadpacket) in EXACT_OPS:
                return out
            schema = getattr(func, "_schema", None)
            if schema is not None and any(r.alias_info is not None and not r.alias_info.is_write
                                          for r in schema.returns):
                return out  # a view: its base was perturbed where it was computed
            # what it returns, and what it writes (a mutating custom op returns nothing)
            written = [a for a, arg in zip(args, schema.arguments if schema is not None else ())
                       if arg.alias_info is not None and arg.alias_info.is_write]
            for t in _tensors([out, written]):
                if t.is_floating_point() and t.numel():
                    noise = torch.rand(t.shape, generator=self.generator, dtype=torch.float64)
                    t.mul_((noise * 2 - 1).mul_(self.unit).add_(1).to(device=t.device, dtype=t.dtype))
            return out

    return PathRecorder, NoisyReference


def _tensors(value) -> list:
    """The distinct tensors in a result or argument list (nested lists too)."""
    if isinstance(value, torch.Tensor):
        return [value]
    found: list = []
    for v in value if isinstance(value, (tuple, list)) else ():
        found += [t for t in _tensors(v) if not any(t is u for u in found)]
    return found


def _shape_of(value):
    if isinstance(value, torch.Tensor):
        return tuple(value.shape)
    if isinstance(value, bool) or isinstance(value, int):
        return value
    if isinstance(value, (tuple, list)):
        return tuple(_shape_of(v) for v in value)
    return None


import re

#: modules that raise on behalf of whoever called them (a guard the shape environment
#: cannot decide, a ``torch._check``, a tree that does not match): an error raised in
#: them is placed at the frame that called into them, the code that asked for what
#: could not be done (each with its submodules; ``torch`` itself, whose ``_check``
#: and ``sym_*`` raise for their callers, without them)
RAISING_HELPERS = ("torch.fx.experimental.symbolic_shapes", "torch.fx.experimental.sym_node",
                   "torch.fx.experimental.recording", "torch.utils._sympy", "torch._prims_common",
                   "torch.utils._pytree", "torch._dynamo.exc", "torch._logging", "torch.utils._traceback")
#: modules that run other code (an op's dispatch into C++, fake tensors' meta
#: kernels, an FX interpreter, a module call, a counting decorator): an error that
#: surfaces in them was raised below Python, or in code that is not torch's, so no
#: frame says what raised it; the frame that called into them is its place, and its
#: message says which error it is
MACHINERY = ("torch._ops", "torch._subclasses", "torch.fx.interpreter", "torch.fx._symbolic_trace",
             "torch.fx.graph_module", "torch.fx.experimental.proxy_tensor", "torch.fx.experimental._backward_state",
             "torch.nn.modules.module", "torch.utils._stats", "torch.utils._python_dispatch",
             "torch._dynamo.eval_frame", "torch._compile", "torch._library", "torch.autograd.function")
#: exceptions that only wrap another: torch keeps the wrapped one as
#: ``inner_exception``, as the cause, or (raised ``from None``) as the context
WRAPPERS = frozenset({"BackendCompilerFailed", "InductorError", "LoweringException", "InternalTorchDynamoError",
                      "TorchRuntimeError", "Unsupported"})
#: how a bug class names an error by where it was raised
SITE_PREFIX = "raised "
#: digits in a function's name are a generated graph's number (``false_graph_0``)
_DIGITS = re.compile(r"\d+")


def _inner(exc: BaseException) -> BaseException:
    """The exception torch's wrappers wrap (``WRAPPERS``), at the bottom of them.

    Only a wrapper is looked through: an error raised ``from`` another that is not a
    wrapper (fx's "Expected positional argument" from a ``StopIteration``) is the
    error, and what it came from is its mechanism.
    """
    seen = set()
    while type(exc).__name__ in WRAPPERS and id(exc) not in seen:
        seen.add(id(exc))
        inner = getattr(exc, "inner_exception", None) or exc.__cause__ or exc.__context__
        if not isinstance(inner, BaseException):
            break
        exc = inner
    return exc


def _in(module: str, prefixes: tuple[str, ...]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in prefixes)


def raising_frame(exc: BaseException):
    """The frame that raised ``exc`` as a bug class places it, with what it says:
    (the wrapped exception, its frame, whether it was raised below Python), or None
    where no frame of torch is in its traceback.

    The exception is the wrapped one (what an ``InductorError`` or a
    ``LoweringException`` wraps: ``_inner``); the frame is the innermost of torch
    outside ``RAISING_HELPERS`` and ``MACHINERY``.  It is raised below Python when the
    innermost frame is not torch's, or is machinery's (raised in C++, or in our ops).
    """
    inner = _inner(exc)
    frames = []
    tb = inner.__traceback__ or exc.__traceback__
    while tb is not None:
        frames.append(tb.tb_frame)
        tb = tb.tb_next
    modules = [str(f.f_globals.get("__name__", "")) for f in frames]
    ours = [m == "torch" or m.startswith("torch.") for m in modules]
    for frame, module, torch_code in zip(reversed(frames), reversed(modules), reversed(ours)):
        if not torch_code or module == "torch" or _in(module, RAISING_HELPERS) or _in(module, MACHINERY):
            continue
        below_python = not ours[-1] or _in(modules[-1], MACHINERY)
        return inner, frame, below_python
    return None


def raised_at(exc: BaseException) -> tuple[str, str]:
    """Where ``exc`` was raised, as a bug class names it, and the message that must
    go with it: (``raised <Type> in <package>:<function>``, a message or ""), or
    ("", "") where no frame of torch is in its traceback.

    The type is the wrapped exception's and the place its raising frame's
    (``raising_frame``), as its top-level package and its function's qualified
    name: no file and no line, so a function moved inside
    its package, or lines added above it, leave the class as it was, while the same
    assertion in two passes, or one guard asked for by two callers, are two classes.
    An error raised in Python by torch's own code is known by its place alone (its
    message holds the program's sizes and names); one that surfaced in machinery
    (raised in C++, or in our ops) keeps its first message line too, since many
    different checks below Python surface at one place.
    """
    found = raising_frame(exc)
    if found is None:
        return "", ""
    inner, frame, below_python = found
    module = str(frame.f_globals.get("__name__", ""))
    package = ".".join(module.split(".")[:2])
    code = frame.f_code
    function = _DIGITS.sub("#", getattr(code, "co_qualname", code.co_name))
    message = (str(inner).strip().splitlines() or [""])[0] if below_python else ""
    return f"{SITE_PREFIX}{type(inner).__name__} in {package}:{function}", message


from dataclasses import dataclass

import torch


@dataclass(frozen=True)
class Graph:
    """One graph Dynamo handed its backend: the targets it calls, the higher-order ops
    among them that reach the backend, and the call sites its runtime asserts read.

    A runtime assert (``aten._assert_scalar`` on a size from data, ``u0 >= 0``) is
    side-effectful (``torch.fx.node._side_effectful_functions``), so dead-code
    elimination keeps it and every node it reads: the custom-op call whose result's
    size it checks, and the calls that call's operands come from.  Keeping those calls
    is torch's design (with ``do_not_emit_runtime_asserts`` the graph has no assert and
    Inductor removes them), so ``contract.check_dead_calls`` allows it."""

    ops: tuple
    hops: tuple
    asserted: tuple = ()


#: the targets by which Dynamo's graph checks at run time what it assumed of a size
#: from data (``insert_deferred_runtime_asserts``), as ``str(target)`` names them
RUNTIME_ASSERTS = frozenset({"aten._assert_scalar.default", "aten._assert_async.msg", "aten._assert_async.default",
                             "aten.sym_constrain_range.default", "aten.sym_constrain_range_for_size.default"})


def _site_of(node) -> int | None:
    """The ``site`` argument of a custom-op call node (None: the op takes none)."""
    target = node.target
    schema = getattr(getattr(target, "default", target), "_schema", None)
    if schema is None:
        return None
    for k, arg in enumerate(schema.arguments):
        if arg.name == "site":
            site = node.kwargs.get("site", node.args[k] if k < len(node.args) else None)
            return site if isinstance(site, int) else None
    return None


def _asserted_sites(graph) -> tuple:
    """The call sites some runtime assert of ``graph`` reads, directly or through the
    values it is computed from."""
    seen, todo = set(), [n for n in graph.nodes if n.op == "call_function" and str(n.target) in RUNTIME_ASSERTS]
    sites = set()
    while todo:
        node = todo.pop()
        if node in seen:
            continue
        seen.add(node)
        if node.op == "call_function":
            site = _site_of(node)
            if site is not None:
                sites.add(site)
        todo.extend(node.all_input_nodes)
    return tuple(sorted(sites))


class GraphLog:
    """The graphs Dynamo hands a backend in this process, in order.

    Dynamo calls ``OutputGraph.call_user_compiler`` with each graph it captured; the
    log wraps it (once per process) and keeps what the graph calls.  Dynamo then
    inlines a region (``invoke_subgraph``) used once when
    ``inline_single_use_invoke_subgraph`` is on, and every region when
    ``inline_invoke_subgraph`` is: the log counts a region only where it survives.
    On a torch without that method nothing is recorded (``observed`` is False).
    """

    def __init__(self) -> None:
        self.graphs: list[Graph] = []
        self.observed = False

    def install(self) -> None:
        if self.observed:
            return
        try:
            from torch._dynamo.output_graph import OutputGraph
        except ImportError:  # pragma: no cover - a torch without Dynamo's output graph
            return
        original = getattr(OutputGraph, "call_user_compiler", None)
        if original is None:
            return
        log = self

        def call_user_compiler(self, gm, example_inputs):
            log.graphs.append(_graph_of(gm))
            return original(self, gm, example_inputs)

        OutputGraph.call_user_compiler = call_user_compiler
        self.observed = True


GRAPHS = GraphLog()


def _graph_of(gm) -> Graph:
    from torch._ops import HigherOrderOperator

    config = torch._dynamo.config
    ops, hops, regions = [], [], []
    for node in gm.graph.nodes:
        if node.op != "call_function":
            continue
        target = node.target
        if isinstance(target, HigherOrderOperator):
            ops.append(target.name())
            if target.name() == "invoke_subgraph":
                regions.append(str(node.args[1]))
            else:
                hops.append(target.name())
        else:
            ops.append(getattr(target, "__name__", str(target)) if callable(target) else str(target))
    if regions and not getattr(config, "inline_invoke_subgraph", False):
        single = getattr(config, "inline_single_use_invoke_subgraph", False)
        if not single or any(regions.count(r) > 1 for r in regions):
            hops.append("invoke_subgraph")
    return Graph(tuple(ops), tuple(sorted(set(hops))), _asserted_sites(gm.graph))


import contextlib
import importlib
import traceback
from dataclasses import dataclass, field

import torch


COMPILE = "compile"
RUNTIME = "runtime"

#: why a compiled run did not run wholly as compiled code
GRAPH_BREAK = "graph-break"
SKIPPED_FRAME = "skipped-frame"
RECOMPILE_LIMIT = "recompile-limit"
NO_GRAPH = "no-graph"
#: the compiler declined the program for what it asked (a dim marked dynamic that
#: the program specialises, a guard on a size marked unbacked): ``contract.refusal``
REFUSED = "refused"
#: a region (``nested_compile_region``) or ``torch.cond`` the program asked for is
#: not in the graphs Dynamo handed its backend: Dynamo inlined it, so the
#: higher-order op was never compiled
HOP_INLINED = "hop-inlined"
#: the float64 reference took another path than eager (a size from data, a branch):
#: it vouches for nothing on that binding, and what it cannot vouch for is unjudged
REFERENCE_DIVERGED = "reference-diverged"
UNTESTED_REASONS = (GRAPH_BREAK, SKIPPED_FRAME, RECOMPILE_LIMIT, NO_GRAPH, REFUSED, HOP_INLINED,
                    REFERENCE_DIVERGED)
#: a graph break the program asked for (``torch._dynamo.graph_break()``): the parts
#: on either side are compiled, so it leaves nothing untested
REQUESTED_BREAK = "requested-break"
REQUESTED_BREAK_MESSAGE = "Call to `torch._dynamo.graph_break()`"


#: the on-disk compile caches (Inductor's FX graph cache, AOTAutograd's cache) and
#: the value that turns each off: a fresh compile must not be served from them
CACHE_SETTINGS: tuple[tuple[str, str, bool], ...] = (
    ("torch._inductor.config", "fx_graph_cache", False),
    ("torch._functorch.config", "enable_autograd_cache", False),
)


@contextlib.contextmanager
def caches_off():
    """Compile without reading or writing the on-disk compile caches.

    A confirmation or replay that a cached artifact could serve would only prove
    the cache holds what an earlier compile wrote: the divergence must come from a
    compile made now.
    """
    old = []
    try:
        for module_name, attr, value in CACHE_SETTINGS:
            try:
                module = importlib.import_module(module_name)
            except ImportError:  # a torch without that cache
                continue
            if hasattr(module, attr):
                old.append((module, attr, getattr(module, attr)))
                setattr(module, attr, value)
        yield
    finally:
        for module, attr, value in reversed(old):
            setattr(module, attr, value)


#: the values an integer input is drawn from, by dtype: a byte's whole range (a
#: quantiser's codes), and small numbers for wider integers (counts, sums of codes)
INTEGER_RANGES = {"bool": (0, 2), "uint8": (0, 256), "int8": (-128, 128)}
WIDE_INTEGER_RANGE = (-64, 64)


def fixed_tensor(size, dtype: str, g) -> torch.Tensor:
    """A CPU tensor of a fixed dtype (an integer, bool or float8 one) drawn from
    generator ``g``: integers uniform in their range, float8 the standard normal's
    values rounded."""
    kind = getattr(torch, dtype)
    if kind.is_floating_point:
        return torch.randn(size, generator=g, dtype=torch.float32).to(kind)
    low, high = INTEGER_RANGES.get(dtype, WIDE_INTEGER_RANGE)
    return torch.randint(low, high, tuple(size), generator=g, dtype=torch.int64).to(kind)


def draw_inputs(shapes, seed: int, device: str, dtype=torch.float32, strided=(), reference=False,
                aliases=(), fixed=()) -> list:
    """The inputs of one run: standard normal from ``seed``, drawn on the CPU in float32
    whatever the device, so every device and dtype start from the same numbers; cast
    to the program's ``dtype``, and for the float64 reference up from those values.
    An input whose index is in ``strided`` is handed over with its last dim strided
    by 2 (the same values, not contiguous); for each ``(k, j)`` of ``aliases`` input
    k is a view of the whole of input j (its own draw is discarded).  For each
    ``(k, name)`` of ``fixed`` input k has that fixed dtype (``fixed_tensor``), the
    same in the reference: it is not the program's to compute in."""
    g = torch.Generator().manual_seed(seed)
    own = dict(fixed)
    out = []
    for k, size in enumerate(shapes):
        if k in own:
            out.append(fixed_tensor(size, own[k], g).to(device))
            continue
        x = torch.randn(size, generator=g, dtype=torch.float32).to(dtype)
        x = x.to(device=device, dtype=torch.float64 if reference else dtype)
        if k in strided:
            wide = x.new_zeros(tuple(size[:-1]) + (2 * size[-1],))
            x = wide[..., ::2].copy_(x)
        out.append(x)
    for k, j in aliases:
        out[k] = out[j].view(out[j].shape)
    return out


@dataclass(frozen=True)
class Failure:
    """An exception raised by a run, with the stage it was raised in and where
    (``raised_at``)."""

    type: str
    message: str
    stage: str
    traceback: str = ""
    #: where it was raised, and the message that goes with that (``raised_at``)
    site: str = ""
    site_message: str = ""

    def line(self) -> str:
        """The type and first message line; a wrapper's first line ("backend='inductor'
        raised:") names no error, so the line it introduces is taken with it."""
        lines = [ln.strip() for ln in self.message.strip().splitlines() if ln.strip()]
        first = lines[0] if lines else ""
        if first.endswith("raised:") and len(lines) > 1:
            first = f"{first} {lines[1]}"
        return f"{self.type}: {first}"[:500]


@dataclass(frozen=True)
class Counts:
    """A snapshot of Dynamo's counters that say what was compiled."""

    frames_total: int = 0
    frames_ok: int = 0
    graphs: int = 0
    graph_breaks: tuple = ()
    unimplemented: tuple = ()
    #: resume functions Dynamo made: each is a graph break, whether or not Dynamo counted
    #: it in ``graph_break`` (2.13 does not count the one a data-dependent ``setitem``
    #: takes, ``v[v < 0] = c`` on a 0-d tensor, yet runs the rest of the frame eagerly)
    resumes: int = 0

    @classmethod
    def now(cls) -> Counts:
        try:
            from torch._dynamo.utils import counters
        except ImportError:  # a torch without dynamo's counters: nothing is known
            return cls()
        return cls(int(counters["frames"]["total"]), int(counters["frames"]["ok"]),
                   int(counters["stats"]["unique_graphs"]),
                   tuple(sorted(counters["graph_break"].items())),
                   tuple(sorted(counters["unimplemented"].items())),
                   sum(counters["resumes"].values()))


def _grown(before: tuple, after: tuple) -> list[str]:
    old = dict(before)
    return [msg for msg, n in after if n > old.get(msg, 0)]


@dataclass(frozen=True)
class Coverage:
    """What Dynamo did during one compiled run."""

    frames: int = 0
    graphs: int = 0
    #: (reason, Dynamo's message) for each way part of the run was not compiled
    gaps: tuple = ()
    #: the higher-order ops (``cond``, ``invoke_subgraph``) in the graphs Dynamo
    #: handed its backend during the run (None: this torch cannot say)
    hops: tuple | None = None
    #: the custom-op call sites a runtime assert of those graphs reads (:class:`Graph`)
    asserted: tuple = ()

    @classmethod
    def between(cls, before: Counts, after: Counts, raised: bool, graphs_before: int = 0) -> Coverage:
        gaps = [(REQUESTED_BREAK if m.startswith(REQUESTED_BREAK_MESSAGE) else GRAPH_BREAK, m)
                for m in _grown(before.graph_breaks, after.graph_breaks)]
        counted = sum(n - dict(before.graph_breaks).get(m, 0) for m, n in after.graph_breaks)
        uncounted = (after.resumes - before.resumes) - counted
        if uncounted > 0:
            gaps.append((GRAPH_BREAK, f"{uncounted} graph break(s) Dynamo resumed after without counting"))
        for m in _grown(before.unimplemented, after.unimplemented):
            gaps.append((RECOMPILE_LIMIT if "recompile limit" in m.lower() else SKIPPED_FRAME, m))
        failed = (after.frames_total - before.frames_total) - (after.frames_ok - before.frames_ok)
        if failed > 0 and not raised and not gaps:
            gaps.append((SKIPPED_FRAME, f"{failed} frame(s) not converted"))
        hops = None
        made = GRAPHS.graphs[graphs_before:]
        if GRAPHS.observed:
            hops = tuple(sorted({op for graph in made for op in graph.hops}))
        asserted = tuple(sorted({site for graph in made for site in graph.asserted}))
        return cls(after.frames_ok - before.frames_ok, after.graphs - before.graphs, tuple(gaps), hops, asserted)


@dataclass
class Run:
    """What one run of the program on one binding left behind."""

    outputs: list | None = None
    inputs_after: list = field(default_factory=list)
    effects: list = field(default_factory=list)
    calls: list = field(default_factory=list)
    failure: Failure | None = None
    #: compiled runs only: what Dynamo compiled and what it left to eager
    coverage: Coverage | None = None
    #: eager runs recorded with a path (:class:`PathRecorder`): the ops that ran, the
    #: shapes they returned and the ints and bools they decided (None: not recorded)
    path: tuple | None = None


def _compile_exception_types() -> tuple:
    types: list = []
    for module, names in (("torch._dynamo.exc", ("TorchDynamoException", "BackendCompilerFailed",
                                                  "FailOnRecompileLimitHit")),
                          ("torch._inductor.exc", ("InductorError",))):
        try:
            mod = __import__(module, fromlist=list(names))
        except ImportError:
            continue
        types += [getattr(mod, n) for n in names if hasattr(mod, n)]
    return tuple(types)


def stage_of(exc: BaseException, before: Counts, after: Counts) -> str:
    """Whether an exception came from compiling or from running compiled code.

    Compiling: it is one of Dynamo's or Inductor's own exception types, or a frame
    conversion had started and not finished when it was raised (Dynamo counts a
    frame ``ok`` only once its compiled code is ready).  Anything else was raised
    by code that ran.
    """
    if isinstance(exc, _compile_exception_types()):
        return COMPILE
    started = after.frames_total - before.frames_total
    finished = after.frames_ok - before.frames_ok
    return COMPILE if started > finished else RUNTIME


def run_recorded(fn, make_inputs, trace: dict, noise: tuple[float, int] | None = None) -> Run:
    """An eager run with its path recorded (``Run.path``); with ``noise``, ``(unit,
    seed)``, a float64 reference whose rounding a ``NoisyReference`` makes up.

    ``make_inputs`` gives the run's inputs afresh: a run that the recording itself
    breaks (a torch whose dispatch modes cannot pass a higher-order op) is made
    again unrecorded, on new inputs; a noisy one that fails is returned failed, with
    no path, and is not used.
    """
    recorder_class, noisy_class = modes()
    recorder = recorder_class() if noise is None else noisy_class(*noise)
    run = run_once(fn, make_inputs(), trace, within=recorder)
    if run.failure is None:
        run.path = tuple(recorder.path)
        return run
    return run if noise is not None else run_once(fn, make_inputs(), trace)


#: the noisy float64 references a float16 or bfloat16 binding gets (``NoisyReference``):
#: the largest spread of three samples stands for what rounding can carry to an element
NOISY_REFERENCES = 3


def reference_runs(fn, make_inputs, trace: dict, dtype, seed: int,
                   record: bool = True) -> tuple[Run, Run, list[Run]]:
    """What judges a compiled run that differs from eager on one binding: eager again
    (is it deterministic? its path recorded), the float64 reference (its path
    recorded) and, for a float16 or bfloat16 program, its noisy references, seeded by
    ``seed``.  ``make_inputs(reference)`` gives the binding's inputs afresh (float64
    for the reference).

    ``record=False`` (a program with ``torch.cond``) runs them under no dispatch mode:
    an eager ``torch.cond`` called under one leaves Dynamo's compile of its own eager
    wrapper broken for the calls after it (torch 2.13).  Its branch then shows in the
    call sites run, and its sizes in the values' shapes (``contract.another_path``).
    """
    if not record:
        return (run_once(fn, make_inputs(False), trace), run_once(fn, make_inputs(True), trace), [])
    again = run_recorded(fn, lambda: make_inputs(False), trace)
    ref = run_recorded(fn, lambda: make_inputs(True), trace)
    noisy = []
    if dtype in (torch.float16, torch.bfloat16):
        unit = torch.finfo(dtype).eps / 2
        noisy = [run_recorded(fn, lambda: make_inputs(True), trace,
                              noise=(unit, (seed * NOISY_REFERENCES + k) % 2**63))
                 for k in range(NOISY_REFERENCES)]
    return again, ref, noisy


def run_once(fn, inputs: list, trace: dict, compiled: bool = False,
             within: contextlib.AbstractContextManager | None = None) -> Run:
    """Call ``fn`` on ``inputs`` (mutated in place) and record the aftermath.

    ``trace`` is the op library's record of calls and effects; it is cleared first.
    ``within``: a context (a dispatch mode) the call alone runs in.
    """
    trace["calls"].clear()
    trace["effects"].clear()
    run = Run()
    before = Counts.now() if compiled else None
    graphs = len(GRAPHS.graphs)
    if compiled:
        GRAPHS.install()
    try:
        with within if within is not None else contextlib.nullcontext():
            result = fn(*inputs)
        run.outputs = [t.detach().clone() if isinstance(t, torch.Tensor) else t for t in result]
    except Exception as exc:  # noqa: BLE001 - any failure is an observation
        after = Counts.now() if compiled else None
        stage = stage_of(exc, before, after) if compiled else RUNTIME
        run.failure = Failure(type(exc).__name__, str(exc), stage,
                              "".join(traceback.format_exception(exc))[-4000:], *raised_at(exc))
    if compiled:
        run.coverage = Coverage.between(before, Counts.now(), raised=run.failure is not None,
                                        graphs_before=graphs)
    run.calls, run.effects = list(trace["calls"]), list(trace["effects"])
    trace["calls"].clear()
    trace["effects"].clear()
    run.inputs_after = [t.detach().clone() for t in inputs]
    return run


from dataclasses import dataclass
from enum import Enum


class Kind(str, Enum):
    """What a divergence breaks: a clause of the contract, the process, a stale cache.

    A ``str`` as well, so entries' JSON, dict keys and comparisons with a kind read
    from a file keep working (``str()``, formatting and ``repr()`` give the value's, so
    a script that prints a kind into its source writes a plain string)."""

    WRONG_OUTPUT = "wrong-output"
    WRONG_MUTATION = "wrong-mutation"
    EFFECT_LOG = "effect-log"
    COMPILE_ERROR = "compile-error"
    RUNTIME_ERROR = "runtime-error"
    MISSED_DCE = "missed-dce"
    CRASH = "crash"
    TIMEOUT = "timeout"
    STALE_CACHE = "stale-cache"

    __str__ = str.__str__
    __format__ = str.__format__

    def __repr__(self) -> str:  # written into scripts as a plain string literal
        return repr(self.value)


class Status(str, Enum):
    """Whether a case could be judged at all: an eager run that raises makes it
    invalid (a generator defect), one that disagrees with itself nondeterministic."""

    OK = "ok"
    INVALID = "invalid"
    NONDETERMINISTIC = "nondeterministic"

    __str__ = str.__str__
    __format__ = str.__format__

    def __repr__(self) -> str:
        return repr(self.value)


WRONG_OUTPUT, WRONG_MUTATION, EFFECT_LOG = Kind.WRONG_OUTPUT, Kind.WRONG_MUTATION, Kind.EFFECT_LOG
COMPILE_ERROR, RUNTIME_ERROR, MISSED_DCE = Kind.COMPILE_ERROR, Kind.RUNTIME_ERROR, Kind.MISSED_DCE
CRASH, TIMEOUT, STALE_CACHE = Kind.CRASH, Kind.TIMEOUT, Kind.STALE_CACHE

CORRECTNESS_KINDS = (COMPILE_ERROR, RUNTIME_ERROR, EFFECT_LOG, WRONG_MUTATION, WRONG_OUTPUT)
PERFORMANCE_KINDS = (MISSED_DCE,)
#: judged on a cache pair only, never on a single compile
CACHE_KINDS = (STALE_CACHE,)
KINDS = CORRECTNESS_KINDS + PERFORMANCE_KINDS + CACHE_KINDS
#: Deaths of the compiling process: no verdict of this module can report them.
PROCESS_KINDS = (CRASH, TIMEOUT)
ERROR_KINDS = (COMPILE_ERROR, RUNTIME_ERROR) + PROCESS_KINDS

OK, INVALID, NONDETERMINISTIC = Status.OK, Status.INVALID, Status.NONDETERMINISTIC


@dataclass(frozen=True)
class BugClass:
    """What a confirmation, a shrink step, a replay and a repro must see again: a kind
    and its symptoms.

    Its text, ``kind|a,b`` (``kind`` alone without symptoms), is what entries' JSON
    keeps, and :meth:`parse` the one way back: an error has one symptom, where torch
    raised it or its message, which may hold commas; any other kind's symptoms are
    words without them.  A family (``fuzzer.triage.family``) is written the same way."""

    kind: str
    symptoms: tuple[str, ...] = ()

    @property
    def text(self) -> str:
        return self.kind + (f"|{','.join(self.symptoms)}" if self.symptoms else "")

    def __str__(self) -> str:
        return self.text

    @classmethod
    def parse(cls, text: str) -> BugClass:
        kind, sep, rest = text.partition("|")
        if not sep:
            return cls(kind)
        if kind in ERROR_KINDS:
            return cls(kind, (rest,))
        return cls(kind, tuple(rest.split(",")) if rest else ())

    @property
    def words(self) -> set[str]:
        """The symptoms as a set (a non-error class's are unordered words)."""
        return set(self.symptoms)

    def shown(self) -> str:
        """The symptoms as a title reads them: ``, ``-separated, commas spaced."""
        return ", ".join(s.replace(",", ", ") for s in self.symptoms)


import re
from collections.abc import Callable
from dataclasses import dataclass, field




#: how an effect log can change (its symptoms; "data": an event saw other data)
MISSING, EXTRA, DUPLICATED, REORDERED, DATA = "missing", "extra", "duplicated", "reordered", "data"
#: what about a value can differ
COUNT, SHAPE, DTYPE, NON_FINITE, VALUES = "count", "shape", "dtype", "non-finite", "values"

_NUMBER = re.compile(r"\b\d+(\.\d+)?\b")
#: an object's address in a repr ("object at 0x7f3a..."): another in every process
_ADDRESS = re.compile(r"\b0x[0-9a-fA-F]+\b")
_NAMES = re.compile(r"\b([svux]|buf|op|arg|primals_|tangents_)\d+\b")
#: a size symbol is a size like any number: a stride ``s33`` where another compile
#: has ``1`` is the same message
_SIZE_SYMBOL = re.compile(r"\b[su]#")
#: what a FakeTensor's repr adds that says nothing of the bug: the program's dtype,
#: whether it takes gradients
_TENSOR_ATTRS = re.compile(r",\s*(dtype=torch\.\w+|grad_fn=<\w+>|requires_grad=True)")
#: which of our custom ops an error names is the program's business, not the bug's:
#: the shrinker may swap an op for a simpler one of the same kind
_OUR_OPS = re.compile(r"\b(?:torch\.ops\.)?dcefuzz(?:\.|::)\w+(?:\.default)?")
#: an op's schema, as a message quotes it after its name: which of ours it is says
#: nothing of the bug either
_OUR_SCHEMA = re.compile(r"\b(dcefuzz::\w+)\(.*?\) -> (?:\(.*?\)|\S+?)(?=[.,;]?(?:\s|$))")


def normalise_message(line: str) -> str:
    """An error or death message with numbers, value names and our op names removed."""
    line = _OUR_SCHEMA.sub(r"\1", line)
    line = _OUR_OPS.sub("dcefuzz.<op>", line)
    line = _TENSOR_ATTRS.sub("", line)
    line = _ADDRESS.sub("0x#", line)
    line = _NAMES.sub(lambda m: m.group(1) + "#", line)
    line = _SIZE_SYMBOL.sub("#", line)
    line = _NUMBER.sub("#", line)
    return re.sub(r"\s+", " ", line).strip()[:200]


@dataclass(frozen=True)
class Divergence:
    """One broken clause on one binding.

    ``symptoms`` say how it broke, in the words the bug class is made of; an error
    has one, where torch raised it (``raised.raised_at``); a death, or an error no
    frame of torch raised, has none: its normalised message is its symptom.
    """

    kind: str
    binding: int
    where: str
    detail: str
    symptoms: tuple[str, ...] = ()

    def line(self) -> str:
        site = f" ({self.symptoms[0]})" if self.kind in ERROR_KINDS and self.symptoms else ""
        return f"[{self.kind}] binding {self.binding}, {self.where}: {self.detail}{site}"


def bug_class(kind: str, divs: list[Divergence]) -> str:
    """The kind plus the symptoms of its divergences: what a replay must see again."""
    if not divs:
        return ""
    if kind in ERROR_KINDS:
        # an error is classed by where torch raised it (``raised.raised_at``), and by
        # its message only where no frame of torch raised it (a death, our own code)
        site = divs[0].symptoms
        return BugClass(kind, (site[0] if site else normalise_message(divs[0].detail),)).text
    return BugClass(kind, tuple(sorted({w for d in divs for w in d.symptoms}))).text


def failed_otherwise(kind: str, divs: list[Divergence]) -> Divergence | None:
    """The first error of another kind among ``divs``: a compiled run that raised
    (compiling or running) where a bug of ``kind`` was looked for.  The raise may
    come before the point where that bug would show, or end the run of a binding
    that would have shown it, so the bug's absence says nothing: a replay that sees
    one calls it neither this bug nor fixed."""
    return next((d for d in divs if d.kind in ERROR_KINDS and d.kind != kind), None)


@dataclass
class Verdict:
    status: str
    divergences: list[Divergence] = field(default_factory=list)
    reason: str = ""
    #: (reason, message) of each way a compiled run was not wholly compiled, or a
    #: binding could not be judged
    untested: list[tuple[str, str]] = field(default_factory=list)
    #: the bindings whose float64 reference took another path than eager
    diverged: list[int] = field(default_factory=list)

    def of_kind(self, kind: str) -> list[Divergence]:
        return [d for d in self.divergences if d.kind == kind]

    def kinds(self) -> list[str]:
        present = {d.kind for d in self.divergences}
        return [k for k in KINDS if k in present]


@dataclass
class BindingRuns:
    """The runs of one binding.

    ``eager_again`` (the determinism check) and ``reference`` (float64) are only
    needed to judge a compiled run that differs from eager at all, so they are made
    on demand by :meth:`complete`: a compiled run bit-identical to eager (most of
    them) costs one eager run, not three.
    """

    binding: dict
    eager: Run
    eager_again: Run | None = None
    reference: Run | None = None
    compiled: Run | None = None
    #: float16 and bfloat16 programs: float64 runs with the dtype's rounding made up
    #: (``observe.NoisyReference``), whose spread scales the numeric allowance
    noisy: list = field(default_factory=list)
    _complete: Callable[[], tuple] | None = field(default=None, repr=False)

    def complete(self) -> None:
        if self.eager_again is None or self.reference is None:
            self.eager_again, self.reference, *noisy = self._complete()
            self.noisy = list(noisy[0]) if noisy else []


@dataclass(frozen=True)
class Asks:
    """What a program asks of the compiler beyond its body, which the verdict reads: the
    kinds of mark it puts on input dims (``dynamic``, ``maybe``, ``unbacked``), and the
    higher-order ops it means to have compiled (``cond``, ``invoke_subgraph``)."""

    marks: frozenset = frozenset()
    hops: frozenset = frozenset()


# ------------------------------------------------------------------ clauses

def _value(r, e, c, noisy=()) -> tuple[str, str] | None:
    """(symptom, reason) when compiled value ``c`` breaks the numeric rule."""
    if tuple(c.shape) != tuple(e.shape):
        return SHAPE, f"shape {tuple(c.shape)} != eager {tuple(e.shape)}"
    if c.dtype != e.dtype:
        return DTYPE, f"dtype {c.dtype} != eager {e.dtype}"
    why = tensor_difference(r, e, c, noisy=noisy)
    if why is None:
        return None
    return (NON_FINITE if why.startswith("non-finite") else VALUES), why


#: exception types by which Dynamo itself declines what a program asked of it, and the
#: marks (``Asks.marks``) that ask it: a dim marked dynamic (or unbacked) that the
#: program specialises, a guard on a size marked unbacked.  Without such a mark the
#: same error is Dynamo failing on a program it had no reason to decline; raised from
#: a backend they arrive wrapped (InductorError, BackendCompilerFailed) and are
#: findings too
REFUSALS: dict[str, frozenset] = {
    "ConstraintViolationError": frozenset({"dynamic", "unbacked"}),
    "UserError": frozenset({"dynamic", "unbacked"}),
    "GuardOnDataDependentSymNode": frozenset({"unbacked"}),
}


def refusal(compiled: Run, asks: Asks = Asks()) -> str | None:
    """The message, when the compiled run failed because the compiler declined what
    the program asked with its marks (never a finding), else None."""
    f = compiled.failure
    if f is None or f.stage != COMPILE or not REFUSALS.get(f.type, frozenset()) & asks.marks:
        return None
    return f.line()


def check_outcome(i: int, eager: Run, compiled: Run) -> list[Divergence]:
    """Clause 4: eager returned, so compiled must return too."""
    if compiled.failure is None:
        return []
    f = compiled.failure
    kind = COMPILE_ERROR if f.stage == COMPILE else RUNTIME_ERROR
    site = f.site + (f": {normalise_message(f.site_message)}" if f.site_message else "")
    return [Divergence(kind, i, f.stage, f.line(), (site,) if f.site else ())]


def _noisy(noisy, field_of, k: int) -> list:
    """The ``k``-th tensor of each noisy reference's ``field_of`` (where it has one)."""
    out = []
    for n in noisy:
        values = field_of(n)
        if k < len(values):
            out.append(values[k])
    return out


def check_outputs(i: int, eager: Run, ref: Run, compiled: Run, noisy=()) -> list[Divergence]:
    """Clause 1: returned values."""
    if len(compiled.outputs) != len(eager.outputs):
        return [Divergence(WRONG_OUTPUT, i, "outputs",
                           f"{len(compiled.outputs)} values returned, eager returned {len(eager.outputs)}",
                           (COUNT,))]
    out = []
    for k, (r, e, c) in enumerate(zip(ref.outputs, eager.outputs, compiled.outputs)):
        bad = _value(r, e, c, _noisy(noisy, lambda n: n.outputs, k))
        if bad:
            out.append(Divergence(WRONG_OUTPUT, i, f"output {k}", bad[1], (bad[0],)))
    return out


def check_inputs(i: int, names, eager: Run, ref: Run, compiled: Run, noisy=()) -> list[Divergence]:
    """Clause 2: final contents of every program input."""
    out = []
    for k, (name, r, e, c) in enumerate(zip(names, ref.inputs_after, eager.inputs_after, compiled.inputs_after)):
        bad = _value(r, e, c, _noisy(noisy, lambda n: n.inputs_after, k))
        if bad:
            out.append(Divergence(WRONG_MUTATION, i, f"input {name}", bad[1], (bad[0],)))
    return out


def event_text(op: str, site) -> str:
    """``op@site``, or the bare op for a user's op, whose calls carry no site."""
    return op if site is None else f"{op}@{site}"


def _seq(events) -> str:
    return "[" + ", ".join(event_text(op, site) for op, site in events) + "]"


def sequence_change(expected: list, got: list) -> tuple[tuple[str, ...], str]:
    """How the effect sequence ``got`` departs from ``expected``: symptoms and words."""
    # counted, not just looked up: an identical call repeats its (op, site), and two
    # of them merged into one is an event missing
    missing = list(dict.fromkeys(ev for ev in expected if got.count(ev) < expected.count(ev)))
    extra = [ev for ev in got if ev not in expected]
    dup = sorted({ev for ev in got if got.count(ev) > expected.count(ev) and ev in expected})
    parts = []
    for word, events in ((MISSING, missing), (EXTRA, extra), (DUPLICATED, dup)):
        if events:
            parts.append((word, word + " " + ", ".join(event_text(op, site) for op, site in events)))
    if not parts:
        parts.append((REORDERED, REORDERED))
    text = "; ".join(p for _, p in parts) + f" (eager {_seq(expected)}, compiled {_seq(got)})"
    return tuple(w for w, _ in parts), text


def check_sequence(i: int, eager: Run, compiled: Run) -> list[Divergence]:
    """Clause 3's first half: the (op, site) sequence of the ORDERED effects."""
    expected = [(op, site) for op, site, _ in eager.effects]
    got = [(op, site) for op, site, _ in compiled.effects]
    if expected != got:
        symptoms, text = sequence_change(expected, got)
        return [Divergence(EFFECT_LOG, i, "sequence", text, symptoms)]
    return []


def check_effects(i: int, eager: Run, ref: Run, compiled: Run, noisy=()) -> list[Divergence]:
    """Clause 3: the ORDERED effect log, event by event."""
    wrong_order = check_sequence(i, eager, compiled)
    if wrong_order:
        return wrong_order
    out = []
    for n, (r, e, c) in enumerate(zip(ref.effects, eager.effects, compiled.effects)):
        for k, (rt, et, ct) in enumerate(zip(r[2], e[2], c[2])):
            near = [x.effects[n][2][k] for x in noisy if n < len(x.effects) and k < len(x.effects[n][2])]
            bad = _value(rt, et, ct, near)
            if bad:
                out.append(Divergence(EFFECT_LOG, i, f"event {n} ({event_text(e[0], e[1])}) input {k}",
                                      f"saw different data: {bad[1]}", (DATA,)))
    return out


def check_dead_calls(i: int, dead_sites, compiled: Run, asserted=()) -> list[Divergence]:
    """Performance: dead pure call sites the compiled code still ran.  ``dead_sites``
    maps each site to why the compiler may keep it (``liveness.dead_site_causes``: a
    size from data, a ``torch.cond``, nothing), the causes of those it ran its
    symptoms: each is a different bug (a set of sites alone gives none).

    A site a runtime assert of Dynamo's graphs reads (``asserted``,
    ``graphs.Graph``: the size its result has, checked at run time) must run for the
    assert to be checked: keeping it is torch's design, never a finding.  Only what
    the graphs compiled so far say counts, so a call kept with no assert, or with the
    asserts turned off (``do_not_emit_runtime_asserts``), is still one."""
    ran = sorted({site for op, site in compiled.calls if site in dead_sites and site not in asserted})
    if not ran:
        return []
    names = {site: op for op, site in compiled.calls}
    causes = tuple(sorted({dead_sites[s] for s in ran})) if isinstance(dead_sites, dict) else ()
    return [Divergence(MISSED_DCE, i, "calls",
                       "dead pure call sites executed: " + ", ".join(f"{names[s]}@{s}" for s in ran), causes)]


def _message_symptom(detail: str) -> str:
    """An error's message as one symptom word: normalised, its first clause only (an
    assertion on sizes repeats itself once per dim), and no commas (they part words)."""
    return normalise_message(detail).split(";")[0].replace(",", "")


def check_stale(warm: Verdict, cold: Verdict, label: str) -> list[Divergence]:
    """Stale cache: the warm compile's correctness divergences of a kind whose bug
    class the cold compile of the same declaration does not show."""
    out = []
    for kind in CORRECTNESS_KINDS:
        seen = warm.of_kind(kind)
        if not seen or bug_class(kind, seen) == bug_class(kind, cold.of_kind(kind)):
            continue
        for d in seen:
            # an error here is what the stale code tripped over, in its own words: where
            # it was raised moves between releases (a runtime size check that 2.14.1
            # makes in another function) while the words and the cache say which bug
            symptoms = (_message_symptom(d.detail),) if kind in ERROR_KINDS else d.symptoms
            out.append(Divergence(STALE_CACHE, d.binding, d.where, f"{label}: [{kind}] {d.detail}",
                                  (label, kind) + tuple(symptoms)))
    return out


# ------------------------------------------------------------------ verdict

def _tensor_pairs(a: Run, b: Run) -> list:
    pairs = list(zip(a.outputs, b.outputs)) + list(zip(a.inputs_after, b.inputs_after))
    return pairs + [(x, y) for ea, eb in zip(a.effects, b.effects) for x, y in zip(ea[2], eb[2])]


def _same_record(a: Run, b: Run) -> bool:
    """Bit-identical records (NaN equal NaN): nothing any clause could flag."""
    if b.failure is not None or len(a.outputs) != len(b.outputs):
        return False
    if [(o, s) for o, s, _ in a.effects] != [(o, s) for o, s, _ in b.effects]:
        return False
    return all(bitwise_equal(x, y) for x, y in _tensor_pairs(a, b))


def _tensors_of(run: Run) -> list:
    return list(run.outputs or []) + list(run.inputs_after) + [t for ev in run.effects for t in ev[2]]


def _step_text(step) -> str:
    op, said = step
    return f"{op} gave {said!r}" if not isinstance(said, tuple) or said else op


def another_path(eager: Run, ref: Run) -> str | None:
    """How the float64 reference ``ref`` left eager's path on a binding (None: it did
    not): another path recorded (``observe.PathRecorder``: a size from data, a
    ``torch.cond`` branch), other call sites run, other counts or shapes of values.
    Its values then say nothing of the error eager's path may carry."""
    if eager.path is not None and ref.path is not None and eager.path != ref.path:
        for a, b in zip(eager.path, ref.path):
            if a != b:
                return f"eager's {_step_text(a)}, float64's {_step_text(b)}"
        return f"eager's path has {len(eager.path)} ops, float64's {len(ref.path)}"
    if eager.calls != ref.calls:
        return "float64 ran other custom-op call sites"
    a, b = _tensors_of(eager), _tensors_of(ref)
    if len(a) != len(b) or len(eager.outputs or []) != len(ref.outputs or []) or len(eager.effects) != len(ref.effects):
        return "float64 returned or logged another number of values"
    for x, y in zip(a, b):
        if tuple(x.shape) != tuple(y.shape):
            return f"float64 made a value of shape {tuple(y.shape)} where eager made {tuple(x.shape)}"
    return None


def judge_off_path(i: int, names, br: BindingRuns, compiled: Run) -> tuple[list[Divergence], list[str]]:
    """A binding whose reference left eager's path (``another_path``): what still can
    be judged, and the values that cannot.

    The effect sequence, the number of returned values and every dtype are judged as
    anywhere.  A value is right when it agrees with eager's (``numeric.agrees``, the
    dtype's ``assert_close`` tolerances: compiled took eager's path) or with the
    reference's (compiled took the float64 path: a size or branch off by eager's
    rounding); one that does neither is not judged, since compiled may have taken a
    path of its own through the same rounding, and no reference says what error that
    path may carry.  The reference never widens a tolerance here."""
    eager, ref = br.eager, br.reference
    divs = check_sequence(i, eager, compiled)
    if len(compiled.outputs) != len(eager.outputs):
        divs.append(Divergence(WRONG_OUTPUT, i, "outputs",
                               f"{len(compiled.outputs)} values returned, eager returned {len(eager.outputs)}",
                               (COUNT,)))
        return divs, []
    triples = [(WRONG_OUTPUT, f"output {k}", r, e, c)
               for k, (r, e, c) in enumerate(zip(ref.outputs, eager.outputs, compiled.outputs))]
    triples += [(WRONG_MUTATION, f"input {name}", r, e, c)
                for name, r, e, c in zip(names, ref.inputs_after, eager.inputs_after, compiled.inputs_after)]
    if not divs and len(ref.effects) == len(eager.effects):
        triples += [(EFFECT_LOG, f"event {n} ({event_text(e[0], e[1])}) input {k}", rt, et, ct)
                    for n, (r, e, c) in enumerate(zip(ref.effects, eager.effects, compiled.effects))
                    for k, (rt, et, ct) in enumerate(zip(r[2], e[2], c[2]))]
    unjudged = []
    for kind, where, r, e, c in triples:
        if c.dtype != e.dtype:
            divs.append(Divergence(kind, i, where, f"dtype {c.dtype} != eager {e.dtype}", (DTYPE,)))
        elif not (agrees(e, c) or agrees(r.to(c.dtype), c)):
            unjudged.append(where)
    return divs, unjudged


def judge_runs(input_names, dead_sites, runs: list[BindingRuns], asks: Asks = Asks()) -> Verdict:
    """Apply every clause to every binding's runs.

    A compiled run bit-identical to eager breaks no clause, so only the call trace
    (missed-dce) is looked at; any other run first gets its determinism check and
    float64 reference (``BindingRuns.complete``).  A binding whose reference took
    another path than eager is judged by :func:`judge_off_path`.
    """
    for i, br in enumerate(runs):
        if br.eager.failure is not None:
            return Verdict(INVALID, reason=f"eager raised on binding {i}: {br.eager.failure.line()}")
    divergences: list[Divergence] = []
    untested: list[tuple[str, str]] = []
    diverged: list[int] = []
    crossed = False  # a requested graph break was met
    asserted: set = set()  # call sites the runtime asserts of the graphs so far read
    for i, br in enumerate(runs):
        c = br.compiled
        if c is None:
            continue
        if c.coverage is not None:
            asserted.update(c.coverage.asserted)
            untested += [gap for gap in c.coverage.gaps if gap not in untested and gap[0] != REQUESTED_BREAK]
            crossed = crossed or any(gap[0] == REQUESTED_BREAK for gap in c.coverage.gaps)
        declined = refusal(c, asks)
        if declined is not None:
            untested.append((REFUSED, declined))
            continue
        if not _same_record(br.eager, c):
            br.complete()
            for run in (br.eager_again, br.reference):
                if run.failure is not None:
                    return Verdict(INVALID, reason=f"eager raised on binding {i}: {run.failure.line()}")
            if not _same_record(br.eager, br.eager_again):
                return Verdict(NONDETERMINISTIC, reason=f"eager disagrees with itself on binding {i}")
            failed = check_outcome(i, br.eager, c)
            divergences += failed
            if failed:
                continue
            left = another_path(br.eager_again, br.reference)
            if left is not None:
                diverged.append(i)
                found, unjudged = judge_off_path(i, input_names, br, c)
                divergences += found
                if unjudged:
                    untested.append((REFERENCE_DIVERGED, f"binding {i}: {left}; {', '.join(unjudged)} follow "
                                                         "neither eager nor float64"))
            else:
                noisy = [n for n in br.noisy if n.failure is None and n.path == br.reference.path]
                divergences += check_outputs(i, br.eager, br.reference, c, noisy)
                divergences += check_inputs(i, input_names, br.eager, br.reference, c, noisy)
                divergences += check_effects(i, br.eager, br.reference, c, noisy)
        if not untested and not crossed:
            divergences += check_dead_calls(i, dead_sites, c, asserted)
    compiled = [br.compiled for br in runs if br.compiled is not None]
    if (compiled and all(c.coverage is not None and c.failure is None for c in compiled)
            and sum(c.coverage.graphs for c in compiled) == 0):
        untested.append((NO_GRAPH, "Dynamo compiled no graph: the program ran eagerly"))
        divergences = [d for d in divergences if d.kind != MISSED_DCE]
    missing = _hops_missing(asks, compiled)
    if missing:
        untested.append((HOP_INLINED, missing))
    return Verdict(OK, divergences, untested=untested, diverged=diverged)


def _hops_missing(asks: Asks, compiled: list) -> str | None:
    """What the program asked to have compiled as a higher-order op and Dynamo's graphs
    do not hold (None: all there, or this torch cannot say)."""
    if not asks.hops or not compiled or any(c.coverage is None or c.coverage.hops is None for c in compiled):
        return None
    if sum(c.coverage.graphs for c in compiled) == 0:
        return None  # no graph at all: said already
    seen = {h for c in compiled for h in c.coverage.hops}
    missing = sorted(asks.hops - seen)
    if not missing:
        return None
    return (f"the program asked for {', '.join(missing)}; Dynamo's graphs hold "
            f"{', '.join(sorted(seen)) or 'no higher-order op'} (it inlined the rest)")


import enum
from dataclasses import dataclass



class Reading(enum.Enum):
    NOT_JUDGED = "not judged"
    REPRODUCES = "reproduces"
    ANOTHER_BUG = "another bug"
    RAISED = "raised another way"
    UNTESTED = "untested"
    ABSENT = "absent"


@dataclass(frozen=True)
class ReadVerdict:
    """A verdict read for one bug: the rung, and what it is about (the status's
    reason, the class seen, the first untested reason)."""

    reading: Reading
    reason: str = ""

    @property
    def judged(self) -> bool:
        """Whether the run said anything of the bug: not where eager failed, the
        compiled run raised another way, or it was not wholly compiled or judged."""
        return self.reading not in (Reading.NOT_JUDGED, Reading.RAISED, Reading.UNTESTED)


def read_verdict(kind: str, wanted: str, verdict: Verdict) -> ReadVerdict:
    """The rung ``verdict`` stops at, looking for a bug of ``kind`` and class ``wanted``."""
    if verdict.status != OK:
        return ReadVerdict(Reading.NOT_JUDGED, f"{verdict.status}: {verdict.reason}")
    seen = bug_class(kind, verdict.of_kind(kind))
    if seen and seen == wanted:
        return ReadVerdict(Reading.REPRODUCES, seen)
    if seen:
        return ReadVerdict(Reading.ANOTHER_BUG, seen)
    other = failed_otherwise(kind, verdict.divergences)
    if other is not None:
        return ReadVerdict(Reading.RAISED, bug_class(other.kind, [other]))
    if verdict.untested:
        reason, message = verdict.untested[0]
        return ReadVerdict(Reading.UNTESTED, f"{reason}: {message.splitlines()[0] if message else ''}")
    return ReadVerdict(Reading.ABSENT)


def read_death(wanted: str, seen: str | None, eager_done: bool, judged: bool) -> ReadVerdict:
    """The rung a crash or timeout entry's fresh process stops at, looking for the
    death ``wanted``: ``seen`` is how it died (None: it survived), ``eager_done``
    whether its eager runs were done by then, ``judged`` whether a survivor judged its
    run whole and clean (exit 0, ``ReadVerdict.judged``)."""
    if seen is not None and not eager_done:
        return ReadVerdict(Reading.NOT_JUDGED, seen)
    if seen is not None:
        return ReadVerdict(Reading.REPRODUCES if seen == wanted else Reading.ANOTHER_BUG, seen)
    return ReadVerdict(Reading.ABSENT if judged else Reading.UNTESTED)


import re

#: the death of a process whose heap glibc found corrupted
HEAP_CORRUPTION = "heap corruption"
#: the signals a corrupted heap kills by: glibc's abort, or a fault in what it left
HEAP_SIGNALS = ("SIGABRT", "SIGSEGV")
#: glibc's words when its allocator finds the heap corrupted (``malloc_printerr``)
HEAP_WORDS = re.compile(r"corrupted size vs\. prev_size|corrupted double-linked list|double free"
                        r"|\b(?:free|malloc|realloc|munmap_chunk|malloc_consolidate|_int_free|_int_malloc)\(\): ")


def death_name(how: str, said: str = "") -> str:
    """The death class of a process that ended ``how`` (a signal's name, ``exit code
    N``) after writing ``said`` on stderr."""
    return HEAP_CORRUPTION if how in HEAP_SIGNALS and HEAP_WORDS.search(said) else how


import os
import subprocess
import sys
import tempfile
import threading
import time

import torch


REPRODUCES_EXIT = 1
FIXED_EXIT = 0
CANNOT_JUDGE_EXIT = 125
#: how often the parent of a crash/timeout repro looks at its child
POLL_S = 0.25
#: the environment variable naming the file a crash/timeout child creates once its
#: eager runs are done (a death before that says nothing about the compiler)
EAGER_DONE_ENV = "DCEFUZZ_EAGER_DONE"
#: characters of a crash/timeout child's stderr kept to class its death by (glibc's
#: heap words come last, just before it dies)
SAID_KEPT = 64 * 1024
#: seconds the parent waits for the rest of a dead child's stderr (a compile worker
#: it started may hold the pipe open)
SAID_WAIT_S = 5.0


def make_inputs(spec: dict, i: int, device: str, reference: bool = False) -> list:
    """Inputs for binding i (float64 for the reference), drawn exactly as dcefuzz draws them."""
    binding = spec["bindings"][i]
    sizes = [[_size(d, binding) for d in dims] for dims in spec["input_dims"]]
    return draw_inputs(sizes, spec["input_seed"] + i, device, getattr(torch, spec.get("dtype", "float32")),
                       spec.get("strided", ()), reference, [tuple(a) for a in spec.get("aliases", ())],
                       [tuple(f) for f in spec.get("fixed", ())])


def _size(expr: str, binding: dict) -> int:
    """A dim such as ``s0``, ``s0 // 2`` or ``(s0 // 2) - 1`` for one binding (the
    expressions are dcefuzz's own, checked when the entry was read)."""
    return int(eval(expr, {"__builtins__": {}}, dict(binding)))  # noqa: S307


def _through(step, fn):
    """``fn`` as a run calls it: through the program's ``step`` (its mode) when it has one."""
    return fn if step is None else (lambda *inputs: step(fn, *inputs))


def judge(spec: dict, program, trace: dict, device: str, step=None):
    """Run eager and compiled over the recorded bindings, with the on-disk compile
    caches off (no artifact of an earlier run may serve this one); the verdict."""
    runs = []
    eager_fn = _through(step, program)
    dtype = getattr(torch, spec.get("dtype", "float32"))
    record = "cond" not in spec.get("hops", ())
    for i in range(len(spec["bindings"])):
        def complete(i=i):
            return reference_runs(eager_fn, lambda ref: make_inputs(spec, i, device, reference=ref), trace,
                                  dtype, spec["input_seed"] + i, record)
        eager = run_once(eager_fn, make_inputs(spec, i, device), trace)
        runs.append(BindingRuns(binding=dict(spec["bindings"][i]), eager=eager, _complete=complete))
    done = os.environ.get(EAGER_DONE_ENV)
    if done and not any(br.eager.failure for br in runs):
        open(done, "w").close()
    compiled = _through(step, torch.compile(program, dynamic=spec.get("dynamic", True),
                                            backend=spec["backend"]))
    if not any(br.eager.failure for br in runs):
        for i, br in enumerate(runs):
            with caches_off():
                br.compiled = run_once(compiled, make_inputs(spec, i, device), trace, compiled=True)
    asks = Asks(frozenset(spec.get("marks", ())), frozenset(spec.get("hops", ())))
    causes = {int(s): c for s, c in spec.get("dead_site_causes", {}).items()}
    return judge_runs(spec["input_names"], causes or set(spec["dead_pure_sites"]), runs, asks)


def _device(spec: dict, argv: list) -> str | None:
    device = argv[0] if argv else spec["device"]
    if device.startswith("cuda") and not torch.cuda.is_available():
        print(f"device {device} is not available here")
        return None
    return device


def rehash(spec: dict) -> None:
    """Start this script again with the hash seed its finding was made under, when it
    runs with another: some bugs show only under some orders of torch's sets."""
    want = spec.get("hash_seed")
    if want is not None and os.environ.get("PYTHONHASHSEED") != want:
        sys.stdout.flush()
        os.execve(sys.executable, [sys.executable, *sys.argv], {**os.environ, "PYTHONHASHSEED": want})


def main(spec: dict, program, trace: dict, argv: list | None = None, step=None) -> int:
    if argv is None:
        rehash(spec)
    argv = list(sys.argv[1:] if argv is None else argv)
    child = "--child" in argv
    argv = [a for a in argv if a != "--child"]
    if spec["kind"] in ("crash", "timeout") and not child:
        return run_isolated(spec, argv)
    if child:
        import faulthandler  # where it dies or hangs: the Python stack, on stderr

        faulthandler.enable(all_threads=True)
        faulthandler.dump_traceback_later(spec["time_limit_s"] - 1)
    device = _device(spec, argv)
    if device is None:
        return CANNOT_JUDGE_EXIT
    if spec.get("threads"):  # some bugs show only with as many threads as the fuzzer's process had
        torch.set_num_threads(spec["threads"])
    print(f"torch {torch.__version__}, device {device}, looking for: {spec['bug_class']}", flush=True)
    verdict = judge(spec, program, trace, device, step)
    # a crash/timeout child that survives judges by the same ladder: no verdict shows a
    # death, so it says 0 only for a run judged whole and clean of errors (eager that
    # fails, a compile that raises, code not wholly compiled: 125, the death unjudged)
    return conclude(spec, verdict)


def conclude(spec: dict, verdict) -> int:
    """Print a verdict and say, as an exit status, whether it shows ``spec``'s bug
    (the ladder of ``fuzzer.judge.reading``, which a replay reads by too)."""
    said = read_verdict(spec["kind"], spec["bug_class"], verdict)
    if said.reading is Reading.NOT_JUDGED:
        print(f"cannot judge: {said.reason}")
        return CANNOT_JUDGE_EXIT
    for d in verdict.divergences:
        print(d.line())
    for reason, message in verdict.untested:
        print(f"not wholly compiled ({reason}): {message.splitlines()[0] if message else ''}")
    if said.reading is Reading.REPRODUCES:
        print("REPRODUCES")
        return REPRODUCES_EXIT
    if said.reading is Reading.ANOTHER_BUG:
        # the kind still diverges, another way (often the same failure, worded anew by a
        # later torch): neither this bug nor fixed
        print(f"cannot judge: another bug of this kind ({said.reason})")
        return CANNOT_JUDGE_EXIT
    if said.reading is Reading.RAISED:
        # the compiled run raised another way, which may hide this bug: not fixed
        print(f"cannot judge: the program fails another way ({said.reason}), and the bug did not show")
        return CANNOT_JUDGE_EXIT
    if said.reading is Reading.UNTESTED:
        # code that did not run compiled, or a binding the contract could not judge,
        # cannot show the bug: it is not fixed there, only not tested
        print(f"cannot judge: not wholly compiled or judged ({verdict.untested[0][0]}), "
              f"and the bug did not show")
        return CANNOT_JUDGE_EXIT
    print(f"does not reproduce (saw no {spec['kind']})")
    return FIXED_EXIT


def _rss_mb(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def _relay(stream, said: list) -> None:
    """Pass a child's stderr on to ours as it comes, keeping its tail in ``said``."""
    for line in iter(stream.readline, b""):
        text = line.decode(errors="replace")
        sys.stderr.write(text)
        sys.stderr.flush()
        said.append(text)
        while len(said) > 1 and sum(map(len, said)) > SAID_KEPT:
            del said[0]


def run_isolated(spec: dict, argv: list) -> int:
    """Crash and timeout findings: run this script again in a child, judge how it ends.

    Only the recorded death reproduces: the same signal (or a heap corruption, by
    either of its signals: ``fuzzer.judge.death``, read from what the child writes on
    stderr, passed on as it comes), the memory cap, or a hang, and only once the
    child's eager runs are done.  Only a child that ran to completion and judged its
    run (exit 0) says fixed; another death, or a child that could not judge (125), is
    neither.
    """
    death = spec["death"]
    with tempfile.TemporaryDirectory() as tmp:
        marker = os.path.join(tmp, "eager-done")
        env = dict(os.environ, **{EAGER_DONE_ENV: marker})
        child = subprocess.Popen([sys.executable, sys.argv[0], *argv, "--child"], env=env,
                                 stderr=subprocess.PIPE)
        said: list = []
        relay = threading.Thread(target=_relay, args=(child.stderr, said), daemon=True)
        relay.start()
        deadline = time.monotonic() + spec["time_limit_s"]
        how = None
        while child.poll() is None:
            if time.monotonic() > deadline:
                how = "timeout"
            elif spec.get("memory_cap_mb") and _rss_mb(child.pid) > spec["memory_cap_mb"]:
                how = "memory"
            if how:
                child.kill()
                child.wait()
                break
            time.sleep(POLL_S)
        eager_done = os.path.exists(marker)
        relay.join(SAID_WAIT_S)
    code = child.returncode
    if how is None and code < 0:
        import signal
        # SIGABRT or SIGSEGV after glibc's heap words: one death, a heap corruption
        how = death_name(signal.Signals(-code).name, "".join(said))
    elif how is None and code not in (FIXED_EXIT, CANNOT_JUDGE_EXIT):
        how = f"exit code {code}"
    # the ladder of ``fuzzer.judge.reading``, which a replay reads its child's end by too
    read = read_death(death, how, eager_done, judged=code == FIXED_EXIT).reading
    if read is Reading.UNTESTED:  # the child could not judge its run, and said why
        return CANNOT_JUDGE_EXIT
    if read is Reading.NOT_JUDGED:
        print(f"the child died ({how}) before its eager runs were done: cannot judge")
        return CANNOT_JUDGE_EXIT
    if read is Reading.REPRODUCES:
        print(f"REPRODUCES: {how}")
        return REPRODUCES_EXIT
    if read is Reading.ANOTHER_BUG:
        # another death (another signal, the memory cap, a hang): neither this bug nor fixed
        print(f"cannot judge: looking for {death}, the child ended with {how}")
        return CANNOT_JUDGE_EXIT
    print(f"does not reproduce: looking for {death}, the child ran to completion")
    return FIXED_EXIT


def program(x0):
    s0 = x0.shape[0]
    v0 = x0[:, : s0 // 2]
    v1 = torch.ops.dcefuzz.e_tap(v0, 0)
    v1.zero_()
    v2 = v0 + v1
    v3 = torch.ops.dcefuzz.m_unknown(v0, v2, 1)
    return (v3,)


def step(fn, x0):
    """One run of `program` (eager or compiled as `fn`): its mode applied."""
    outs = fn(x0)
    return outs


SPEC = {'id': 'wrong-output-ec1ddebeb7e0',
 'kind': 'wrong-output',
 'bug_class': 'wrong-output|values',
 'device': 'cpu',
 'backend': 'inductor',
 'bindings': [{'s0': 2}],
 'input_seed': 4232272232457577267,
 'input_names': ['x0'],
 'input_dims': [['s0', 's0']],
 'dynamic': None,
 'dtype': 'float32',
 'strided': [],
 'aliases': [],
 'dead_pure_sites': [],
 'dead_site_causes': {},
 'death': None,
 'memory_cap_mb': 6144,
 'time_limit_s': 300,
 'threads': 1,
 'hash_seed': '0'}


if __name__ == "__main__":
    sys.exit(main(SPEC, program, TRACE, step=step))
