"""Hand-written schemas: ops defined the way C++ and older Python libraries register
them, a schema string with alias annotations and a kernel per dispatch key.

``torch.library.Library("dcefuzz", "FRAGMENT")`` (beside the ``custom_op`` ops of
the same namespace, each of which holds a fragment of its own) ``.define``s a
schema, ``.impl``s a kernel for ``CompositeExplicitAutograd`` or for the ``CPU`` and
``CUDA`` keys, and ``torch.library.register_fake`` gives the fake impl; one op uses
the module-level ``torch.library.define`` / ``torch.library.impl`` instead.  The
annotations a schema can state, each in one op:

* ``Tensor(a!)`` written, nothing returned (``s_addto``, ``s_scale``);
* ``Tensor(a!)[]``, a list of three tensors written in order (``s_list``);
* two written arguments and two fresh results (``s_pair``);
* ``Tensor(a!)?``, an optional tensor written when given (``s_opt``, called with one
  and with None);
* ``Tensor(a!)[]?``, an optional list of two tensors written in order when given
  (``s_optlist``, called with a list and with None);
* an overload: a functional op and its ``.out`` overload (``s_silu`` and
  ``s_silu.out(..., *, Tensor(a!) out) -> Tensor(a!)``), the overload tagged as the
  op's out variant with the tag this torch reads for it (``torch.Tag.out``, or
  ``torch.Tag.out_variant`` before it: ``torch._library._out_variant.to_out_variant``),
  so Inductor may lower a call of the functional op to the overload
  (``FallbackKernel.create``); both kernels compute the same and log the same site.
  A program calls the functional op (``s_silu``) or the overload with a buffer of its
  own (``s_silu_out``, under ``schema-alias``: its result is its buffer);
* ``-> Tensor(a!)``, a result that is the written first argument (``s_inplace``):
  auto-functionalization takes an aliased result only from an op tagged
  ``torch.Tag.inplace`` (or ``out``; ``can_auto_functionalize`` in
  ``torch/_higher_order_ops/auto_functionalize.py``), so the op carries the tag and
  its forms are under a feature of their own (``schema-alias``), off on a torch
  without the tag.  An untagged aliased result is refused by torch; no form calls one.

The honesty rules are the library's (``fuzzer.program.custom_ops``): a kernel writes
exactly the arguments its schema marks ``!``, its other results are fresh and
contiguous, and each fake impl gives the real results' metadata (the aliased result's
fake is its argument; a ``Tag.out`` overload's fake is torch's own, the buffer).  An
out overload computes what its functional op returns, into its buffer, which it never
reads.  No op here has an autograd kernel: their forms take no
gradients.
"""

from __future__ import annotations

from fuzzer.program.feature_record import Feature
from fuzzer.program.form_record import (
    CONSTANTS,
    NO_BACKWARD,
    Form,
    Illegal,
    Shrink,
    attr_arguments,
    const,
    custom_form,
    fits_same_dims,
    infer_same,
    infer_same2,
    none_argument,
    op_text,
    same_dims,
)
from fuzzer.program.op_record import MUTATING, PURE, CustomOp, op_maker

#: the features of the family: the schemas, and a schema's result that is its argument
FEATURE, ALIAS_FEATURE = "schemas", "schema-alias"


def _alias_unavailable() -> str | None:
    """A schema's returned alias needs ``torch.Tag.inplace``, an out overload's ``out``."""
    import torch

    lacking = [tag for tag in ("inplace", "out") if not hasattr(torch.Tag, tag)]
    if lacking:
        return (f"this torch lacks torch.Tag.{' and torch.Tag.'.join(lacking)}, without which an op's result "
                "may not alias its argument (auto_functionalize.can_auto_functionalize)")
    return None


FEATURES: tuple[Feature, ...] = (
    Feature(FEATURE, 0.3, "ops of hand-written schemas (Library.define / impl, torch.library.define): "
            "Tensor(a!), Tensor(a!)[] of three, two written arguments and two results, Tensor(a!)?, "
            "Tensor(a!)[]? given a list or None, a functional op with an .out overload tagged as its out variant"),
    Feature(ALIAS_FEATURE, 0.3, "a hand-written schema whose result is its written first argument "
            "(-> Tensor(a!), tagged torch.Tag.inplace), and an .out overload called with its buffer (tagged "
            "torch.Tag.out)", unavailable=_alias_unavailable),
)


