"""Integer and bool tensors through aten forms (the ``int-tensors`` feature).

Real code makes int64, int32 and bool values with ordinary tensor ops and feeds them
back into its floats: masks (a comparison, ``&``, ``~``) into ``masked_fill`` and
``where``, indices (``argmax``, a stable ``argsort``, ``nonzero``) into
``index_select`` and ``gather``, counts (the sum of a mask, ``count_nonzero``), and
integer arithmetic between them (floor division and remainder by a constant, bitwise
ops), ``view(dtype)`` included.  Each form here is one of those.

What is compared exactly (``fuzzer.program.exact``): a form that makes an integer or
bool value has nothing to round (``Form.exact_result``): a comparison, an ``argmax``
(its ties go to the first index, as documented), a *stable* ``argsort`` (an unstable
one orders ties as it likes), a truncating ``.to(torch.int32)``, integer arithmetic on
small values.  Its result is exact when its operands are, so it may only read exact
values: a float the compiler computed (a sum, a product) may round either way and flip
an index or a mask bit with it, and a program never makes an integer of one.  The
floats the integers feed (``x.masked_fill(m, c)``, ``x * i``) are computed as any
float is, and judged with the tolerances.

An index is brought into range for every binding by the form that uses it: ``i %
x.size(d)`` (``index_select`` takes it flattened), floored, so never negative, with
``x.size(d) >= 1`` for every binding (an integer remainder by 0 raises).  Divisors are constants, never 0; values stay far
from overflow (inputs are standard normal, sizes small, a program short).
"""

from __future__ import annotations

from fuzzer.program import sizes
from fuzzer.program.feature_record import Feature
from fuzzer.program.form_record import (
    ATEN,
    INTEGER,
    INTEGER_SOURCE,
    VIEW,
    Form,
    Illegal,
    Shrink,
    broadcast_into,
    const,
    dim_attr,
    draw_const,
    draw_dim,
    draw_size,
    infer_same,
    need_rank,
    py_dim,
    replace_dim,
    same_dims,
)

INT_TENSORS = "int-tensors"

FEATURES: tuple[Feature, ...] = (
    Feature(INT_TENSORS, 0.25, "int64, int32, uint8 and bool values of aten forms: masks (comparisons, logic), "
            "indices (argmax, stable argsort, nonzero), counts, view(dtype), integer arithmetic (floor "
            "division, remainder, bitwise), consumed by masked_fill, where, index_select and gather"),
)
MASK, LONG, INT, BYTE = "bool", "int64", "int32", "uint8"
#: the constant divisors of floor division and remainder: never 0 (an integer division
#: by zero raises), and 2 and 3 tell floored from truncated division on negative values
DIVISORS = (2, 3)
#: the bitwise and logical ops, and the divisions, as the program's text writes them
BITWISE = ("&", "|", "^")
DIVISIONS = ("//", "%")


# operands that fit (``Form.fits``), each asked of the operands chosen so far

def _any(operands) -> bool:
    return True


def _suffix(operands) -> bool:
    """Every later operand broadcasts into the first (a trailing suffix of its dims)."""
    first = tuple(operands[0])
    return all(len(d) <= len(first) and first[len(first) - len(d):] == tuple(d) for d in operands[1:])


def _same(operands) -> bool:
    return all(tuple(d) == tuple(operands[0]) for d in operands)


def _ranked(operands) -> bool:
    return len(operands[0]) >= 1


# draws and typing

def _draw_divisor(rng, dims, fresh) -> dict:
    return {"k": rng.choice(DIVISORS)}


def _draw_bitwise(rng, dims, fresh) -> dict:
    return {"op": rng.choice(BITWISE)}


def _divisor(attrs) -> int:
    if attrs.get("k") not in DIVISORS:
        raise Illegal(f"divisor {attrs.get('k')!r} not in {DIVISORS}")
    return attrs["k"]


def _bitwise(attrs) -> str:
    if attrs.get("op") not in BITWISE:
        raise Illegal(f"bitwise op {attrs.get('op')!r} not in {BITWISE}")
    return attrs["op"]


def _nonempty_dim(t, attrs, m) -> int:
    """The ``dim`` attribute, of a size at least 1 for every binding (an ``argmax`` of
    an empty dim raises, and an index's remainder by its size would divide by 0)."""
    dim = dim_attr(attrs, t[0])
    if sizes.smallest(t[0][dim], m) < 1:
        raise Illegal(f"needs dim {t[0][dim]!r} >= 1 for every binding")
    return dim


