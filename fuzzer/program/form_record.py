"""The statement form: what a program statement may be, how it types and how it reads.

A form is an op spec in the NNSmith sense: it knows its category, how many tensor
operands it takes, which of them it writes, whether its result aliases its first
operand, the output dims it produces (or :class:`Illegal` when operands don't fit),
and the Python text it lowers to.  This module holds the record, the typing rules
and attribute draws forms share, and the builders of a custom op's form; the forms
themselves are declared in the modules the table (``fuzzer.program.forms``) lists, the
op families' in theirs (``fuzzer.program.families``).  It imports no op library, so
any of those modules may build its forms at its import.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from fuzzer.program import sizes
from fuzzer.program.op_record import EFFECTFUL, NAMESPACE, PURE, CustomOp
from fuzzer.program.shrink_record import DEFAULT_COMPLEXITY, Shrink  # noqa: F401 - forms import both from here
from fuzzer.program.sizes import Dims

# Categories of the ordinary (aten) forms; a custom form's category is what its op
# declares (op_record.PURE, MUTATING or EFFECTFUL).
ATEN = "aten"          # fresh result, no writes
VIEW = "view"          # result aliases operand 0
INPLACE = "inplace"    # writes operand 0, no result
CONTROL = "control"    # no operands: steers the compiler (a graph break)
#: how the integer forms (``int-tensors``: their category is ATEN or VIEW) and those taking an opaque object
#: (``opaque-objects``) are drawn: categories' weights of their own, so they are not lost among the aten forms
INTEGER, INTEGER_SOURCE = "integer", "integer-source"  # those that read integers; those that make the first
OBJECT = "object"
#: how the tensor-subclass forms (``families.subclass``) are drawn, likewise: those that
#: make a subclass value of plain tensors; those that read one
SUBCLASS_SOURCE, SUBCLASS_USE = "subclass-source", "subclass"
#: the category of the forms that read what a form drawn as each key just made, which the
#: generator tries right after it: an integer or mask (made from floats, or from another: a
#: mask's bytes, a count), read by the integer forms; a tensor subclass, by those that take one
USED_BY = {INTEGER_SOURCE: INTEGER, INTEGER: INTEGER, SUBCLASS_SOURCE: SUBCLASS_USE}
#: how the vmap and autocast forms (a few among many calls) and the memory forms (``base-offsets``,
#: ``transposed-writes``) are drawn: a category and weight of their own
TRANSFORM, MEMORY = "transform", "memory"
#: what a form no program draws is drawn as (no category weight names it): a twin only triage's
#: probes compile (``fuzzer.triage.causes``: a higher-order op around a body without an effect)
TWIN = "twin"

#: the higher-order ops of Dynamo's graph forms ask for (``Form.hop``): the hops
#: feature's, then those of the hop-effects family (``families.control``)
COND, REGION = "cond", "invoke_subgraph"
WHILE, SCAN, MAP = "while_loop", "scan", "map_impl"

#: whether a form's result has a backward (every aten form and the pure custom ops
#: do); a form without one may not read a value that requires grad
BACKWARD, NO_BACKWARD = "backward", "no-backward"

CONSTANTS = (0.5, 2.0, -1.0, 1.5)  # scalars the generator may use, small so values stay tame
UNARY_FUNCTIONS = ("sin", "tanh", "relu", "sigmoid")


class Illegal(ValueError):
    """Operands or attributes that this form cannot take."""


# A form's attribute draws (``Form.draw``): each takes the rng, the dims of the
# statement's first operand and the name its data-dependent size would get.

def draw_dim(rng, dims, fresh) -> dict:
    """A ``dim`` of the first operand."""
    if not dims:
        raise Illegal("needs rank >= 1")
    return {"dim": rng.randrange(len(dims))}


def draw_const(rng, dims, fresh) -> dict:
    """A constant ``c`` of ``CONSTANTS``."""
    return {"c": rng.choice(CONSTANTS)}


def draw_fn(rng, dims, fresh) -> dict:
    """A function ``fn`` of ``UNARY_FUNCTIONS``."""
    return {"fn": rng.choice(UNARY_FUNCTIONS)}


def draw_size(rng, dims, fresh) -> dict:
    """The name of the size only the data knows (an unbacked symbol)."""
    return {"size": fresh}


@dataclass(frozen=True)
class Form:
    """A statement form, all it knows of itself in one record.

    The fields fall in groups, each read by its own stage: what the form is (``name``, ``category``, ``arity``,
    ``custom``, ``returns``, ``feature``, ``grad``); how it types (``infer``, ``fits``, ``operand_dtypes``,
    ``result_dtype``, ``exact_result``, ``exact_operands``) and what it does to memory (``mutates``,
    ``result_aliases``, ``dirty``, ``consumes``, ``consumes_input``, ``footprint``, ``dense_root``, ``dense_result``,
    ``unit_last``); how it renders and what its text calls (``render``, ``helpers``, ``also_calls``, ``branches``,
    ``site_count``, ``site_traced``); what it asks of the compiler and the contract (``hop``, ``effect``, ``opaque``,
    ``nested``, ``specialises``, ``backward_logs``, ``limit``, ``object_class``, ``makes_object``); how the generator
    draws it (``draw``, ``drawn_as``, ``once``, ``broadcasts``, ``over_views``, ``then``, ``follow``); and what the
    shrinker may make of it (``shrink``, a record of its own).  One flat record: each stage reads several groups.
    """

    #: the name a statement gives its form (``Stmt.form``), unique in the form table
    name: str
    #: what it does to its operands: ``ATEN``, ``VIEW``, ``INPLACE``, ``CONTROL``, or
    #: for a custom form what its op declares (``op_record.PURE``, ``MUTATING``,
    #: ``EFFECTFUL``)
    category: str
    #: how many tensor operands it takes
    arity: int
    #: its typing: ``infer(operand dims, attrs, least sizes)`` gives the result's dims,
    #: None for no result, or raises :class:`Illegal`
    infer: Callable[[list[Dims], dict, dict[str, int]], Dims | None]
    #: its text: ``render(operand names, attrs, operand dims)`` is the Python
    #: expression or statement it lowers to
    render: Callable[[list[str], dict, list[Dims]], str]
    #: the operands it writes, by position
    mutates: tuple[int, ...] = ()
    #: the library op it calls (``custom_ops.BY_NAME``), or None for an aten form
    custom: str | None = None
    #: whether the form defines a value (in-place aten ops and None-returning
    #: custom ops do not)
    returns: bool = True
    #: the feature (``fuzzer.program.features``) a program must have on to draw the
    #: form; None: every program may
    feature: str | None = None
    #: whether its result has a backward (``BACKWARD``, ``NO_BACKWARD``): a form
    #: without one may not read a value that requires grad (``fuzzer.program.grad``)
    grad: str = BACKWARD
    #: a ``torch.cond`` of two calls: one site per branch
    branches: bool = False
    #: whether the op's calls log their site in the trace: dcefuzz's own ops do; a
    #: user's op (``fuzzer.user``) takes no site argument, so a dead call of it that
    #: still runs cannot be told from a live one
    site_traced: bool = True
    #: whether operands chosen so far (a prefix) fit the form: the generator asks it
    #: of each candidate operand (None: the rules built into the generator)
    fits: Callable[[list[Dims]], bool] | None = None
    #: the form's attributes for a new statement: ``draw(rng, dims, fresh)`` of the
    #: first operand's dims and the name a data-dependent size would get (None: none)
    draw: Callable[..., dict] | None = None
    #: the higher-order op the form asks the compiler for (``cond``, ``invoke_subgraph``):
    #: a compile whose graphs lack it tested the bare calls only
    hop: str | None = None
    #: an ORDERED effect besides what the category says: a user's op that writes and has
    #: a registered effect is ``mutating`` and effectful both
    effect: bool = False
    #: the dtype each operand must have, by position: None (or a position past the
    #: end) is the program's own dtype; a name (``"int8"``) is a fixed dtype
    #: (``fuzzer.program.ir.FIXED_DTYPES``).  Only a user's op takes fixed dtypes.
    operand_dtypes: tuple[str | None, ...] = ()
    #: the dtype of the result for a statement's attributes (None: the program's own)
    result_dtype: Callable[[dict], str | None] | None = None
    #: whether the compiler sees only the call, never what the op computes: a custom
    #: op the compiled program calls (``fuzzer.user.compiled``), as against one it
    #: traces through, decomposes or lowers (and may compute in another order), or a
    #: form that computes around its call (``cond_sin``'s predicate and branch)
    opaque: bool = True
    #: it passes a size as a plain int (a user's op's ``int[]`` argument in the
    #: signature's letters): the compiler must specialise it, so no dim of a program
    #: calling it may be marked unbacked (Dynamo's refusal would be its right)
    specialises: bool = False
    #: its result *is* operand 0, which it writes (an op tagged ``torch.Tag.inplace``
    #: returns the argument it wrote, a tagged out= op the buffer it wrote, a schema's
    #: ``-> Tensor(a!)``), so the result has operand 0's storage
    result_aliases: bool = False
    #: its calls run inside a function the compiler traces as a whole (a higher-order
    #: op's branch or body, an ``autograd.Function``): whether such a call is dead is
    #: the function's business, so ``missed-dce`` never judges its sites
    nested: bool = False
    #: the helper functions (a branch, a loop body, an ``autograd.Function``) the
    #: form's text calls, emitted before the program: ``helpers(stmt, plain)`` gives
    #: {name: source}; ``plain``: their custom calls without call-site arguments
    helpers: Callable[..., dict[str, str]] | None = None
    #: its helpers are one per call site, named by it (a branch, a loop body), so its text names its sites
    #: even where calls are written without them; False: shared (a subclass's handlers), its call passes its site
    helper_per_site: bool = True
    #: the library ops its text calls besides ``custom`` (in a helper, a backward)
    also_calls: tuple[str, ...] = ()
    #: the ORDERED effects its op's backward logs, at the statement's site: compiled
    #: code may run that backward on a zero gradient where eager never calls it
    #: (``contract.Asks.backward_logs``, A BACKWARD ON ZEROS)
    backward_logs: tuple[str, ...] = ()
    #: the call sites a statement of it has (0: two for a ``torch.cond``, else one)
    site_count: int = 0
    #: it writes operand 0 and returns it (an ``autograd.Function`` forward that marks
    #: its input dirty): the result aliases operand 0, and autograd lets it write a
    #: value that requires grad (``fuzzer.program.grad``)
    dirty: bool = False
    #: a limit torch documents for what the form asks of a higher-order op (effects
    #: in a ``scan`` body): a program with it is untested with this reason
    #: (``contract.Asks.limits``), never judged
    limit: str | None = None
    #: at most one statement of the form per program (the order autograd runs two
    #: independent backwards in is not documented, so two effects there have none)
    once: bool = False
    #: a view's elements in its root's storage (``fuzzer.program.storage``):
    #: ``footprint(operand's footprint, attrs, result dims)``; None: a view that may
    #: cover all of its root (a write beside it reads nothing of that root)
    footprint: Callable | None = None
    #: the view is laid over its operand's root storage as the root is laid out: an input handed
    #: over contiguous or a ``dense_result`` (``as_strided``), its dims the ``base`` attribute; the
    #: generator draws the attributes from the root's dims
    dense_root: bool = False
    #: its result is fresh, laid out row-major from offset 0 whatever its operand's layout
    #: (``x.clone(memory_format=torch.contiguous_format)``): a root an ``as_strided`` may be laid over
    dense_result: bool = False
    #: operands the statement swaps onto another storage (``y.set_(z)``): the result is the swapped tensor, a view
    #: of operand 0; the operand's name is not read again, its old storage never written again (``storage.Swaps``)
    consumes: tuple[int, ...] = ()
    #: what it swaps is an input (a parameter or buffer), not a fresh result (``storage.Swaps``)
    consumes_input: bool = False
    #: the compiler computes its result, but with nothing to round: a comparison, an
    #: index, a count, integer arithmetic, a view (``fuzzer.program.exact``): the
    #: result is as exact as its operands, so it may have a fixed dtype
    exact_result: bool = False
    #: its operands must be exact (``fuzzer.program.exact``): it rounds or truncates them,
    #: where a float computed an ulp apart may round (or truncate) another way
    exact_operands: bool = False
    #: the view needs its operand's last dim at stride 1 (``view`` to a dtype of another
    #: element size): the operand is a view of an input handed over contiguous whose last
    #: dim walks the input's last dim one by one (``storage.Footprint.unit_last``)
    unit_last: bool = False
    #: the category the generator draws it under (``form_draw.CATEGORY_WEIGHTS``), where
    #: that is not its own: the integer forms are drawn as a kind of their own
    drawn_as: str | None = None
    #: its second operand may broadcast into the first (a trailing suffix of its dims)
    #: where the generator picks it (``fits`` None); else the two have the same dims
    broadcasts: bool = False
    #: the generator picks its first operand among views of roots it may be laid over (``as_strided_fn``)
    over_views: bool = False
    #: the forms tried right after it, on what it wrote or read or left (``follow_ups.then``)
    then: tuple[str, ...] = ()
    #: ``follow(rng)`` names the forms tried right after it on its result, in order until one is legal
    #: (``follow_ups.follow``); None: nothing
    follow: Callable | None = None
    #: what the shrinker may make of a statement of it
    shrink: Shrink = Shrink()
    #: the class (``objects.CLASSES``) of the program's opaque object a statement names by its ``obj``, and of
    #: a value object it makes in its own text, which its code needs bound (None: none)
    object_class: str | None = None
    makes_object: str | None = None

    @property
    def kept_attrs(self) -> tuple[str, ...]:
        """What a statement rewritten into this form keeps: ``Shrink.keeps``, else a dim view's dim; and an
        object's form the object it named."""
        return (self.shrink.keeps or (("dim",) if self.draw is draw_dim else ())) + (("obj",) if self.object_class else ())

    @property
    def is_view(self) -> bool:
        return self.category == VIEW or self.dirty

    @property
    def sites(self) -> int:
        """How many call sites a statement of the form has."""
        return self.site_count or (2 if self.branches else 1)

    @property
    def ops(self) -> tuple[str, ...]:
        """The library ops its text calls."""
        return ((self.custom,) if self.custom else ()) + self.also_calls

    @property
    def aliases_operand(self) -> bool:
        """Its result is operand 0's storage: a view, or an aliased result."""
        return self.is_view or self.result_aliases

    @property
    def is_custom(self) -> bool:
        return self.custom is not None

    def operand_dtype(self, k: int) -> str | None:
        return self.operand_dtypes[k] if k < len(self.operand_dtypes) else None

    def dtype_of_result(self, attrs: dict) -> str | None:
        return self.result_dtype(attrs) if self.result_dtype is not None else None

    @property
    def fixes_dtypes(self) -> bool:
        """It takes or gives a tensor of a fixed dtype; a subclass's forms do not (a pair's parts
        are of the program's dtype, and a pair may require grad as a plain tensor does)."""
        if self.drawn_as in (SUBCLASS_SOURCE, SUBCLASS_USE):
            return False
        return any(d is not None for d in self.operand_dtypes) or self.result_dtype is not None

    @property
    def is_effectful(self) -> bool:
        """Its calls are ORDERED effects: each must run, once, in program order."""
        return self.category == EFFECTFUL or self.effect