_op = op_maker()


OPS: tuple[CustomOp, ...] = (
    _op("s_mix", PURE, "a hand-written pure schema: x * 0.5 + tanh(y), fresh", '''
_s_mix_lib = torch.library.Library("dcefuzz", "FRAGMENT")
_s_mix_lib.define("s_mix(Tensor x, Tensor y, int site) -> Tensor")


def _s_mix_kernel(x, y, site):
    _hit("s_mix", site)
    return (x * 0.5 + torch.tanh(y)).contiguous()


_s_mix_lib.impl("s_mix", _s_mix_kernel, "CompositeExplicitAutograd")


@torch.library.register_fake("dcefuzz::s_mix")
def _(x, y, site):
    return x.new_empty(x.shape)
'''),
    _op("s_addto", MUTATING, "Tensor(a!): a = a * 0.5 + sin(b), returns nothing", '''
_s_addto_lib = torch.library.Library("dcefuzz", "FRAGMENT")
_s_addto_lib.define("s_addto(Tensor(a!) a, Tensor b, int site) -> ()")


def _s_addto_kernel(a, b, site):
    _hit("s_addto", site)
    a.mul_(0.5).add_(torch.sin(b))


_s_addto_lib.impl("s_addto", _s_addto_kernel, "CompositeExplicitAutograd")


@torch.library.register_fake("dcefuzz::s_addto")
def _(a, b, site):
    return None
'''),
    _op("s_scale", MUTATING, "torch.library.define: a = a * c + 1 for a float c, returns nothing", '''
torch.library.define("dcefuzz::s_scale", "(Tensor(a!) a, float c, int site) -> ()")


@torch.library.impl("dcefuzz::s_scale", "CompositeExplicitAutograd")
def _s_scale_kernel(a, c, site):
    _hit("s_scale", site)
    a.mul_(c).add_(1.0)


@torch.library.register_fake("dcefuzz::s_scale")
def _(a, c, site):
    return None
'''),
    _op("s_list", MUTATING, "Tensor(a!)[] of three, written in order, each from the one before", '''
_s_list_lib = torch.library.Library("dcefuzz", "FRAGMENT")
_s_list_lib.define("s_list(Tensor(a!)[] xs, int site) -> ()")


def _s_list_kernel(xs, site):
    _hit("s_list", site)
    xs[0].add_(1.0)
    xs[1].mul_(0.5).add_(xs[0])
    xs[2].sub_(xs[1] * 0.25)


_s_list_lib.impl("s_list", _s_list_kernel, "CPU")
_s_list_lib.impl("s_list", _s_list_kernel, "CUDA")


@torch.library.register_fake("dcefuzz::s_list")
def _(xs, site):
    return None
'''),
    _op("s_pair", MUTATING, "two written arguments (a, b) and two fresh results, from the old a", '''
_s_pair_lib = torch.library.Library("dcefuzz", "FRAGMENT")
_s_pair_lib.define("s_pair(Tensor(a!) a, Tensor(b!) b, Tensor c, int site) -> (Tensor, Tensor)")


def _s_pair_kernel(a, b, c, site):
    _hit("s_pair", site)
    old = a.clone()
    a.add_(c)
    b.mul_(0.5).add_(old)
    return (old * 2.0).contiguous(), (b + c).contiguous()


_s_pair_lib.impl("s_pair", _s_pair_kernel, "CPU")
_s_pair_lib.impl("s_pair", _s_pair_kernel, "CUDA")


@torch.library.register_fake("dcefuzz::s_pair")
def _(a, b, c, site):
    return a.new_empty(a.shape), a.new_empty(a.shape)
'''),
    _op("s_opt", MUTATING, "Tensor(a!)?: acc += x * 0.5 when acc is given; returns cos(x), fresh", '''
_s_opt_lib = torch.library.Library("dcefuzz", "FRAGMENT")
_s_opt_lib.define("s_opt(Tensor x, Tensor(a!)? acc, int site) -> Tensor")


def _s_opt_kernel(x, acc, site):
    _hit("s_opt", site)
    if acc is not None:
        acc.add_(x * 0.5)
    return torch.cos(x).contiguous()


_s_opt_lib.impl("s_opt", _s_opt_kernel, "CompositeExplicitAutograd")


@torch.library.register_fake("dcefuzz::s_opt")
def _(x, acc, site):
    return x.new_empty(x.shape)
'''),
    _op("s_inplace", MUTATING, "-> Tensor(a!), tagged inplace: a = a * 0.5 + b, returns a itself", '''
_s_inplace_lib = torch.library.Library("dcefuzz", "FRAGMENT")
# an aliased result is auto-functionalized only for an op tagged inplace (or out)
_s_inplace_lib.define("s_inplace(Tensor(a!) a, Tensor b, int site) -> Tensor(a!)",
                      tags=(torch.Tag.inplace,) if hasattr(torch.Tag, "inplace") else ())


def _s_inplace_kernel(a, b, site):
    _hit("s_inplace", site)
    return a.mul_(0.5).add_(b)


_s_inplace_lib.impl("s_inplace", _s_inplace_kernel, "CompositeExplicitAutograd")


@torch.library.register_fake("dcefuzz::s_inplace")
def _(a, b, site):
    return a
'''),
    _op("s_optlist", MUTATING, "Tensor(a!)[]?: when given, a0 += x * 0.5, a1 = a1 * 0.5 + a0; returns sin(x), fresh", '''
_s_optlist_lib = torch.library.Library("dcefuzz", "FRAGMENT")
_s_optlist_lib.define("s_optlist(Tensor x, Tensor(a!)[]? accs, int site) -> Tensor")


def _s_optlist_kernel(x, accs, site):
    _hit("s_optlist", site)
    if accs is not None:
        accs[0].add_(x * 0.5)
        accs[1].mul_(0.5).add_(accs[0])
    return torch.sin(x).contiguous()


_s_optlist_lib.impl("s_optlist", _s_optlist_kernel, "CompositeExplicitAutograd")


@torch.library.register_fake("dcefuzz::s_optlist")
def _(x, accs, site):
    return x.new_empty(x.shape)
'''),
    _op("s_silu", PURE, "x * sigmoid(x), fresh, with an .out overload tagged as its out variant", '''
_s_silu_lib = torch.library.Library("dcefuzz", "FRAGMENT")
_s_silu_lib.define("s_silu(Tensor x, int site) -> Tensor")
# the out variant, tagged with the tag this torch finds an op's out variant by
_s_silu_lib.define("s_silu.out(Tensor x, int site, *, Tensor(a!) out) -> Tensor(a!)",
                   tags=(torch.Tag.out,) if hasattr(torch.Tag, "out") else (torch.Tag.out_variant,))


def _s_silu_kernel(x, site):
    _hit("s_silu", site)
    return (x * torch.sigmoid(x)).contiguous()


def _s_silu_out_kernel(x, site, *, out):
    _hit("s_silu", site)
    torch.mul(x, torch.sigmoid(x), out=out)
    return out


_s_silu_lib.impl("s_silu", _s_silu_kernel, "CompositeExplicitAutograd")
_s_silu_lib.impl("s_silu.out", _s_silu_out_kernel, "CompositeExplicitAutograd")


@torch.library.register_fake("dcefuzz::s_silu")
def _(x, site):
    return x.new_empty(x.shape)


if not hasattr(torch.Tag, "out"):  # a Tag.out op's fake is torch's: the buffer
    @torch.library.register_fake("dcefuzz::s_silu.out")
    def _(x, site, *, out):
        return out
'''),
)


