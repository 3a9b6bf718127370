"""subclass-part-lost: a tensor subclass rebuilt at a graph's edge gets its first inner tensor for every part.

Why this is realistic.  AOTAutograd traces a wrapper subclass by its inner tensors and,
at run time, rebuilds each subclass the graph returns (a user's output, or an input it
wrote) from the graph's flat outputs with ``__tensor_unflatten__``
(``subclass_utils.wrap_tensor_subclasses``).  2.13 replaced that data-driven loop by
straight-line code generated once per graph (``subclass_codegen._codegen_wrap_subclass``),
in which each inner tensor's slot among the flat outputs is an index the generator
tallies by hand, beside the outer sizes' and strides' symbols and nested subclasses; a
slip in that bookkeeping hands ``__tensor_unflatten__`` the wrong inner tensors, silently.

The regression planted here is such a slip, for the subclasses of user code (a class
defined outside torch, as a quantisation or distributed library's): every inner tensor
of a rebuilt subclass is read from its first one's slot, so a ``PairTensor`` comes back
with part ``b`` equal to part ``a``.  Its outer sizes, strides and class stay right, so
only a judge of the inner tensors sees it (SUBCLASS VALUES; a pair written in place
writes the wrong ``b`` back into the tensor it wraps too).

Patched: ``torch._functorch._aot_autograd.subclass_codegen._codegen_wrap_subclass`` (the
line it emits for the inner tensors' dict).
"""

from __future__ import annotations

import re

from fuzzer.faults._fault import MUTATION_LOST, Fault

WRAP = "torch._functorch._aot_autograd.subclass_codegen:_codegen_wrap_subclass"
#: the line that builds a rebuilt subclass's inner tensors, ``_out_inner_3 = {'a': x, 'b': y}``
_INNER = re.compile(r"(\s*_out_inner_\d+ = \{)(.*)(\}\s*)")
_ENTRY = re.compile(r"('[^']*'): ([^,]+)")


def first_part_everywhere(line: str) -> str:
    """``line`` with every inner tensor of the dict it builds read as the first one's
    (a line that builds none: unchanged)."""
    built = _INNER.fullmatch(line)
    if built is None:
        return line
    entries = _ENTRY.findall(built.group(2))
    if len(entries) < 2:
        return line
    first = entries[0][1].strip()
    return built.group(1) + ", ".join(f"{name}: {first}" for name, _ in entries) + built.group(3)


def _users(meta) -> bool:
    """A subclass of user code, not one of torch's own (``FakeTensor``, ``DTensor``, ...)."""
    kind = getattr(meta, "original_subclass_type", None) or type(getattr(meta, "original_subclass", None))
    return not getattr(kind, "__module__", "torch").startswith("torch")


def _build(current):
    original = current(WRAP)

    def _codegen_wrap_subclass(state, meta, *rest, **kwargs):
        if not _users(meta):
            return original(state, meta, *rest, **kwargs)
        had, emit = "emit" in vars(state), state.emit
        state.emit = lambda line, *a, **k: emit(first_part_everywhere(line), *a, **k)  # the slip
        try:
            return original(state, meta, *rest, **kwargs)
        finally:
            if had:
                state.emit = emit
            else:
                del state.emit

    return {WRAP: _codegen_wrap_subclass}


FAULTS = (
    Fault(name="subclass-part-lost", bug_class=MUTATION_LOST, expected_kind="wrong-output", dynamic_only=False,
          description=("AOTAutograd's generated rebuild of a user's tensor subclass at a graph's edge "
                       "(subclass_codegen._codegen_wrap_subclass, torch/_functorch/_aot_autograd) reads every "
                       "inner tensor from its first one's slot: a PairTensor returned by compiled code has part "
                       "b equal to part a"),
          targets=(WRAP,), build=_build, features=(("tensor-subclass", 1.0),)),
)
