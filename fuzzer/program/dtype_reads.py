"""Reads through ``view(dtype)`` across later writes (the ``dtype-reads`` feature).

Real code reads a float's bits through an integer view of it (a sign cleared, a copy of
the bits) and then writes the tensor through another view of it (a slice assignment).
The read made a value of its own, so its value is the one before the write, whatever
view the write goes through; a compiler that reads the bits lazily must not read them
after the write.  The forms:

* ``sign_clear``: ``(x.view(<int of x's size>) & <all bits but the sign>).view(x.dtype)``,
  ``|x|`` read through the integer view: an integer view of the same element size
  (``Tensor.view(dtype)``), so it takes any strides;
* ``bits_copy``: ``x.view(<int of x's size>).clone().view(x.dtype)``, a copy made of
  the bits;
* ``trim_bits``: ``x.float().view(torch.int16).bitwise_and(-2).bitwise_and_(-3)
  .view(torch.float32).to(x.dtype)``, the two lowest bits of every 16-bit word of the
  float32 cleared (mantissa bits, so sign and exponent stay: truncation, as code that
  emulates a narrower float writes it), the second in place on the copy the first
  made, the copy viewed back.  In a float32 program ``float()`` and ``to`` are ``x``
  itself, so the view is of ``x``, to a dtype of another element size: over a view
  whose last dim has stride 1 (``Form.unit_last``, ``width_forms``' rule).  Through
  float32 whatever the program's dtype, so the float64 reference, whose ``float()``
  gives back the float32 it was raised from, clears the same bits; that holds for
  exact operands only (``Form.exact_operands``: a computed float one ulp off eager's
  may truncate across a cleared bit, 2 % away), so only those are read, of a last
  dim of at least 1 (an empty copy's strides are not the view back's);
* ``slice_set``: ``x[..., :h] = y[..., :h]`` along ``dim``, ``h`` half of it: a write
  of a second operand of ``x``'s dims through a slice;
* ``slice_fill``: ``x[..., h:] = c``: a constant through the other half.

After a read the generator tries a slice write of the tensor it read (``Form.then``).
No read has a backward (``NO_BACKWARD``: a view to an integer dtype is not
differentiable), so none reads a value that requires grad.  A slice write whose
second operand overlaps the memory it writes is the IR's overlap rule's
(``fuzzer.program.storage``).
"""

from __future__ import annotations

from fuzzer.program import sizes
from fuzzer.program.feature_record import Feature
from fuzzer.program.form_record import (
    ATEN,
    INPLACE,
    NO_BACKWARD,
    Form,
    Illegal,
    Shrink,
    const,
    dim_attr,
    draw_const,
    draw_dim,
    infer_same,
    need_rank,
    same_dims,
)
from fuzzer.program.strided_forms import INT_OF_SIZE

DTYPE_READS = "dtype-reads"

FEATURES: tuple[Feature, ...] = (
    Feature(DTYPE_READS, 0.2, "reads through view(dtype) to an integer of the same size (a sign bit cleared, a "
            "copy of the bits) or to 16-bit words (low bits cleared, the second in place), followed by writes "
            "of the same tensor through a slice"),
)
#: every bit but the sign of an integer of each element size, as the program's text writes it
SIGN_CLEAR = "{2: 0x7FFF, 4: 0x7FFFFFFF, 8: 0x7FFFFFFFFFFFFFFF}"


def _bits(arg: str) -> str:
    return f"{arg}.view({INT_OF_SIZE}[{arg}.element_size()])"


def _infer_trim(t, attrs, m):
    """``bitwise_and`` gives an empty tensor row-major strides over sizes of at least 1
    (``(1, 1)`` for ``(2, 0)``), which the view back to float32 refuses (each stride but
    the last divisible by 2); a last dim of at least 1 for every binding keeps every
    stride a multiple of the words' last dim, even."""
    need_rank(t[0], 1)
    if sizes.smallest(t[0][-1], m) < 1:
        raise Illegal(f"trim_bits needs its last dim {t[0][-1]!r} >= 1 for every binding")
    return t[0]


def _trim(a, at, d) -> str:
    return (f"{a[0]}.float().view(torch.int16).bitwise_and({TRIM[0]}).bitwise_and_({TRIM[1]})"
            f".view(torch.float32).to({a[0]}.dtype)")


def _half(arg: str, dim: int) -> str:
    return f"{arg}.size({dim}) // 2"


def _along(arg: str, dim: int) -> str:
    return f"{arg}[{':, ' * dim}"


def _infer_set(t, attrs, m):
    dim_attr(attrs, t[0])
    same_dims(t[0], t[1])
    return None


def _infer_fill(t, attrs, m):
    dim_attr(attrs, t[0])
    const(attrs)
    return None


def _draw_fill(rng, dims, fresh) -> dict:
    return {**draw_dim(rng, dims, fresh), **draw_const(rng, dims, fresh)}


#: the masks ``trim_bits`` clears a 16-bit word's two lowest bits with, one at a time
TRIM = (-2, -3)

#: what a read tries next on the tensor it read: a write of it through a slice
AFTER_READ = ("slice_set", "slice_fill")

FORMS: tuple[Form, ...] = (
    Form("sign_clear", ATEN, 1, infer_same,
         lambda a, at, d: f"({_bits(a[0])} & {SIGN_CLEAR}[{a[0]}.element_size()]).view({a[0]}.dtype)",
         feature=DTYPE_READS, grad=NO_BACKWARD, then=AFTER_READ, shrink=Shrink(("bits_copy", "clone"), 4)),
    Form("bits_copy", ATEN, 1, infer_same, lambda a, at, d: f"{_bits(a[0])}.clone().view({a[0]}.dtype)",
         feature=DTYPE_READS, grad=NO_BACKWARD, then=AFTER_READ, shrink=Shrink(("clone",), 3)),
    Form("trim_bits", ATEN, 1, _infer_trim, _trim, feature=DTYPE_READS, grad=NO_BACKWARD, then=AFTER_READ,
         unit_last=True, exact_operands=True, shrink=Shrink(("bits_copy", "clone"), 4)),
    Form("slice_set", INPLACE, 2, _infer_set,
         lambda a, at, d: (f"{_along(a[0], at['dim'])}:{_half(a[0], at['dim'])}] = "
                           f"{_along(a[1], at['dim'])}:{_half(a[0], at['dim'])}]"),
         mutates=(0,), returns=False, feature=DTYPE_READS, draw=draw_dim, shrink=Shrink(("copy_", "mul_"), 3)),
    Form("slice_fill", INPLACE, 1, _infer_fill,
         lambda a, at, d: f"{_along(a[0], at['dim'])}{_half(a[0], at['dim'])}:] = {at['c']}",
         mutates=(0,), returns=False, feature=DTYPE_READS, draw=_draw_fill, shrink=Shrink(("mul_",), 3)),
)
