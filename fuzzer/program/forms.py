"""Statement forms: what a program statement may be, how it types and how it reads.

A form is an op spec in the NNSmith sense: it knows its category, how many tensor
operands it takes, which of them it writes, whether its result aliases its first
operand, the output dims it produces (or :class:`Illegal` when operands don't fit),
and the Python text it lowers to.  The generator (``generate``) decides *which*
operands to pick; the forms decide what is legal, so a shrunk or hand-written
program is checked by exactly the same rules as a generated one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from fuzzer.program import custom_ops, sizes
from fuzzer.program.sizes import Dims

# Categories of the ordinary (aten) forms; a custom form's category is what its op
# declares (custom_ops.PURE, MUTATING or EFFECTFUL).
ATEN = "aten"          # fresh result, no writes
VIEW = "view"          # result aliases operand 0
INPLACE = "inplace"    # writes operand 0, no result

#: Scalars the generator may use; kept small so values stay in a tame range.
CONSTANTS = (0.5, 2.0, -1.0, 1.5)
UNARY_FUNCTIONS = ("sin", "tanh", "relu", "sigmoid")


class Illegal(ValueError):
    """Operands or attributes that this form cannot take."""


@dataclass(frozen=True)
class Form:
    name: str
    category: str
    arity: int
    infer: Callable[[list[Dims], dict, dict[str, int]], Dims | None]
    render: Callable[[list[str], dict, list[Dims]], str]
    mutates: tuple[int, ...] = ()
    custom: str | None = None
    #: whether the form defines a value (in-place aten ops and None-returning
    #: custom ops do not)
    returns: bool = True

    @property
    def is_view(self) -> bool:
        return self.category == VIEW

    @property
    def is_custom(self) -> bool:
        return self.custom is not None


# ---------------------------------------------------------------- typing helpers

def _need_rank(dims: Dims, rank: int) -> None:
    if len(dims) < rank:
        raise Illegal(f"needs rank >= {rank}, got {len(dims)}")


def _same(a: Dims, b: Dims) -> Dims:
    if a != b:
        raise Illegal(f"shapes differ: {a} vs {b}")
    return a


def _broadcast_into(a: Dims, b: Dims) -> Dims:
    """b may broadcast into a by being a trailing suffix of a's dims."""
    if len(b) > len(a) or tuple(a[len(a) - len(b):]) != tuple(b):
        raise Illegal(f"{b} does not broadcast into {a}")
    return a


def _dim_attr(attrs: dict, dims: Dims) -> int:
    dim = attrs.get("dim", 0)
    if not isinstance(dim, int) or not 0 <= dim < len(dims):
        raise Illegal(f"dim {dim!r} out of range for rank {len(dims)}")
    return dim


def _const(attrs: dict) -> float:
    c = attrs.get("c")
    if c not in CONSTANTS:
        raise Illegal(f"constant {c!r} not in {CONSTANTS}")
    return c


def _replace(dims: Dims, i: int, new: str | None) -> Dims:
    out = list(dims)
    if new is None:
        del out[i]
    else:
        out[i] = new
    return tuple(out)


def _slice_text(arg: str, dim: int, stop: str) -> str:
    return f"{arg}[{':, ' * dim}: {stop}]"


# ------------------------------------------------------------------- aten forms

def _infer_binary(t, attrs, m):
    return _broadcast_into(t[0], t[1])


def _infer_unary(t, attrs, m):
    if attrs.get("fn") not in UNARY_FUNCTIONS:
        raise Illegal(f"unknown function {attrs.get('fn')!r}")
    return t[0]


def _infer_sum(t, attrs, m):
    return _replace(t[0], _dim_attr(attrs, t[0]), None)


def _infer_head(t, attrs, m):
    dim = _dim_attr(attrs, t[0])
    return _replace(t[0], dim, sizes.half(t[0][dim]))


def _infer_narrow(t, attrs, m):
    dim = _dim_attr(attrs, t[0])
    if sizes.smallest(t[0][dim], m) < 1:
        raise Illegal(f"narrow needs dim {t[0][dim]!r} >= 1 for every binding")
    return _replace(t[0], dim, sizes.minus_one(t[0][dim]))


def _infer_transpose(t, attrs, m):
    _need_rank(t[0], 2)
    return (t[0][1], t[0][0]) + tuple(t[0][2:])


def _infer_inplace_scale(t, attrs, m):
    _const(attrs)
    return None


def _infer_inplace_binary(t, attrs, m):
    _broadcast_into(t[0], t[1])
    return None


