"""The features of how a program runs rather than of what it says: gradients, automatic
dynamic and marks, dtypes, strided, aliased, laid-out and overlapping inputs, a module's
buffers, repeated calls, ``torch.func.grad``.

Each is a :class:`~fuzzer.program.feature_record.Feature` whose ``seen_in`` reads the
program's :class:`~fuzzer.program.mode.Mode` (or its calls); the generator and the mode's
draw (``drawn_mode``) decide what a program with it holds.  A feature of statement
forms is declared with its forms instead.
"""

from __future__ import annotations

from fuzzer.program import aten_forms, library_forms
from fuzzer.program.families import control, fnshapes, function, opaque, state, subclass
from fuzzer.program.feature_record import Feature

AUTOGRAD = "autograd"
DYNAMIC_MODE = "dynamic-mode"
IDENTICAL_CALLS = "identical-calls"
DTYPES = "dtypes"
STRIDED = "strided"
ALIASED = "aliased-inputs"
MODULE_STATE = "module-state"
LAYOUTS = "layouts"
OVERLAPPING = "overlapping-inputs"
FUNC_GRAD = "func-grad"

#: the features a program with ``func-grad`` never has (they are dropped where it is
#: drawn): Dynamo cannot resume inside a functorch transform after a graph break (the
#: whole call runs eagerly); torch's higher-order ops have no rule for functorch's grad
#: transform (an eager ``torch.cond`` under it raises); the families'
#: ``autograd.Function``s take ``ctx`` in ``forward`` without ``setup_context``, which
#: functorch refuses; a module's buffers never take gradients; ``torch.func.grad`` differentiates
#: tensors, and the program's opaque objects are no inputs of it; functorch's wrappers of a
#: tensor subclass have no storage its ``__torch_dispatch__`` can read
FUNC_GRAD_EXCLUDES: tuple[str, ...] = (aten_forms.GRAPH_BREAK, library_forms.HOPS, control.FEATURE, function.FEATURE,
                                       fnshapes.FEATURE, MODULE_STATE, state.FEATURE, opaque.FEATURE,
                                       subclass.FEATURE)


def _identical_calls(program) -> bool:
    sites = [site for s in program.body for site in s.sites]
    return len(sites) != len(set(sites))


FEATURES: tuple[Feature, ...] = (
    Feature(AUTOGRAD, 0.3, "inputs require grad; the loss's backward() runs and gradients are judged; "
            "no_grad statements", seen_in=lambda p: bool(p.mode.grad)),
    Feature(DYNAMIC_MODE, 0.35, "automatic dynamic (dynamic=None) and mark_dynamic / maybe_mark_dynamic / "
            "mark_unbacked on input dims", seen_in=lambda p: p.mode.dynamic != "true" or bool(p.mode.marks)),
    Feature(IDENTICAL_CALLS, 0.25, "a custom call repeated with the same operands and site (CSE may merge "
            "pure ones only)", seen_in=_identical_calls),
    Feature(DTYPES, 0.2, "float16 and bfloat16 inputs, judged with tolerances per dtype",
            seen_in=lambda p: p.mode.dtype != "float32"),
    Feature(STRIDED, 0.2, "non-contiguous inputs (last dim strided by 2)", seen_in=lambda p: bool(p.mode.strided)),
    Feature(ALIASED, 0.15, "an input that is a view of another input (the same storage)",
            seen_in=lambda p: bool(p.mode.aliases)),
    Feature(MODULE_STATE, 0.25, "the program is an nn.Module whose forward writes its buffers (its state, the "
            "same tensors on every call) through custom ops; the buffers after each call are judged",
            seen_in=lambda p: bool(p.mode.module) and not p.mode.carry),
    Feature(LAYOUTS, 0.2, "inputs handed over in another memory layout: transposed (last two dims), "
            "channels_last (dim 1 innermost, 3-d and 4-d), expanded (dim 0 of stride 0, never written); "
            "each size 0 in some binding wherever the body allows", seen_in=lambda p: bool(p.mode.layouts)),
    Feature(OVERLAPPING, 0.15, "inputs that are windows of part of another input's storage (a head and a "
            "tail of one buffer, a base beside its window, two windows one row apart); a write to one "
            "beside a read of another only where their elements are proven disjoint",
            seen_in=lambda p: bool(p.mode.windows)),
    Feature(FUNC_GRAD, 0.15, "gradients taken by torch.func.grad of the program and its loss, compiled as one "
            "function (implies autograd); no custom op reads a value that requires grad (torch.func.grad refuses "
            "register_autograd's formulas, pytorch/pytorch#168393); never with the features of FUNC_GRAD_EXCLUDES",
            implies=(AUTOGRAD,), excludes=FUNC_GRAD_EXCLUDES, seen_in=lambda p: bool(p.mode.func_grad)),
)
