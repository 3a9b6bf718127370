"""Custom ops whose kernels swap or resize storage (feature ``storage-swaps``).

Kernels written for real libraries ``resize_`` and ``set_`` tensors: an out= argument
resized to the size the kernel computes (ATen's ``resize_output``), a workspace grown
to the data, a tensor set onto an argument's storage to write it through.  The ops
here do each, declaring what they write:

* ``r_resize``: ``out.resize_(x.shape)`` then ``out = sin(x)``; declared as writing
  ``out``, which its forms pass with ``x``'s dims, so the resize keeps ``out``'s sizes
  and strides and the kernel writes its data only;
* ``r_setw``: a fresh tensor ``set_`` onto ``a``'s storage, and ``a * 0.5 + 1`` written
  through it: a write of ``a``, declared;
* ``r_workspace``: pure; a scratch buffer ``resize_``d from nothing to ``x``'s element
  count, written whole by a copy, and ``sin`` of it returned in ``x``'s shape.

A ``custom_op``'s ``mutates_args`` declares writes of a tensor's data: an op that
resized a written argument to other sizes, or ``set_`` it onto another storage,
would change its metadata, which ``custom_op`` cannot declare (aten tags such ops
``inplace_view``), and auto-functionalization copies the kernel's result back into
the argument as it was.  No op here does; each changes only what its kernel made.
"""

from __future__ import annotations

from fuzzer.program.feature_record import Feature
from fuzzer.program.form_record import NO_BACKWARD, Form, Shrink, custom_form, infer_none, infer_same, infer_same2
from fuzzer.program.op_record import MUTATING, PURE, CustomOp, op_maker

FEATURE = "storage-swaps"

#: the feature of these ops and of the storage swaps in a program (``swap_forms``)
FEATURES: tuple[Feature, ...] = (
    Feature(FEATURE, 0.2, "set_ and resize_: a fresh tensor set onto a value's storage or a clone's, a "
            "fresh result swapped onto another storage, a buffer grown from nothing or shrunk; custom ops "
            "whose kernels resize their written argument to its own sizes, write it through a tensor set onto "
            "its storage, or resize a workspace"),
)


_op = op_maker(FEATURE)


OPS: tuple[CustomOp, ...] = (
    _op("r_resize", MUTATING, "out.resize_(x.shape) (its own sizes), then out = sin(x); returns None", '''
@torch.library.custom_op("dcefuzz::r_resize", mutates_args=("out",))
def r_resize(out: torch.Tensor, x: torch.Tensor, site: int) -> None:
    _hit("r_resize", site)
    out.resize_(x.shape)
    out.copy_(torch.sin(x))


@r_resize.register_fake
def _(out, x, site):
    return None
'''),
    _op("r_setw", MUTATING, "a = a * 0.5 + 1, written through a fresh tensor set_ onto a's storage", '''
@torch.library.custom_op("dcefuzz::r_setw", mutates_args=("a",))
def r_setw(a: torch.Tensor, site: int) -> None:
    _hit("r_setw", site)
    w = a.new_empty(0)
    w.set_(a)
    w.mul_(0.5).add_(1.0)


@r_setw.register_fake
def _(a, site):
    return None
'''),
    _op("r_workspace", PURE, "sin(x) through a workspace resize_d from nothing and written whole; fresh", '''
@torch.library.custom_op("dcefuzz::r_workspace", mutates_args=())
def r_workspace(x: torch.Tensor, site: int) -> torch.Tensor:
    _hit("r_workspace", site)
    buf = x.new_empty(0)
    buf.resize_(x.numel())
    buf.copy_(x.reshape(-1))
    return torch.sin(buf).view(x.shape)


@r_workspace.register_fake
def _(x, site):
    return x.new_empty(x.shape)
'''),
)


OP = {op.name: op for op in OPS}


#: the forms calling the ops, each toward the plain op of its kind: ``r_resize``'s
#: operands have one shape, so its resize keeps the written argument's sizes
FORMS: tuple[Form, ...] = (
    custom_form(OP["r_resize"], 2, infer_same2(False), mutates=(0,), feature=FEATURE,
                shrink=Shrink(("m_addto", "m_scale"), 3)),
    custom_form(OP["r_setw"], 1, infer_none, mutates=(0,), feature=FEATURE, shrink=Shrink(("m_scale",), 3)),
    custom_form(OP["r_workspace"], 1, infer_same, feature=FEATURE, grad=NO_BACKWARD, shrink=Shrink(("p_sin",), 3)),
)