ATEN_FORMS: tuple[Form, ...] = (
    Form("add", ATEN, 2, _infer_binary, lambda a, at, d: f"{a[0]} + {a[1]}"),
    Form("mul", ATEN, 2, _infer_binary, lambda a, at, d: f"{a[0]} * {a[1]}"),
    Form("scale", ATEN, 1, lambda t, at, m: (_const(at), t[0])[1],
         lambda a, at, d: f"{a[0]} * {at['c']}"),
    Form("unary", ATEN, 1, _infer_unary, lambda a, at, d: f"torch.{at['fn']}({a[0]})"),
    Form("sum", ATEN, 1, _infer_sum, lambda a, at, d: f"{a[0]}.sum({at['dim']})"),
    Form("clone", ATEN, 1, lambda t, at, m: t[0], lambda a, at, d: f"{a[0]}.clone()"),
    Form("head", VIEW, 1, _infer_head,
         lambda a, at, d: _slice_text(a[0], at["dim"], sizes.half(d[0][at["dim"]]))),
    Form("narrow", VIEW, 1, _infer_narrow,
         lambda a, at, d: f"{a[0]}.narrow({at['dim']}, 1, {_py(d[0][at['dim']])} - 1)"),
    Form("transpose", VIEW, 1, _infer_transpose, lambda a, at, d: f"{a[0]}.transpose(0, 1)"),
    Form("unsqueeze", VIEW, 1, lambda t, at, m: ("1",) + tuple(t[0]),
         lambda a, at, d: f"{a[0]}.unsqueeze(0)"),
    Form("add_", INPLACE, 2, _infer_inplace_binary, lambda a, at, d: f"{a[0]}.add_({a[1]})",
         mutates=(0,), returns=False),
    Form("mul_", INPLACE, 1, _infer_inplace_scale, lambda a, at, d: f"{a[0]}.mul_({at['c']})",
         mutates=(0,), returns=False),
    Form("copy_", INPLACE, 2, _infer_inplace_binary, lambda a, at, d: f"{a[0]}.copy_({a[1]})",
         mutates=(0,), returns=False),
)


def _py(expr: str) -> str:
    """A dim expression as code: symbols are locals of the generated function."""
    return expr if (sizes.is_symbol(expr) or expr.isdigit()) else f"({expr})"


# ----------------------------------------------------------------- custom forms

def _custom_call(name: str, extra: Callable[[list[Dims], dict], str] | None = None):
    def render(args, attrs, dims):
        parts = list(args)
        if extra is not None:
            parts.append(extra(dims, attrs))
        parts.append(str(attrs["site"]))
        return f"torch.ops.{custom_ops.NAMESPACE}.{name}({', '.join(parts)})"
    return render


def _infer_same2(result: bool):
    def infer(t, attrs, m):
        dims = _same(t[0], t[1])
        return dims if result else None
    return infer


def _infer_rowsum(t, attrs, m):
    _need_rank(t[0], 1)
    return tuple(t[0][:-1])


def _infer_p_head(t, attrs, m):
    _need_rank(t[0], 1)
    return (sizes.half(t[0][0]),) + tuple(t[0][1:])


def _infer_rank1(result):
    def infer(t, attrs, m):
        _need_rank(t[0], 1)
        return result(t)
    return infer


def _custom(name: str, arity: int, infer, mutates=(), extra=None) -> Form:
    op = custom_ops.BY_NAME[name]
    return Form(name, op.declaration, arity, infer, _custom_call(name, extra), mutates=mutates,
                custom=name, returns=op.returns)


CUSTOM_FORMS: tuple[Form, ...] = (
    _custom("p_sin", 1, lambda t, at, m: t[0]),
    _custom("p_mix", 2, _infer_same2(True)),
    _custom("p_rowsum", 1, _infer_rowsum),
    _custom("p_head", 1, _infer_p_head, extra=lambda d, at: _py(sizes.half(d[0][0]))),
    _custom("m_addto", 2, _infer_same2(False), mutates=(0,)),
    _custom("m_scale", 1, lambda t, at, m: None, mutates=(0,)),
    _custom("m_shift", 2, lambda t, at, m: (_need_rank(t[0], 1), _same(t[0], t[1]))[1],
            mutates=(0,)),
    _custom("m_cumrow", 1, _infer_rank1(lambda t: None), mutates=(0,)),
    _custom("m_swap", 2, lambda t, at, m: (_need_rank(t[0], 1), _same(t[0], t[1]))[1][1:],
            mutates=(0, 1)),
    _custom("e_log", 1, lambda t, at, m: None),
    _custom("e_tap", 1, lambda t, at, m: t[0]),
)

FORMS: dict[str, Form] = {f.name: f for f in ATEN_FORMS + CUSTOM_FORMS}

assert {f.custom for f in CUSTOM_FORMS} == set(custom_ops.BY_NAME), "every custom op needs a form"


def form(name: str) -> Form:
    try:
        return FORMS[name]
    except KeyError:
        raise Illegal(f"unknown statement form {name!r}") from None


def category_of(name: str) -> str:
    """A form's category: what its custom op declares, or its aten category."""
    return form(name).category