# ---------------------------------------------------------------- typing rules

def need_rank(dims: Dims, rank: int) -> None:
    if len(dims) < rank:
        raise Illegal(f"needs rank >= {rank}, got {len(dims)}")


def same_dims(a: Dims, b: Dims) -> Dims:
    if a != b:
        raise Illegal(f"shapes differ: {a} vs {b}")
    return a


def broadcast_into(a: Dims, b: Dims) -> Dims:
    """b may broadcast into a by being a trailing suffix of a's dims."""
    if len(b) > len(a) or tuple(a[len(a) - len(b):]) != tuple(b):
        raise Illegal(f"{b} does not broadcast into {a}")
    return a


def known_dim(dim: str) -> str:
    """A dim the form writes into the program's text: not one only the data knows."""
    if sizes.has_unbacked(dim):
        raise Illegal(f"dim {dim!r} depends on data")
    return dim


def data_size(attrs: dict) -> Dims:
    size = attrs.get("size")
    if not isinstance(size, str) or not sizes.is_unbacked(size):
        raise Illegal(f"a size from data needs a name like u3, got {size!r}")
    return (size,)


def dim_attr(attrs: dict, dims: Dims) -> int:
    dim = attrs.get("dim", 0)
    if not isinstance(dim, int) or not 0 <= dim < len(dims):
        raise Illegal(f"dim {dim!r} out of range for rank {len(dims)}")
    return dim


