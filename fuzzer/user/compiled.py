"""What the compiler does with a user's op: call its kernel, or compute it itself.

A value is compared exactly only where eager and the compiled program share it bit for
bit (``fuzzer.program.exact``).  An op's own kernel gives the same bits in both, but an
op having a kernel does not make the compiled program call it.  On its way through
``torch.compile`` with Inductor an op is, in this order:

* traced through, where its only kernel is a composite one (CompositeImplicitAutograd,
  no backend or CompositeExplicitAutograd kernel): AOT Autograd's tracing runs that
  kernel and records the torch ops it calls;
* decomposed, where Inductor's decomposition table has it (``select_decomp_table()``
  in ``torch/_inductor/decomposition.py``, the table ``compile_fx`` hands AOT
  Autograd when it is given none);
* lowered, where ``torch._inductor.lowering.lowerings`` (or ``user_lowerings``) holds
  a lowering that is not a fallback handler: ``GraphLowering.call_function``
  (``torch/_inductor/graph.py``) runs it and Inductor writes the op's arithmetic
  itself.  ``quantized_decomposed::quantize_per_tensor`` has a kernel of its own
  (CompositeExplicitAutograd) and a lowering that writes ``round(x * (1 / scale))``
  into Inductor's kernel, fused with whatever feeds it: its codes are the compiler's
  arithmetic, not the op's kernel's;
* otherwise called: an op with no lowering gets a fallback (``make_fallback``, whose
  handler is marked ``_is_fallback_handler``), an extern kernel that runs the op's
  own kernel.  dcefuzz's own ops (``torch.library.custom_op``) are called so.

Only a called op's results are opaque.  The tables are read when the op is read, not
off a compile: importing ``torch._inductor.lowering`` fills every one of them (it
imports its kernel, quantized, jagged and oneDNN lowerings), and a compile adds
fallbacks only, which read as called before and after it, so the read says what a
compile would do without paying for one (``tests/test_libraries.py`` checks it against
Inductor's code for an op of each kind).  A lowering that falls back for some inputs
only (``aten::cumsum``'s) counts as lowered, and one registered for the op's packet
counts for every overload: both err toward fewer exact comparisons, never toward
exact ones of what the compiler computed.  Inductor's tables are read whatever
backend a campaign compiles with: a program is drawn before its backend is chosen,
and the other backends decompose no more than Inductor does.
"""

from __future__ import annotations

import enum


class Treatment(enum.Enum):
    """What the compiled program does with an op's call."""

    TRACED = "traced through (its only kernel is composite)"
    DECOMPOSED = "decomposed by Inductor"
    LOWERED = "lowered by Inductor"
    CALLED = "called (a fallback to its own kernel)"

    @property
    def opaque(self) -> bool:
        """The compiler sees only the call, and never computes what the op does."""
        return self is Treatment.CALLED


def treatment(op) -> Treatment:
    """What Inductor does with the ``OpOverload`` ``op``, or the op named so
    (``ns::name``, its default overload, or ``ns::name.overload``)."""
    if isinstance(op, str):
        op = overload_of(op)
    if is_composite(op.name()):
        return Treatment.TRACED
    from torch._inductor import lowering
    from torch._inductor.decomposition import select_decomp_table

    if op in select_decomp_table():
        return Treatment.DECOMPOSED
    if op in getattr(lowering, "user_lowerings", {}):
        return Treatment.LOWERED
    found = [lowering.lowerings[k] for k in (op, op.overloadpacket) if k in lowering.lowerings]
    if any(not _falls_back(fn) for fn in found):
        return Treatment.LOWERED
    return Treatment.CALLED


def _falls_back(fn) -> bool:
    """Whether a lowering only calls the op's kernel: ``fallback_handler``'s handler
    (marked ``_is_fallback_handler``, and named so wherever the mark is not set)."""
    return (bool(getattr(fn, "_is_fallback_handler", False))
            or getattr(fn, "__qualname__", "") == "fallback_handler.<locals>.handler")


def overload_of(qualname: str):
    """The ``OpOverload`` of ``ns::name`` (its default) or ``ns::name.overload``."""
    import torch

    namespace, name = qualname.split("::")
    base, _, overload = name.partition(".")
    return getattr(getattr(getattr(torch.ops, namespace), base), overload or "default")


def is_composite(qualname: str) -> bool:
    """Whether the op has only a composite kernel here (CompositeImplicitAutograd, no
    backend kernel of its own): the compiler traces through it rather than calling it."""
    import torch

    if not torch._C._dispatch_has_kernel_for_dispatch_key(qualname, "CompositeImplicitAutograd"):
        return False
    return not any(torch._C._dispatch_has_kernel_for_dispatch_key(qualname, key)
                   for key in ("CPU", "CUDA", "CompositeExplicitAutograd"))