OP = {op.name: op for op in OPS}


def _draw_c(rng, dims, fresh):
    return {"c": rng.choice(CONSTANTS)}


def _draw_take(rng, dims, fresh):
    return {"take": rng.randrange(2)}


def _infer_scale(t, attrs, m):
    const(attrs)
    return None


def _infer_take3(t, attrs, m):
    if attrs.get("take") not in (0, 1):
        raise Illegal(f"take must be 0 or 1, got {attrs.get('take')!r}")
    same_dims(t[0], t[1])
    return same_dims(t[0], t[2])


def _infer_list(t, attrs, m):
    same_dims(t[0], t[1])
    same_dims(t[0], t[2])
    return None


def _infer_optlist(t, attrs, m):
    same_dims(t[0], t[1])
    return same_dims(t[0], t[2])


def _render_list(a, at, d):
    return f"{op_text('s_list')}([{a[0]}, {a[1]}, {a[2]}], {at['site']})"


def _render_pair(a, at, d):
    return f"{op_text('s_pair')}({a[0]}, {a[1]}, {a[2]}, {at['site']})[{at['take']}]"


def _render_optlist(a, at, d):
    return f"{op_text('s_optlist')}({a[0]}, [{a[1]}, {a[2]}], {at['site']})"


def _render_silu_out(a, at, d):
    return f"{op_text('s_silu')}.out({a[1]}, {at['site']}, out={a[0]})"