def _argmax(t, attrs, m):
    return replace_dim(t[0], _nonempty_dim(t, attrs, m), None)


def _masked_fill(t, attrs, m):
    """A constant ``c``; the mask (operand 1) broadcasts into operand 0."""
    const(attrs)
    return broadcast_into(t[0], t[1])


def _reduce(t, attrs, m):
    return replace_dim(t[0], dim_attr(attrs, t[0]), None)


def _same_dim(t, attrs, m):
    dim_attr(attrs, t[0])
    return t[0]


def _binary(t, attrs, m):
    return broadcast_into(t[0], t[1])


def _bitwise_binary(t, attrs, m):
    _bitwise(attrs)
    return broadcast_into(t[0], t[1])


def _words(t, attrs, m):
    """int64 read as int32 pairs: the last dim doubles."""
    need_rank(t[0], 1)
    return t[0][:-1] + (f"2 * {py_dim(t[0][-1])}",)


def _where(t, attrs, m):
    broadcast_into(t[0], t[1])
    return broadcast_into(t[0], t[2])


def _select(t, attrs, m):
    """``index_select`` by the flattened index: the dim becomes the index's element count."""
    count = " * ".join(py_dim(d) for d in t[1]) or "1"
    return replace_dim(t[0], _nonempty_dim(t, attrs, m), count)


def _gather(t, attrs, m):
    _nonempty_dim(t, attrs, m)
    return same_dims(t[0], t[1])


def _masked(t, attrs, m):
    same_dims(t[0], t[1])
    if not isinstance(attrs.get("size"), str) or not sizes.is_unbacked(attrs["size"]):
        raise Illegal(f"a size from data needs a name like u3, got {attrs.get('size')!r}")
    return (attrs["size"],)


def _nonzero(t, attrs, m):
    need_rank(t[0], 1)
    if not isinstance(attrs.get("size"), str) or not sizes.is_unbacked(attrs["size"]):
        raise Illegal(f"a size from data needs a name like u3, got {attrs.get('size')!r}")
    return (attrs["size"], str(len(t[0])))


def _form(name: str, arity: int, infer, render, operands=(), result: str | None = None, **fields) -> Form:
    """A form of the feature: ``operands`` their dtypes (None: the program's float),
    ``result`` the fixed dtype it makes (None: a float), which it computes exactly;
    ``fields`` the record's others (its category ``ATEN`` and operands that fit any
    unless they say otherwise)."""
    fields.setdefault("fits", _any)
    return Form(name, fields.pop("category", ATEN), arity, infer, render, feature=INT_TENSORS,
                operand_dtypes=tuple(operands), result_dtype=(lambda at, r=result: r) if result else None,
                exact_result=result is not None,
                drawn_as=INTEGER if any(o is not None for o in operands) else INTEGER_SOURCE, **fields)


def _modulo(a, at) -> str:
    return f"{a[1]} % {a[0]}.size({at['dim']})"


def _divmod(t, attrs, m):
    if attrs.get("op") not in DIVISIONS:
        raise Illegal(f"division {attrs.get('op')!r} not in {DIVISIONS}")
    _divisor(attrs)
    return t[0]


def _draw_divmod(rng, dims, fresh) -> dict:
    return {"op": rng.choice(DIVISIONS), "k": rng.choice(DIVISORS)}


def _divisions(dt: str) -> Form:
    """Floor division or remainder of ``dt`` by a constant: floored, as torch's are."""
    return _form(f"divmod_{dt}", 1, _divmod, lambda a, at, d: f"{a[0]} {at['op']} {at['k']}", (dt,), dt,
                 draw=_draw_divmod)


def _index_select(dt: str) -> Form:
    return _form(f"index_select_{dt}", 2, _select,
                 lambda a, at, d: f"{a[0]}.index_select({at['dim']}, {a[1]}.flatten() % {a[0]}.size({at['dim']}))",
                 (None, dt), fits=_ranked, draw=draw_dim)


#: a float made from a mask or an index, toward a copy of the float (ranking above it)
TO_CLONE = Shrink(("clone",), 3)

