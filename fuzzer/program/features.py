"""Features: the regions of program space beyond float32 inference over one graph.

Each feature is drawn per program, independently, with its weight (the chance a
program has it), from a random stream of its own: with every feature off the
generator draws exactly the programs it drew before features existed.  A feature
turns on statement forms (``forms.Form.feature``) and parts of the program's
:class:`~fuzzer.program.ir.Mode`; :func:`used_by` reads back which features a
program actually uses, so a reader, a grep or a report can tell.

``--features`` (``parse``) switches features by name: ``all``, ``none``, a list of
names (those on, at their weights), ``-name`` to drop one from all, and
``name=weight`` to set a weight.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from fuzzer import __version__
from fuzzer.program.families import control, fnshapes, function, state, swaps

AUTOGRAD = "autograd"
GRAPH_BREAK = "graph-break"
DYNAMIC_MODE = "dynamic-mode"
DATA_DEPENDENT = "data-dependent"
SIGNATURES = "signatures"
IDENTICAL_CALLS = "identical-calls"
DTYPES = "dtypes"
STRIDED = "strided"
ALIASED = "aliased-inputs"
HOPS = "hops"
VIEWS = "views"
INDEXING = "indexing"
MODULE_STATE = "module-state"
TAGGED_OPS = "tagged-ops"
SCHEMAS = "schemas"
SCHEMA_ALIAS = "schema-alias"
OP_CALLS = "op-calls"
HOP_EFFECTS = control.FEATURE
AUTOGRAD_FUNCTION = function.FEATURE
STRIDED_VIEWS = "strided-views"
LAYOUTS = "layouts"
OVERLAPPING = "overlapping-inputs"
STORAGE_SWAPS = swaps.FEATURE
INT_TENSORS = "int-tensors"
DTYPE_VIEWS = "dtype-views"
MODULE_CARRY = state.FEATURE
FUNCTION_SHAPES = fnshapes.FEATURE
FUNC_GRAD = "func-grad"


@dataclass(frozen=True)
class Feature:
    name: str
    #: the chance that a program has the feature when it is switched on
    weight: float
    doc: str
    #: the features a program with this one always has too (turned on where it is
    #: drawn): a table without one of them (a target that cannot run it,
    #: :func:`without`) never draws this one either
    implies: tuple[str, ...] = ()


FEATURES: tuple[Feature, ...] = (
    Feature(AUTOGRAD, 0.3, "inputs require grad; the loss's backward() runs and gradients are judged; "
            "no_grad statements"),
    Feature(GRAPH_BREAK, 0.25, "explicit torch._dynamo.graph_break() between statements (fullgraph=False)"),
    Feature(DYNAMIC_MODE, 0.35, "automatic dynamic (dynamic=None) and mark_dynamic / maybe_mark_dynamic / "
            "mark_unbacked on input dims"),
    Feature(DATA_DEPENDENT, 0.3, "sizes from data: masked_select, .item() feeding a slice, a custom op "
            "whose fake impl uses new_dynamic_size()"),
    Feature(SIGNATURES, 0.4, "custom ops with two results, Tensor?, float/int/bool scalars, Tensor[] "
            "written, mutates_args='unknown'"),
    Feature(IDENTICAL_CALLS, 0.25, "a custom call repeated with the same operands and site (CSE may merge "
            "pure ones only)"),
    Feature(DTYPES, 0.2, "float16 and bfloat16 inputs, judged with tolerances per dtype"),
    Feature(STRIDED, 0.2, "non-contiguous inputs (last dim strided by 2)"),
    Feature(ALIASED, 0.15, "an input that is a view of another input (the same storage)"),
    Feature(HOPS, 0.15, "torch.cond branches and torch.compiler.nested_compile_region around custom calls"),
    # those below came last: a program without them is drawn as before they existed
    Feature(VIEWS, 0.3, "view ops beyond slices: permute, select, a step slice, chunk, diagonal, movedim, "
            "alias, squeeze"),
    Feature(INDEXING, 0.3, "indexing and in-place ops of the tensor API: flip, index_select, a tensor index, "
            "where, masked_fill(_), index_add_, index_copy_, a masked store, zero_, fill_, clamp_, sub_, div_, "
            "in-place unary ops, lerp_"),
    Feature(MODULE_STATE, 0.25, "the program is an nn.Module whose forward writes its buffers (its state, the "
            "same tensors on every call) through custom ops; the buffers after each call are judged"),
    Feature(TAGGED_OPS, 0.3, "custom ops tagged torch.Tag.inplace (write their first argument and return it) "
            "and torch.Tag.out (write keyword-only buffers and return them); later statements may read and "
            "write through the returned alias"),
    # and these after them, for the same reason
    Feature(SCHEMAS, 0.3, "ops of hand-written schemas (Library.define / impl, torch.library.define): "
            "Tensor(a!), Tensor(a!)[] of three, two written arguments and two results, Tensor(a!)?, "
            "Tensor(a!)[]? given a list or None, a functional op with an .out overload tagged as its out variant"),
    Feature(SCHEMA_ALIAS, 0.3, "a hand-written schema whose result is its written first argument "
            "(-> Tensor(a!), tagged torch.Tag.inplace), and an .out overload called with its buffer (tagged "
            "torch.Tag.out)"),
    Feature(OP_CALLS, 0.3, "custom ops whose kernels call other ops of the library; keyword-only and "
            "defaulted arguments; two written arguments and two results"),
    # and these after them (``fuzzer.program.families``: control, function)
    Feature(HOP_EFFECTS, 0.25, "effectful and mutating custom ops inside torch.cond branches, while_loop "
            "bodies, map and scan; an op whose register_autograd backward logs an ORDERED effect"),
    Feature(AUTOGRAD_FUNCTION, 0.25, "torch.autograd.Function subclasses whose forward and backward call "
            "custom ops: pure, writing a fresh intermediate, writing its input marked dirty"),
    Feature(STRIDED_VIEWS, 0.25, "views with explicit strides: as_strided (a box of an input's storage), unfold "
            "with step >= size, view(dtype) and back, x.T, mT, narrow from a symbolic start; a write beside a "
            "view of its own storage whose elements are proven disjoint"),
    Feature(LAYOUTS, 0.2, "inputs handed over in another memory layout: transposed (last two dims), "
            "channels_last (dim 1 innermost, 3-d and 4-d), expanded (dim 0 of stride 0, never written); "
            "each size 0 in some binding wherever the body allows"),
    Feature(OVERLAPPING, 0.15, "inputs that are windows of part of another input's storage (a head and a "
            "tail of one buffer, a base beside its window, two windows one row apart); a write to one "
            "beside a read of another only where their elements are proven disjoint"),
    # and this after them
    Feature(STORAGE_SWAPS, 0.2, "set_ and resize_: a fresh tensor set onto a value's storage or a clone's, a "
            "fresh result swapped onto another storage, a buffer grown from nothing or shrunk; custom ops "
            "whose kernels resize their written argument to its own sizes, write it through a tensor set onto "
            "its storage, or resize a workspace"),
    Feature(INT_TENSORS, 0.25, "int64, int32, uint8 and bool values of aten forms: masks (comparisons, logic), "
            "indices (argmax, stable argsort, nonzero), counts, view(dtype), integer arithmetic (floor "
            "division, remainder, bitwise), consumed by masked_fill, where, index_select and gather"),
    Feature(DTYPE_VIEWS, 0.2, "view(dtype) to dtypes of another element size and back (bytes, int16 pairs of "
            "them) over a view whose last dim has stride 1; writes through it"),
    Feature(MODULE_CARRY, 0.2, "a module whose state carries over from call to call (a KV cache of fixed "
            "length written at a position, running statistics), through mutating custom ops; judged after each call"),
    # and this after them
    Feature(FUNCTION_SHAPES, 0.2, "autograd.Function subclasses as libraries write them: two tensor arguments "
            "(one value may be given as both), a gradient returned for each, an in-place add to the forward's "
            "result, a backward that writes a clone of its gradient in place, a buffer kept on ctx that forward "
            "and backward both write"),
    # and this after them
    Feature(FUNC_GRAD, 0.15, "gradients taken by torch.func.grad of the program and its loss, compiled as one "
            "function (implies autograd); no custom op reads a value that requires grad (torch.func.grad refuses "
            "register_autograd's formulas, pytorch/pytorch#168393); never with the features of FUNC_GRAD_EXCLUDES",
            implies=(AUTOGRAD,)),
)
#: the features a program with ``func-grad`` never has (they are dropped where it is
#: drawn): Dynamo cannot resume inside a functorch transform after a graph break (the
#: whole call runs eagerly); torch's higher-order ops have no rule for functorch's grad
#: transform (an eager ``torch.cond`` under it raises); the families'
#: ``autograd.Function``s take ``ctx`` in ``forward`` without ``setup_context``, which
#: functorch refuses; a module's buffers never take gradients
FUNC_GRAD_EXCLUDES: tuple[str, ...] = (GRAPH_BREAK, HOPS, HOP_EFFECTS, AUTOGRAD_FUNCTION, FUNCTION_SHAPES,
                                       MODULE_STATE, MODULE_CARRY)
BY_NAME = {f.name: f for f in FEATURES}
#: no feature: the programs of float32 inference over one graph, as before
NONE: dict[str, float] = {}
ALL: dict[str, float] = {f.name: f.weight for f in FEATURES}


class FeatureError(ValueError):
    """A ``--features`` value that names no feature or has a bad weight."""


def parse(text: str) -> dict[str, float]:
    """Feature weights from a ``--features`` value (see the module docstring)."""
    text = text.strip()
    if text in ("", "none"):
        return dict(NONE)
    table: dict[str, float] = {}
    parts = [p.strip() for p in text.split(",") if p.strip()]
    if parts[0] == "all" or all(p.startswith("-") for p in parts):
        table = dict(ALL)
        parts = [p for p in parts if p != "all"]
    for part in parts:
        if part.startswith("-"):
            _known(part[1:])
            table.pop(part[1:], None)
            continue
        name, _, weight = part.partition("=")
        _known(name)
        try:
            value = float(weight) if weight else BY_NAME[name].weight
        except ValueError:
            raise FeatureError(f"weight of {name} is not a number: {weight!r}") from None
        if not 0.0 <= value <= 1.0:
            raise FeatureError(f"weight of {name} must be within [0, 1], got {value}")
        table[name] = value
    return table


def _known(name: str) -> None:
    if name not in BY_NAME:
        raise FeatureError(f"unknown feature {name!r}; features: {', '.join(BY_NAME)}")


def describe(table: dict[str, float]) -> str:
    """A one-line summary of a weight table, for progress lines and notes."""
    if not table:
        return "none"
    return ", ".join(f"{n}={w:g}" for n, w in table.items())


def unavailable(name: str) -> str | None:
    """Why this torch cannot run a feature, or None (higher-order ops need torch.cond
    and torch.compiler.nested_compile_region; effects inside them need torch.cond and
    the while_loop, map and scan of torch._higher_order_ops; tagged ops need
    ``custom_op``'s tags, a schema's returned alias ``torch.Tag.inplace`` and ``out``)."""
    if name == HOPS:
        import torch
        if not hasattr(torch, "cond") or not hasattr(torch.compiler, "nested_compile_region"):
            return "this torch lacks torch.cond or torch.compiler.nested_compile_region"
    if name == HOP_EFFECTS:
        import torch
        import torch._higher_order_ops as hops
        lacking = [op for op in ("while_loop", "map", "scan") if not callable(getattr(hops, op, None))]
        if not hasattr(torch, "cond") or lacking:
            return f"this torch lacks torch.cond or torch._higher_order_ops.{', '.join(lacking) or 'while_loop'}"
    if name == SCHEMA_ALIAS:
        import torch
        lacking = [tag for tag in ("inplace", "out") if not hasattr(torch.Tag, tag)]
        if lacking:
            return (f"this torch lacks torch.Tag.{' and torch.Tag.'.join(lacking)}, without which an op's result "
                    "may not alias its argument (auto_functionalize.can_auto_functionalize)")
    from fuzzer.program import families
    return families.unavailable(name)


def draw(seed: int, table: dict[str, float]) -> frozenset[str]:
    """The features program ``seed`` has: each on with its weight, from a stream of its
    own (so the program's other draws are those of a program without features)."""
    if not table:
        return frozenset()
    rng = random.Random(f"dcefuzz-features-{__version__}-{seed}")
    on = frozenset(f.name for f in FEATURES if rng.random() < table.get(f.name, 0.0) and unavailable(f.name) is None)
    on |= {implied for name in on for implied in BY_NAME[name].implies}
    if FUNC_GRAD in on:  # gradients by torch.func.grad: without what it cannot run
        return on - set(FUNC_GRAD_EXCLUDES)
    return on


def without(table: dict[str, float], excluded) -> dict[str, float]:
    """``table`` less the features ``excluded`` and every feature that implies one of
    them (``Feature.implies``): :func:`draw` turns on what a drawn feature implies, so a
    table that kept ``func-grad`` would draw ``autograd`` back for a target that cannot
    run it.  The draws of every other feature stay as they were (:func:`draw` reads its
    stream whatever the weights)."""
    excluded = set(excluded)
    return {name: weight for name, weight in table.items()
            if name not in excluded and not excluded & set(BY_NAME[name].implies)}


def used_by(program) -> list[str]:
    """The features a program uses, read off its mode and statements."""
    from fuzzer.program import forms

    mode = program.mode
    used = {forms.form(s.form).feature for s in program.body} - {None}
    if mode.grad:
        used.add(AUTOGRAD)
    if mode.func_grad:
        used.add(FUNC_GRAD)
    if mode.dynamic != "true" or mode.marks:
        used.add(DYNAMIC_MODE)
    if mode.dtype != "float32":
        used.add(DTYPES)
    if mode.strided:
        used.add(STRIDED)
    if mode.aliases:
        used.add(ALIASED)
    if mode.module:
        used.add(MODULE_CARRY if mode.carry else MODULE_STATE)
    if mode.layouts:
        used.add(LAYOUTS)
    if mode.windows:
        used.add(OVERLAPPING)
    sites = [site for s in program.body for site in s.sites]
    if len(sites) != len(set(sites)):
        used.add(IDENTICAL_CALLS)
    return [f.name for f in FEATURES if f.name in used]


def writes_beside(on) -> bool:
    """Whether the generator may write a value beside a disjoint part of its own storage
    (``storage.Tracker``): with strided views, and with inputs that overlap."""
    return bool({STRIDED_VIEWS, OVERLAPPING} & set(on))


def needs_capture(program) -> bool:
    """Whether Dynamo must capture data-dependent sizes (``.item()``, ``masked_select``,
    ``nonzero``) rather than break the graph there."""
    from fuzzer.program import forms
    return any(forms.form(s.form).feature == DATA_DEPENDENT or "size" in s.attrs for s in program.body)
