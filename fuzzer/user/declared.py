"""What a user's op declares, read off its schema and registrations.

The compiler may rely on nothing else, so neither does dcefuzz: an argument is written
when its schema says ``Tensor(a!)`` (``mutates_args``), the op is effectful when an
effect is registered for it, pure otherwise.  Which tensors may go in and what comes
out are read the same way; the shapes they must have come from the op's signature
(``fuzzer.user.gufunc``), and the values of its scalar arguments from
:data:`SCALAR_VALUES` unless its module gives others.  A scalar is read by the type
the op means (``fuzzer.user.argtypes``: a dtype stored as ``int`` is a ``ScalarType``).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from fuzzer.program.custom_ops import EFFECTFUL, MUTATING, PURE
from fuzzer.user import argtypes, gufunc, values
from fuzzer.user.compiled import Treatment, overload_of, treatment
from fuzzer.user.gufunc import Gufunc

#: the values a number or flag argument takes unless the op's module or hints give
#: its own (``DCEFUZZ_SCALARS``): small, and none of them zero, so a scalar used as a
#: divisor or a count stays tame.  Drawn even where the op has a default: they are
#: what a caller passes.
SCALAR_VALUES: dict[str, tuple] = {k: argtypes.DEFAULT_VALUES[k] for k in ("int", "SymInt", "float", "bool")}
#: the elements a program passes in a ``Tensor[]`` argument (``Tensor(a!)[]``: each one
#: written): each is an operand of its own, named ``xs[0]``, ``xs[1]``; two, so that the
#: list has several without asking more of the generator's operands than it can find
LIST_LENGTH: int = 2


class Unsupported(ValueError):
    """An op dcefuzz cannot call: an argument or result of a type it does not make."""


@dataclass(frozen=True)
class Argument:
    name: str
    #: ``Tensor`` (also ``Tensor?``, always given a tensor) or a scalar type
    type: str
    written: bool = False
    keyword: bool = False
    #: a scalar's values (empty for a tensor, or for a scalar left at its default)
    values: tuple = ()
    #: a tensor's fixed dtype (``fuzzer.program.ir.FIXED_DTYPES``, from the hints);
    #: None: the program's own
    dtype: str | None = None
    #: the ``Tensor[]`` argument the tensor is an element of (None: it is an argument
    #: itself); a list's elements are consecutive, and a call passes them as one list
    element_of: str | None = None

    @property
    def is_tensor(self) -> bool:
        return self.type == "Tensor"

    def code(self, value, letters, first_tensor: str) -> str:
        """``value`` as program code (``fuzzer.user.argtypes.code``)."""
        return argtypes.code(self.type, value, letters, first_tensor)

    def python(self, value, sizes, device: str):
        """``value`` as the op receives it (``fuzzer.user.argtypes.python``)."""
        return argtypes.python(self.type, value, sizes, device)


@dataclass(frozen=True)
class UserOp:
    """One op of a user's library, as the compiler sees it.

    What it declares is not one kind alone: ``declaration`` says whether it writes
    (``mutating``) or not, and, if not, whether it has an effect (``effectful``) or
    is ``pure``; an op that writes and has a registered effect too is ``mutating``
    with ``effect`` set, and is judged both ways (its writes, and its calls' order).
    """

    qualname: str
    declaration: str
    arguments: tuple[Argument, ...]
    #: how many tensors it returns (0: it returns nothing)
    results: int
    gufunc: Gufunc = field(default_factory=Gufunc)
    #: an effect is registered for it (ORDERED): its calls are logged and their order judged
    effect: bool = False
    #: a backward formula is registered for it (``register_autograd``, or an autograd
    #: kernel): programs may take gradients through it
    backward: bool = False
    #: the results a program may take (None: every one): those of the program's dtype
    #: or a fixed one, of the shape the signature gives, and never None, as the
    #: declaration check found
    takes: tuple[int, ...] | None = None
    #: each result's fixed dtype (None: the program's own), as the declaration check
    #: found it (a quantiser's ``int8`` codes); None: all the program's own
    result_dtypes: tuple[str | None, ...] | None = None
    #: what the compiled program does with its calls (``fuzzer.user.compiled``): call
    #: its kernel, or trace through, decompose or lower it
    compiled: Treatment = Treatment.CALLED
    #: it refuses empty tensors (and only those), as the declaration check found:
    #: programs calling it keep every size at 1 or more
    nonempty: bool = False
    #: for each result, the index (among the tensor arguments) of the written argument
    #: it is, as the schema's alias annotations say (``Tensor(a!) x -> Tensor(a!)``):
    #: an op tagged ``torch.Tag.inplace`` or ``torch.Tag.out``; empty: fresh results
    aliases: tuple[int, ...] = ()

    @property
    def vmap_rule(self) -> bool:
        """Its library registered a vmap rule for it (``register_vmap``: a kernel at
        ``FuncTorchBatched``): programs may call it under ``torch.func.vmap``."""
        return has_kernel(self.qualname, "FuncTorchBatched")

    @property
    def autocast_rule(self) -> bool:
        """Its library registered an autocast rule for it (``register_autocast``: a kernel
        at ``AutocastCPU`` or ``AutocastCUDA``): programs may call it in an autocast region."""
        return any(has_kernel(self.qualname, key) for key in ("AutocastCPU", "AutocastCUDA"))

    @property
    def opaque(self) -> bool:
        """The compiler sees only its calls, never what it computes: only then are its
        results exact (``fuzzer.program.exact``)."""
        return self.compiled.opaque

    @property
    def kinds(self) -> tuple[str, ...]:
        """What it declares, all of it: ``(mutating, effectful)`` for an op that writes
        and has an effect too, which ``declaration`` alone calls ``mutating``."""
        return (MUTATING, EFFECTFUL) if self.declaration == MUTATING and self.effect else (self.declaration,)

    @property
    def kind(self) -> str:
        """:attr:`kinds` in one word for a table: ``mutating+effectful``."""
        return "+".join(self.kinds)

    def result_dtype(self, take: int) -> str | None:
        return self.result_dtypes[take] if self.result_dtypes is not None else None

    @property
    def taken(self) -> tuple[int, ...]:
        return self.takes if self.takes is not None else tuple(range(self.results))

    @property
    def tensors(self) -> list[Argument]:
        return [a for a in self.arguments if a.is_tensor]

    @property
    def scalars(self) -> list[Argument]:
        return [a for a in self.arguments if not a.is_tensor and a.values]

    @property
    def mutates(self) -> tuple[int, ...]:
        """Indices, among the tensor arguments, of those it declares it writes."""
        return tuple(i for i, a in enumerate(self.tensors) if a.written)

    @property
    def call(self) -> str:
        """How a program names it: ``torch.ops.ns.name`` (or ``.overload``)."""
        namespace, name = self.qualname.split("::")
        return f"torch.ops.{namespace}.{name}"

    def overload(self):
        return overload_of(self.qualname)

    def call_arguments(self, tensor, scalar) -> tuple[list, dict]:
        """The op's call as (positional, keyword) values: ``tensor(k)`` for its k-th
        tensor (the elements of a ``Tensor[]`` gathered into one list), ``scalar(arg)``
        for a scalar given values; a scalar left at its default is left out, and every
        argument after it goes by name."""
        args: list = []
        kwargs: dict = {}
        by_name, k, last = False, 0, None  # last: the list the previous tensor went into
        for arg in self.arguments:
            if arg.is_tensor:
                value, k = tensor(k), k + 1
                if arg.element_of is not None and arg.element_of == last:
                    (kwargs[arg.element_of] if arg.element_of in kwargs else args[-1]).append(value)
                    continue
                name, last = arg.element_of or arg.name, arg.element_of
                value = [value] if arg.element_of is not None else value
            elif arg.values:
                name, value, last = arg.name, scalar(arg), None
            else:
                by_name, last = True, None
                continue
            if arg.keyword or by_name:
                kwargs[name] = value
            else:
                args.append(value)
        return args, kwargs


def effect_of(qualname: str):
    """The effect registered for an op (None: none), on any torch from 2.11 on."""
    from torch._higher_order_ops import effects

    if hasattr(effects, "_get_effect"):
        return effects._get_effect(qualname)
    return effects.SIDE_EFFECTS.get(overload_of(qualname))


def read(qualname: str, signature: str | None = None, scalars: dict | None = None,
         dtypes: dict | None = None) -> UserOp:
    """The op's declaration; raises :class:`Unsupported` for an op dcefuzz cannot call,
    and ``gufunc.SignatureError`` for a signature that does not fit it.  ``dtypes``:
    the dtype a tensor argument takes, by name (hints)."""
    import torch

    from fuzzer.program.ir import FIXED_DTYPES

    scalars = scalars or {}
    try:
        op = overload_of(qualname)
    except (AttributeError, RuntimeError) as exc:
        raise Unsupported(f"{qualname}: no such op registered ({exc})") from None
    schema = op._schema
    fixed: dict[str, str] = {}
    for name, dtype in (dtypes or {}).items():
        if name not in {a.name for a in schema.arguments if _tensor_type(a) is not None}:
            raise Unsupported(f"{qualname}: a dtype given for an argument that is not one of its tensors: {name!r}")
        dtype = str(dtype).removeprefix("torch.")
        if dtype not in FIXED_DTYPES:
            raise Unsupported(f"{qualname}: argument {name!r} takes {dtype} tensors; programs make "
                              f"{', '.join(FIXED_DTYPES)} tensors only")
        fixed[name] = dtype
    n_in = sum(1 if _tensor_type(a) is not None else LIST_LENGTH if _tensor_list(a) else 0 for a in schema.arguments)
    parsed = gufunc.parse(signature, n_in, len(schema.returns)) if n_in else Gufunc()
    arguments, schema_of = [], []
    for arg in schema.arguments:
        if _tensor_list(arg):  # Tensor[] (Tensor(a!)[]: every element written), as LIST_LENGTH operands
            written = arg.alias_info is not None and arg.alias_info.is_write
            arguments += [Argument(f"{arg.name}[{k}]", "Tensor", written=written, keyword=arg.kwarg_only,
                                   element_of=arg.name) for k in range(LIST_LENGTH)]
            schema_of += [arg] * LIST_LENGTH
            continue
        argument = _argument(qualname, arg, scalars.get(arg.name), tuple(parsed.letters))
        arguments.append(dataclasses.replace(argument, dtype=fixed[arg.name]) if arg.name in fixed else argument)
        schema_of.append(arg)
    unknown = set(scalars) - {a.name for a in schema.arguments}
    if unknown:
        raise Unsupported(f"{qualname}: values given for arguments it does not have: {sorted(unknown)}")
    optional = []
    for k, ret in enumerate(schema.returns):
        if _tensor_type(ret) is not None and not isinstance(ret.type, torch.TensorType):
            optional.append(k)  # Tensor?: it may return None there, which no program takes
        elif not isinstance(ret.type, torch.TensorType):
            raise Unsupported(f"{qualname}: returns {ret.type}; dcefuzz calls ops that return tensors or nothing")
    aliases = _aliases(qualname, op, list(zip(arguments, schema_of)))
    written = any(a.written for a in arguments)
    effect = effect_of(qualname) is not None
    declaration = MUTATING if written else EFFECTFUL if effect else PURE
    n_tensors = sum(a.is_tensor for a in arguments)
    if n_tensors == 0:
        raise Unsupported(f"{qualname}: takes no tensor")
    takes = tuple(k for k in range(len(schema.returns)) if k not in optional) if optional else None
    if takes == ():
        raise Unsupported(f"{qualname}: every result is optional (Tensor?); dcefuzz takes results that are tensors")
    return UserOp(qualname=qualname, declaration=declaration, arguments=tuple(arguments),
                  results=len(schema.returns), gufunc=parsed, effect=effect,
                  backward=declaration == PURE and bool(schema.returns) and has_backward(qualname),
                  takes=takes, compiled=treatment(op), aliases=aliases)


def has_kernel(qualname: str, key: str) -> bool:
    """Whether the op has a kernel of its own at dispatch key ``key`` (a rule its library
    registered: ``register_vmap``'s at ``FuncTorchBatched``, ``register_autocast``'s at a
    device's ``Autocast`` key)."""
    import torch

    return torch._C._dispatch_has_kernel_for_dispatch_key(qualname, key)


def tagged(op) -> bool:
    """Whether the op is tagged ``torch.Tag.inplace`` or ``torch.Tag.out`` (on a torch
    that has those tags): the only ops whose results torch lets alias an argument."""
    import torch

    tags = [getattr(torch.Tag, name, None) for name in ("inplace", "out")]
    return any(tag is not None and tag in op.tags for tag in tags)


def _aliases(qualname: str, op, arguments: list[tuple[Argument, object]]) -> tuple[int, ...]:
    """Which written tensor argument each result is, read off the alias annotations
    (empty: the results are fresh); raises :class:`Unsupported` for an aliased result
    of an op that is not tagged, or one aliasing no written argument."""
    returns = op._schema.returns
    if all(ret.alias_info is None for ret in returns):
        return ()
    if not tagged(op):
        raise Unsupported(f"{qualname}: returns an alias of an argument ({op._schema}) without "
                          "torch.Tag.inplace or torch.Tag.out; dcefuzz calls such ops only when tagged")
    tensors = [(a, arg) for a, arg in arguments if a.is_tensor]
    out = []
    for k, ret in enumerate(returns):
        sets = ret.alias_info.before_set if ret.alias_info is not None else set()
        match = [i for i, (a, arg) in enumerate(tensors)
                 if a.written and arg.alias_info is not None and arg.alias_info.before_set == sets]
        if len(match) != 1:
            raise Unsupported(f"{qualname}: result {k} is not one written argument ({op._schema})")
        out.append(match[0])
    return tuple(out)


def has_backward(qualname: str) -> bool:
    """Whether a backward formula is registered for the op: ``register_autograd`` on a
    ``custom_op``, an autograd kernel registered for another op, or a composite kernel
    (differentiable through the ops it is made of)."""
    try:
        from torch._library.custom_ops import _maybe_get_opdef
    except ImportError:  # pragma: no cover - every supported torch has it
        _maybe_get_opdef = None
    opdef = _maybe_get_opdef(qualname) if _maybe_get_opdef is not None else None
    if opdef is not None:
        return getattr(opdef, "_backward_fn", None) is not None
    return any(has_kernel(qualname, key) for key in ("Autograd", "CompositeImplicitAutograd"))


def _tensor_list(arg) -> bool:
    """Whether an argument is a ``Tensor[]`` (written or not), or an optional one
    (``Tensor(a!)[]?``), which programs always give, as an optional tensor."""
    import torch

    kind = arg.type
    if isinstance(kind, torch.OptionalType) and isinstance(kind.getElementType(), torch.ListType):
        kind = kind.getElementType()
    return isinstance(kind, torch.ListType) and isinstance(kind.getElementType(), torch.TensorType)


def _tensor_type(arg):
    import torch

    kind = arg.type
    if isinstance(kind, torch.OptionalType) and isinstance(kind.getElementType(), torch.TensorType):
        kind = kind.getElementType()
    return kind if isinstance(kind, torch.TensorType) else None


def _argument(qualname: str, arg, given, letters: tuple[str, ...] = ()) -> Argument:
    written = arg.alias_info is not None and arg.alias_info.is_write
    if _tensor_type(arg) is not None:
        return Argument(arg.name, "Tensor", written=written, keyword=arg.kwarg_only)
    kind = argtypes.real_type(arg)
    opaque = _opaque_class(qualname, arg.name) if kind == "PyObject" else None
    if opaque is not None:
        return _object_argument(qualname, arg, given, *opaque)
    if given is not None:
        taken = tuple(given)
        if not taken:
            raise Unsupported(f"{qualname}: no values given for argument {arg.name!r}")
        if kind not in argtypes.DEFAULT_VALUES:
            raise Unsupported(f"{qualname}: argument {arg.name!r} is a {kind}, a type dcefuzz cannot make")
        try:
            taken = tuple(argtypes.check(kind, v, letters) for v in taken)
        except argtypes.BadValue as exc:
            raise Unsupported(f"{qualname}: argument {arg.name!r}: {exc}") from None
        return Argument(arg.name, kind, keyword=arg.kwarg_only, values=taken)
    if kind in SCALAR_VALUES:
        return Argument(arg.name, kind, keyword=arg.kwarg_only, values=SCALAR_VALUES[kind])
    if arg.has_default_value():
        return Argument(arg.name, kind, keyword=True)  # left at its default: what the op means by it
    made = argtypes.DEFAULT_VALUES.get(kind)
    if made is not None:
        return Argument(arg.name, kind, keyword=arg.kwarg_only, values=made)
    if kind in argtypes.DEFAULT_VALUES:
        raise Unsupported(f"{qualname}: argument {arg.name!r} of type {kind} needs values "
                          f"(give them in DCEFUZZ_SCALARS or a hints file)")
    raise Unsupported(f"{qualname}: argument {arg.name!r} is a {kind}, a type dcefuzz cannot make")


def _object_argument(qualname: str, arg, given, cls: type, kind: str) -> Argument:
    """An argument of an opaque class: of a value type, the objects the module gives,
    each written as its ``__fx_repr__`` text (``fuzzer.user.values``); of a reference
    type none, since the contract reads the state only of dcefuzz's own classes."""
    what = f"an object of {cls.__module__}.{cls.__qualname__}, an opaque {kind} type"
    if kind != "value":
        raise Unsupported(f"{qualname}: argument {arg.name!r} is {what}; dcefuzz makes reference objects of its "
                          "own classes only (feature opaque-objects), whose state after each call it knows to judge")
    if not given:
        raise Unsupported(f"{qualname}: argument {arg.name!r} is {what}: give the objects programs pass "
                          f"(DCEFUZZ_SCALARS = {{{qualname!r}: {{{arg.name!r}: [...]}}}}, or declare(scalars=...))")
    try:
        texts = tuple(dict.fromkeys(values.text_of(obj, cls) for obj in given))
    except values.BadValue as exc:
        raise Unsupported(f"{qualname}: argument {arg.name!r}: {exc}") from None
    return Argument(arg.name, values.KIND, keyword=arg.kwarg_only, values=texts)


def _opaque_class(qualname: str, name: str) -> tuple[type, str] | None:
    """The registered opaque class (``torch._library.opaque_object``) that argument ``name``
    of a ``custom_op`` is annotated with, and its kind (``value`` or ``reference``); None
    where the op is no ``custom_op`` or the annotation no opaque class.  A schema says
    ``PyObject`` of every opaque argument: the class is only in the function the op was
    made from."""
    try:
        from torch._library import custom_ops
    except ImportError:
        return None
    opdef = custom_ops.OPDEFS.get(qualname.split(".")[0])
    fn = getattr(opdef, "_init_fn", None)
    return values.value_class(fn, name) if fn is not None else None