#: the feature's forms; two masks shrink toward one, a comparison toward ``positive``
FORMS: tuple[Form, ...] = (
    # integers and masks made from floats: exact only from exact floats
    _form("argmax", 1, _argmax,
          lambda a, at, d: f"{a[0]}.argmax({at['dim']})", (None,), LONG, draw=draw_dim),
    _form("argsort", 1, _same_dim, lambda a, at, d: f"torch.argsort({a[0]}, dim={at['dim']}, stable=True)",
          (None,), LONG, draw=draw_dim),
    _form("count_nonzero", 1, _reduce, lambda a, at, d: f"torch.count_nonzero({a[0]}, {at['dim']})",
          (None,), LONG, draw=draw_dim),
    _form("positive", 1, infer_same, lambda a, at, d: f"{a[0]} > 0", (None,), MASK),
    _form("less", 2, _binary, lambda a, at, d: f"{a[0]} < {a[1]}", (None, None), MASK, fits=_suffix,
          shrink=Shrink(("positive",), 3)),
    _form("to_int32", 1, infer_same, lambda a, at, d: f"{a[0]}.to(torch.int32)", (None,), INT),
    # masks
    _form("logic", 2, _bitwise_binary, lambda a, at, d: f"{a[0]} {at['op']} {a[1]}", (MASK, MASK), MASK,
          fits=_suffix, draw=_draw_bitwise, shrink=Shrink(("invert",), 3)),
    _form("invert", 1, infer_same, lambda a, at, d: f"~{a[0]}", (MASK,), MASK),
    _form("count", 1, _reduce, lambda a, at, d: f"{a[0]}.sum({at['dim']})", (MASK,), LONG, draw=draw_dim),
    _form("mask_bytes", 1, infer_same, lambda a, at, d: f"{a[0]}.view(torch.uint8)", (MASK,), BYTE,
          category=VIEW),
    _form("widen_uint8", 1, infer_same, lambda a, at, d: f"{a[0]}.long()", (BYTE,), LONG),
    _form("widen_int32", 1, infer_same, lambda a, at, d: f"{a[0]}.long()", (INT,), LONG),
    # a copy in row-major strides first: ``contiguous()`` keeps a size-1 last dim's stride,
    # which ``view`` to another element size refuses
    _form("words", 1, _words,
          lambda a, at, d: f"{a[0]}.clone(memory_format=torch.contiguous_format).view(torch.int32)", (LONG,), INT,
          fits=_ranked),
    _form("nonzero", 1, _nonzero, lambda a, at, d: f"torch.nonzero({a[0]})", (MASK,), LONG, fits=_ranked,
          draw=draw_size),
    # int64 arithmetic (a sum of any integer is one), and an int32's
    _form("add_int64", 2, _binary, lambda a, at, d: f"{a[0]} + {a[1]}", (LONG, LONG), LONG, fits=_suffix),
    _form("bitwise_int64", 2, _bitwise_binary, lambda a, at, d: f"{a[0]} {at['op']} {a[1]}", (LONG, LONG), LONG,
          fits=_suffix, draw=_draw_bitwise),
    _form("sum_int64", 1, _reduce, lambda a, at, d: f"{a[0]}.sum({at['dim']})", (LONG,), LONG, draw=draw_dim),
    _form("positive_int64", 1, infer_same, lambda a, at, d: f"{a[0]} > 0", (LONG,), MASK),
    _divisions(LONG),
    _divisions(INT),
    # floats made from masks and indices: computed, judged with the tolerances; a mask or
    # an index shrinks away (the float it fed as a copy)
    _form("masked_fill_mask", 2, _masked_fill, lambda a, at, d: f"{a[0]}.masked_fill({a[1]}, {at['c']})",
          (None, MASK), fits=_suffix, draw=draw_const, shrink=TO_CLONE),
    _form("where_mask", 3, _where, lambda a, at, d: f"torch.where({a[1]}, {a[0]}, {a[2]})", (None, MASK, None),
          fits=_suffix, shrink=TO_CLONE),
    *(_form(f"mul_{dt}", 2, _binary, lambda a, at, d: f"{a[0]} * {a[1]}", (None, dt), fits=_suffix,
            shrink=TO_CLONE) for dt in (MASK, LONG)),
    _index_select(LONG),
    _index_select(INT),
    _form("gather", 2, _gather, lambda a, at, d: f"{a[0]}.gather({at['dim']}, {_modulo(a, at)})", (None, LONG),
          fits=_same, draw=draw_dim, shrink=TO_CLONE),
    _form("mask_select", 2, _masked, lambda a, at, d: f"{a[0]}[{a[1]}]", (None, MASK), fits=_same,
          draw=draw_size),
)