def const(attrs: dict) -> float:
    c = attrs.get("c")
    if c not in CONSTANTS:
        raise Illegal(f"constant {c!r} not in {CONSTANTS}")
    return c


def replace_dim(dims: Dims, i: int, new: str | None) -> Dims:
    return tuple(dims[:i]) + (() if new is None else (new,)) + tuple(dims[i + 1:])


# A form's typing (``Form.infer``): ``infer(operand dims, attrs, least sizes)`` gives the
# result's dims, None for no result, or raises :class:`Illegal`.

def infer_same(t, attrs, m):
    """The result has operand 0's dims."""
    return t[0]


def infer_none(t, attrs, m):
    """No result, of operands of any dims."""
    return None


def infer_binary(t, attrs, m):
    return broadcast_into(t[0], t[1])


def infer_unary(t, attrs, m):
    if attrs.get("fn") not in UNARY_FUNCTIONS:
        raise Illegal(f"unknown function {attrs.get('fn')!r}")
    return t[0]


def infer_scaled(t, attrs, m):
    """A constant ``c`` of ``CONSTANTS``; the result has operand 0's dims."""
    const(attrs)
    return t[0]


def infer_inplace_scale(t, attrs, m):
    const(attrs)
    return None


def infer_inplace_binary(t, attrs, m):
    broadcast_into(t[0], t[1])
    return None