#: the forms that call the ops, each toward the plain ``custom_op`` forms: an optional
#: written list toward the optional tensor (its first element), and its call with None
#: toward that one's; a functional op with an out overload toward the plain pure op, its
#: overload called with a buffer toward the tagged out= op
FORMS: tuple[Form, ...] = (
    custom_form(OP["s_mix"], 2, infer_same2(True), feature=FEATURE, grad=NO_BACKWARD,
                shrink=Shrink(("p_mix", "p_sin"), 3)),
    custom_form(OP["s_addto"], 2, infer_same2(False), mutates=(0,), feature=FEATURE,
                shrink=Shrink(("m_addto", "m_scale"), 3)),
    custom_form(OP["s_scale"], 1, _infer_scale, mutates=(0,), feature=FEATURE, draw=_draw_c,
                extra=attr_arguments("c"), shrink=Shrink(("m_scale",), 3)),
    custom_form(OP["s_list"], 3, _infer_list, mutates=(0, 1, 2), feature=FEATURE, render=_render_list,
                fits=fits_same_dims, shrink=Shrink(("m_list", "m_scale"), 3)),
    custom_form(OP["s_pair"], 3, _infer_take3, mutates=(0, 1), feature=FEATURE, draw=_draw_take, render=_render_pair,
                fits=fits_same_dims, shrink=Shrink(("m_shift", "m_addto", "m_scale"), 3)),
    custom_form(OP["s_opt"], 2, infer_same2(True), mutates=(1,), feature=FEATURE, shrink=Shrink(("s_opt_none",), 3)),
    custom_form(OP["s_opt"], 1, infer_same, form="s_opt_none", feature=FEATURE, extra=none_argument),
    custom_form(OP["s_inplace"], 2, infer_same2(True), mutates=(0,), feature=ALIAS_FEATURE, result_aliases=True,
                shrink=Shrink(("s_addto", "m_addto", "m_scale"), 4)),
    # an optional written list: given two tensors (operands 1 and 2), or None
    custom_form(OP["s_optlist"], 3, _infer_optlist, mutates=(1, 2), feature=FEATURE, render=_render_optlist,
                fits=fits_same_dims, shrink=Shrink(("s_opt", "s_optlist_none"), 4)),
    custom_form(OP["s_optlist"], 1, infer_same, form="s_optlist_none", feature=FEATURE,
                extra=none_argument, shrink=Shrink(("s_opt_none",), 3)),
    # a functional op with an out overload: the op, which the compiler may lower to
    # the overload, and the overload called with a buffer (operand 0, its result)
    custom_form(OP["s_silu"], 1, infer_same, feature=FEATURE, grad=NO_BACKWARD, shrink=Shrink(("p_sin",), 3)),
    custom_form(OP["s_silu"], 2, infer_same2(True), mutates=(0,), form="s_silu_out", feature=ALIAS_FEATURE,
                grad=NO_BACKWARD, render=_render_silu_out, category=MUTATING, result_aliases=True,
                shrink=Shrink(("t_sin_out", "m_addto", "m_scale"), 4)),
)
