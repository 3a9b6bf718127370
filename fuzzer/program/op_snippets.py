"""The first custom-op library's ops, each written once as a snippet of plain
``torch.library.custom_op`` code (``fuzzer.program.custom_ops`` says why as text),
with the honest backward formulas kept apart so a cache pair can swap one for a
wrong one.  The op families (``fuzzer.program.families``) come after them in the
library; this module imports none of them, so a family may build its forms on the
first library's records (``FIRST``) at its import."""

from __future__ import annotations

from fuzzer.program.op_record import EFFECTFUL, MUTATING, PURE, CustomOp


def _op(name: str, declaration: str, doc: str, source: str) -> CustomOp:
    return CustomOp(name=name, declaration=declaration, source=source.strip("\n") + "\n", doc=doc)


FIRST_LIBRARY: tuple[CustomOp, ...] = (
    # ---- pure: mutates_args=(), no effect; the compiler may drop or repeat them.
    _op("p_sin", PURE, "elementwise sin, fresh output", '''
@torch.library.custom_op("dcefuzz::p_sin", mutates_args=())
def p_sin(x: torch.Tensor, site: int) -> torch.Tensor:
    _hit("p_sin", site)
    return torch.sin(x).contiguous()


@p_sin.register_fake
def _(x, site):
    return x.new_empty(x.shape)
'''),
    _op("p_mix", PURE, "two same-shape inputs combined elementwise", '''
@torch.library.custom_op("dcefuzz::p_mix", mutates_args=())
def p_mix(x: torch.Tensor, y: torch.Tensor, site: int) -> torch.Tensor:
    _hit("p_mix", site)
    return (x * 0.5 + torch.tanh(y)).contiguous()


@p_mix.register_fake
def _(x, y, site):
    return x.new_empty(x.shape)
'''),
    _op("p_rowsum", PURE, "reduction over the last dim: output rank drops by one", '''
@torch.library.custom_op("dcefuzz::p_rowsum", mutates_args=())
def p_rowsum(x: torch.Tensor, site: int) -> torch.Tensor:
    _hit("p_rowsum", site)
    return x.sum(-1).contiguous()


@p_rowsum.register_fake
def _(x, site):
    return x.new_empty(x.shape[:-1])
'''),
    _op("p_head", PURE, "first n rows as a fresh tensor; n is a symbolic size argument", '''
@torch.library.custom_op("dcefuzz::p_head", mutates_args=())
def p_head(x: torch.Tensor, n: int, site: int) -> torch.Tensor:
    _hit("p_head", site)
    return (x[:n] * 1.5).contiguous()


@p_head.register_fake
def _(x, n, site):
    return x.new_empty((n,) + tuple(x.shape[1:]))
'''),
    # ---- mutating: mutates_args non-empty; writes must reach program inputs.
    _op("m_addto", MUTATING, "a += b, returns None", '''
@torch.library.custom_op("dcefuzz::m_addto", mutates_args=("a",))
def m_addto(a: torch.Tensor, b: torch.Tensor, site: int) -> None:
    _hit("m_addto", site)
    a.add_(b)


@m_addto.register_fake
def _(a, b, site):
    return None
'''),
    _op("m_scale", MUTATING, "a = a * 0.5 + 1 in place, returns None", '''
@torch.library.custom_op("dcefuzz::m_scale", mutates_args=("a",))
def m_scale(a: torch.Tensor, site: int) -> None:
    _hit("m_scale", site)
    a.mul_(0.5).add_(1.0)


@m_scale.register_fake
def _(a, site):
    return None
'''),
    _op("m_shift", MUTATING,
        "row i of a += row i+1 of b, in order; returns a fresh tensor. If a compiler "
        "hands it one buffer for a and b, the rows read are already written", '''
@torch.library.custom_op("dcefuzz::m_shift", mutates_args=("a",))
def m_shift(a: torch.Tensor, b: torch.Tensor, site: int) -> torch.Tensor:
    _hit("m_shift", site)
    n = a.shape[0]
    for i in range(n):
        a[i] += 0.5 * b[(i + 1) % n]
    return (a * 2.0).contiguous()


@m_shift.register_fake
def _(a, b, site):
    return a.new_empty(a.shape)
'''),
    _op("m_cumrow", MUTATING, "running sum over rows of a, in place, order-dependent", '''
@torch.library.custom_op("dcefuzz::m_cumrow", mutates_args=("a",))
def m_cumrow(a: torch.Tensor, site: int) -> None:
    _hit("m_cumrow", site)
    for i in range(1, a.shape[0]):
        a[i] += 0.5 * a[i - 1]


@m_cumrow.register_fake
def _(a, site):
    return None
'''),
    _op("m_swap", MUTATING,
        "mutates two arguments, each from the other's old value; returns a fresh tensor", '''
@torch.library.custom_op("dcefuzz::m_swap", mutates_args=("a", "b"))
def m_swap(a: torch.Tensor, b: torch.Tensor, site: int) -> torch.Tensor:
    _hit("m_swap", site)
    old = a.clone()
    a.mul_(0.25).add_(b)
    b.sub_(old * 0.5)
    return old.sum(0).contiguous()


@m_swap.register_fake
def _(a, b, site):
    return a.new_empty(a.shape[1:])
'''),
    # ---- richer signatures (the "signatures" feature): several results, an optional
    # tensor, scalars of every kind, a list of tensors, undeclared writes, and a
    # result whose size only the data knows.  Pure ones carry their backward here.
    _op("p_pair", PURE, "two fresh results from one input (a multi-output op)", """
@torch.library.custom_op("dcefuzz::p_pair", mutates_args=())
def p_pair(x: torch.Tensor, site: int) -> tuple[torch.Tensor, torch.Tensor]:
    _hit("p_pair", site)
    return torch.sin(x).contiguous(), (x * x * 0.5).contiguous()


@p_pair.register_fake
def _(x, site):
    return x.new_empty(x.shape), x.new_empty(x.shape)


def _p_pair_setup(ctx, inputs, output):
    ctx.save_for_backward(inputs[0])


def _p_pair_backward(ctx, grad_sin, grad_square):
    x, = ctx.saved_tensors
    return grad_sin * torch.cos(x) + grad_square * x, None


p_pair.register_autograd(_p_pair_backward, setup_context=_p_pair_setup)
"""),
    _op("p_opt", PURE, "x * 0.5 plus tanh(y) when the optional y is given, else plus 1", """
@torch.library.custom_op("dcefuzz::p_opt", mutates_args=())
def p_opt(x: torch.Tensor, y: Optional[torch.Tensor], site: int) -> torch.Tensor:
    _hit("p_opt", site)
    return (x * 0.5 + (1.0 if y is None else torch.tanh(y))).contiguous()


@p_opt.register_fake
def _(x, y, site):
    return x.new_empty(x.shape)


def _p_opt_setup(ctx, inputs, output):
    ctx.has_y = inputs[1] is not None
    ctx.save_for_backward(inputs[1] if ctx.has_y else inputs[0])


def _p_opt_backward(ctx, grad):
    y, = ctx.saved_tensors
    return grad * 0.5, (grad * (1 - torch.tanh(y) ** 2) if ctx.has_y else None), None


p_opt.register_autograd(_p_opt_backward, setup_context=_p_opt_setup)
"""),
    _op("p_affine", PURE, "x * a + k, or x * a - k when flag is false: float, int and bool scalars", """
@torch.library.custom_op("dcefuzz::p_affine", mutates_args=())
def p_affine(x: torch.Tensor, a: float, k: int, flag: bool, site: int) -> torch.Tensor:
    _hit("p_affine", site)
    return (x * a + (k if flag else -k)).contiguous()


@p_affine.register_fake
def _(x, a, k, flag, site):
    return x.new_empty(x.shape)


def _p_affine_setup(ctx, inputs, output):
    ctx.a = inputs[1]


def _p_affine_backward(ctx, grad):
    return grad * ctx.a, None, None, None, None


p_affine.register_autograd(_p_affine_backward, setup_context=_p_affine_setup)
"""),
    _op("p_pos", PURE, "the positive elements, times 1.5: a result whose size the data decides", """
@torch.library.custom_op("dcefuzz::p_pos", mutates_args=())
def p_pos(x: torch.Tensor, site: int) -> torch.Tensor:
    _hit("p_pos", site)
    return (x[x > 0] * 1.5).contiguous()


@p_pos.register_fake
def _(x, site):
    n = torch.library.get_ctx().new_dynamic_size()
    return x.new_empty((n,))
"""),
    _op("m_list", MUTATING, "writes the second tensor of a list from the first: xs[1] = xs[1] * 0.5 + xs[0]", """
@torch.library.custom_op("dcefuzz::m_list", mutates_args=("xs",))
def m_list(xs: list[torch.Tensor], site: int) -> None:
    _hit("m_list", site)
    xs[1].mul_(0.5).add_(xs[0])


@m_list.register_fake
def _(xs, site):
    return None
"""),
    _op("m_unknown", MUTATING,
        'declares mutates_args="unknown" (every tensor may be written); writes a, returns a fresh tensor', """
@torch.library.custom_op("dcefuzz::m_unknown", mutates_args="unknown")
def m_unknown(a: torch.Tensor, b: torch.Tensor, site: int) -> torch.Tensor:
    _hit("m_unknown", site)
    a.add_(torch.sin(b))
    return (b * 2.0).contiguous()


@m_unknown.register_fake
def _(a, b, site):
    return b.new_empty(b.shape)
"""),
    # ---- effectful: registered ORDERED; must run, exactly once, in program order.
    _op("e_log", EFFECTFUL, "logs its input, returns None", '''
@torch.library.custom_op("dcefuzz::e_log", mutates_args=())
def e_log(x: torch.Tensor, site: int) -> None:
    _hit("e_log", site, x, effect=True)


@e_log.register_fake
def _(x, site):
    return None


_register_ordered(e_log)
'''),
    _op("e_tap", EFFECTFUL, "logs its input and returns a fresh function of it", '''
@torch.library.custom_op("dcefuzz::e_tap", mutates_args=())
def e_tap(x: torch.Tensor, site: int) -> torch.Tensor:
    _hit("e_tap", site, x, effect=True)
    return torch.cos(x).contiguous()


@e_tap.register_fake
def _(x, site):
    return x.new_empty(x.shape)


_register_ordered(e_tap)
'''),
)

#: the first library's ops by name
FIRST: dict[str, CustomOp] = {op.name: op for op in FIRST_LIBRARY}


#: honest backward formulas of the first pure ops, kept apart from their snippets so a
#: cache pair can register a wrong one (``fuzzer.cache.variants``): (saved inputs, gradient expressions per argument)
BACKWARD = {
    "p_sin": ("x, = ctx.saved_tensors", "grad * torch.cos(x), None"),
    "p_mix": ("y, = ctx.saved_tensors", "grad * 0.5, grad * (1 - torch.tanh(y) ** 2), None"),
    "p_rowsum": ("x, = ctx.saved_tensors", "grad.unsqueeze(-1).expand(x.shape).contiguous(), None"),
    "p_head": ("x, = ctx.saved_tensors",
               "torch.cat([grad * 1.5, grad.new_zeros((x.shape[0] - grad.shape[0],) + tuple(x.shape[1:]))]), "
               "None, None"),
}
#: what each op with a formula kept apart saves for its backward
SAVED = {"p_sin": "inputs[0]", "p_mix": "inputs[1]", "p_rowsum": "inputs[0]", "p_head": "inputs[0]"}