def infer_inplace_unary(t, attrs, m):
    infer_unary(t, attrs, m)
    return None


def py_dim(expr: str) -> str:
    """A dim expression as code: symbols are locals of the generated function."""
    return expr if (sizes.is_symbol(expr) or expr.isdigit()) else f"({expr})"


# ----------------------------------------------------------------- custom forms

def op_text(name: str) -> str:
    """How a program calls op ``name`` of the library: through ``torch.ops``."""
    return f"torch.ops.{NAMESPACE}.{name}"


def custom_call(name: str, extra: Callable[[list[Dims], dict], str] | None = None):
    """The render of a plain call: the operands, ``extra``'s text, then the site."""
    def render(args, attrs, dims):
        parts = list(args)
        if extra is not None:
            parts.append(extra(dims, attrs))
        parts.append(str(attrs["site"]))
        return f"{op_text(name)}({', '.join(parts)})"
    return render


def fits_same_dims(operands: list[Dims]) -> bool:
    """``Form.fits`` of a form of three or more operands of the same dims (the generator's rules pick two)."""
    return all(d == operands[0] for d in operands)


def infer_same2(result: bool):
    """Two operands of the same dims; the result has them (or there is none)."""
    def infer(t, attrs, m):
        dims = same_dims(t[0], t[1])
        return dims if result else None
    return infer


def attr_arguments(*names: str) -> Callable[[list[Dims], dict], str]:
    """A plain call's ``extra``: the statement's attributes ``names``, as arguments."""
    def extra(dims, attrs) -> str:
        return ", ".join(str(attrs[name]) for name in names)
    return extra


def none_argument(dims, attrs) -> str:
    """A plain call's ``extra``: ``None``, for an optional argument left out."""
    return "None"


def custom_form(op: CustomOp, arity: int, infer, *, form: str | None = None, render=None, extra=None,
                **fields) -> Form:
    """The form that calls library op ``op`` (its record, so that a family declares its
    forms beside its ops without importing the library), named ``form`` (default: the
    op's name), rendered by ``render`` (default: a plain call, ``extra``'s text before
    the site).  Its category is what the op declares, it returns what the op returns,
    and only a pure op has a backward; ``fields`` sets any other field of the record,
    or overrides those."""
    fields.setdefault("grad", BACKWARD if op.declaration == PURE else NO_BACKWARD)
    fields.setdefault("returns", op.returns)
    category = fields.pop("category", op.declaration)
    return Form(form or op.name, category, arity, infer, render or custom_call(op.name, extra), custom=op.name,
                **fields)
