"""An input swapped onto new storage by ``set_`` (the ``input-swaps`` feature).

Real code swaps a parameter or a buffer onto another storage: FSDP points a parameter at
the storage it gathered, a cache is pointed at a buffer it was handed.  Where torch
compiles that on a graph input is aten's ``set_.source_Tensor`` under ``no_grad``:
AOTAutograd keeps it in the graph (Note [set_() Input Mutations in AOTAutograd],
``torch/_functorch/_aot_autograd``), while Dynamo breaks the graph at ``Tensor.set_`` on
an input ("an inplace view on a graph input"), so a program calls it as FSDP does, through
a helper.  ``set_input`` swaps input ``x`` (operand 0: a module's buffer where the
program is a module) onto the storage of ``z`` (operand 1, of ``x``'s dims: a value the
program made, or another input); ``x`` is not read again (reading ``z`` reads what it now
holds) and no longer written.  ``set_scaled`` swaps ``x`` onto a fresh ``x * c``, as
an update computed out of place is swapped in.

What torch does not support is never drawn (``storage.Swaps``): an input written
before its ``set_`` (the Note: "not currently handled"), a write after it to the
storage it now has (AOTAutograd asserts every mutation of such an input is under
``no_grad``), an input another input aliases.  Inside a custom op a ``set_`` of an
argument is never drawn either: ``custom_op`` declares writes of data, and input
metadata mutation is "banned on custom ops" (``can_auto_functionalize``,
``torch/_higher_order_ops/auto_functionalize.py``).  The views of ``x``'s old storage
made before the swap still read what it held, and the generator reads them after it
(``Form.then``): a compiled program must too.
"""

from __future__ import annotations

from fuzzer.program.feature_record import Feature
from fuzzer.program.form_record import (
    INPLACE,
    NO_BACKWARD,
    Form,
    Shrink,
    draw_const,
    fits_same_dims,
    infer_inplace_scale,
    infer_same2,
)

INPUT_SWAPS = "input-swaps"
#: how its forms are drawn (``form_draw.CATEGORY_WEIGHTS``): a category of their own, not lost among the views
INPUT_SWAP = "input-swap"

FEATURES: tuple[Feature, ...] = (
    Feature(INPUT_SWAPS, 0.2, "an input (a module's buffer) swapped by set_ onto the storage of a value the "
            "program made, as FSDP swaps a parameter (aten's set_ under no_grad); the views of its old storage "
            "read after the swap", excludes=("module-carry",)),
)
#: the helper the form calls: Dynamo traces aten's ``set_`` on a graph input, not ``Tensor.set_``
HELPER = "set_input"
HELPER_SOURCE = (f"def {HELPER}(x, z):\n"
                 '    """`x.set_(z)` as a parameter is swapped: aten\'s set_ under no_grad (the one set_ of an '
                 'input torch compiles)."""\n'
                 "    with torch.no_grad():\n"
                 "        return torch.ops.aten.set_.source_Tensor(x, z)\n")

def _swap(name: str, arity: int, infer, render, shrink: Shrink, **more) -> Form:
    return Form(name, INPLACE, arity, infer, render, mutates=(0,), returns=False, consumes=(0,), consumes_input=True,
                feature=INPUT_SWAPS, grad=NO_BACKWARD, helpers=lambda stmt, plain: {HELPER: HELPER_SOURCE},
                then=("clone", "unary"), drawn_as=INPUT_SWAP, shrink=shrink, **more)


#: each toward a write of the values the swap gives the input (the swap dropped); after
#: it, a read of a view of the storage it left
FORMS: tuple[Form, ...] = (
    _swap("set_input", 2, infer_same2(False), lambda a, at, d: f"{HELPER}({a[0]}, {a[1]})", Shrink(("copy_",), 3),
          fits=fits_same_dims),
    _swap("set_scaled", 1, infer_inplace_scale, lambda a, at, d: f"{HELPER}({a[0]}, {a[0]} * {at['c']})",
          Shrink(("mul_",), 3), draw=draw_const),
)
