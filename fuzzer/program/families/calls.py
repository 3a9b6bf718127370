"""Calls between ops: custom ops whose kernels call other ops of the library, with
keyword-only and defaulted arguments, several written arguments and several results.

A library's op is often built from its other ops: the kernel calls them through
``torch.ops`` as any caller would.  The compiler sees only the outer call (the kernel
runs at run time, as every custom op's does), so what it must keep is the outer op's
declaration; the inner calls record their own hits under the outer call's site.  An
op lists the ops it calls (``CustomOp.calls``), so a script that registers it
registers them first.

Keyword-only arguments follow ``custom_op``'s rules: ``alpha`` and ``beta`` have
defaults, and the call site is the keyword-only ``site``, written last at every call
(``site=3``), so a brief without call sites drops it as it drops a positional one.
"""

from __future__ import annotations

from fuzzer.program.feature_record import Feature
from fuzzer.program.form_record import (
    CONSTANTS,
    Form,
    Illegal,
    Shrink,
    custom_form,
    fits_same_dims,
    infer_same2,
    op_text,
    same_dims,
)
from fuzzer.program.op_record import MUTATING, PURE, CustomOp

FEATURE = "op-calls"

FEATURES: tuple[Feature, ...] = (
    Feature(FEATURE, 0.3, "custom ops whose kernels call other ops of the library; keyword-only and "
            "defaulted arguments; two written arguments and two results"),
)


def _op(name: str, declaration: str, doc: str, calls: tuple[str, ...], source: str) -> CustomOp:
    return CustomOp(name=name, declaration=declaration, source=source.strip("\n") + "\n", doc=doc, calls=calls)


OPS: tuple[CustomOp, ...] = (
    _op("c_sinmix", PURE, "p_sin(x) * alpha + y, alpha keyword-only with a default; fresh", ("p_sin",), '''
@torch.library.custom_op("dcefuzz::c_sinmix", mutates_args=())
def c_sinmix(x: torch.Tensor, y: torch.Tensor, *, alpha: float = 0.5, site: int) -> torch.Tensor:
    _hit("c_sinmix", site)
    return (torch.ops.dcefuzz.p_sin(x, site) * alpha + y).contiguous()


@c_sinmix.register_fake
def _(x, y, *, alpha=0.5, site):
    return x.new_empty(x.shape)


def _c_sinmix_setup(ctx, inputs, keyword_only_inputs, output):
    ctx.alpha = keyword_only_inputs["alpha"]
    ctx.save_for_backward(inputs[0])


def _c_sinmix_backward(ctx, grad):
    x, = ctx.saved_tensors
    return grad * torch.cos(x) * ctx.alpha, grad


c_sinmix.register_autograd(_c_sinmix_backward, setup_context=_c_sinmix_setup)
'''),
    _op("c_scaleadd", MUTATING, "m_scale(a), then a += p_sin(b): writes a, returns nothing",
        ("p_sin", "m_scale"), '''
@torch.library.custom_op("dcefuzz::c_scaleadd", mutates_args=("a",))
def c_scaleadd(a: torch.Tensor, b: torch.Tensor, site: int) -> None:
    _hit("c_scaleadd", site)
    torch.ops.dcefuzz.m_scale(a, site)
    a.add_(torch.ops.dcefuzz.p_sin(b, site))


@c_scaleadd.register_fake
def _(a, b, site):
    return None
'''),
    _op("c_two", MUTATING,
        "s_addto(a, c), then b -= a * beta (beta keyword-only, defaulted): writes a and b, two fresh results",
        ("s_addto",), '''
@torch.library.custom_op("dcefuzz::c_two", mutates_args=("a", "b"))
def c_two(a: torch.Tensor, b: torch.Tensor, c: torch.Tensor, *, beta: float = 1.0, site: int) -> tuple[torch.Tensor, torch.Tensor]:
    _hit("c_two", site)
    torch.ops.dcefuzz.s_addto(a, c, site)
    b.sub_(a * beta)
    return (a + b).contiguous(), (c * 2.0).contiguous()


@c_two.register_fake
def _(a, b, c, *, beta=1.0, site):
    return a.new_empty(a.shape), a.new_empty(a.shape)
'''),
)


OP = {op.name: op for op in OPS}


def _keyword(name: str):
    """A keyword-only scalar: one of ``CONSTANTS``, or left to its default (None)."""
    def draw(rng, dims, fresh):
        return {name: rng.choice((None,) + CONSTANTS)}
    return draw


def _scalar(attrs: dict, name: str) -> str:
    value = attrs.get(name)
    if value is not None and value not in CONSTANTS:
        raise Illegal(f"{name} {value!r} not in {CONSTANTS}")
    return "" if value is None else f", {name}={value}"


def _infer_sinmix(t, attrs, m):
    _scalar(attrs, "alpha")
    return same_dims(t[0], t[1])


def _infer_two(t, attrs, m):
    _scalar(attrs, "beta")
    if attrs.get("take") not in (0, 1):
        raise Illegal(f"take must be 0 or 1, got {attrs.get('take')!r}")
    same_dims(t[0], t[1])
    return same_dims(t[0], t[2])


def _draw_two(rng, dims, fresh):
    return {**_keyword("beta")(rng, dims, fresh), "take": rng.randrange(2)}


def _render_sinmix(a, at, d):
    return f"{op_text('c_sinmix')}({a[0]}, {a[1]}{_scalar(at, 'alpha')}, site={at['site']})"


def _render_two(a, at, d):
    return f"{op_text('c_two')}({a[0]}, {a[1]}, {a[2]}{_scalar(at, 'beta')}, site={at['site']})[{at['take']}]"


#: the forms that call the ops, each toward the plain ``custom_op`` forms
FORMS: tuple[Form, ...] = (
    custom_form(OP["c_sinmix"], 2, _infer_sinmix, feature=FEATURE, draw=_keyword("alpha"), render=_render_sinmix,
                shrink=Shrink(("p_mix", "p_sin"), 3)),
    custom_form(OP["c_scaleadd"], 2, infer_same2(False), mutates=(0,), feature=FEATURE,
                shrink=Shrink(("m_addto", "m_scale"), 3)),
    custom_form(OP["c_two"], 3, _infer_two, mutates=(0, 1), feature=FEATURE, draw=_draw_two, render=_render_two,
                fits=fits_same_dims, shrink=Shrink(("m_shift", "m_addto", "m_scale"), 3)),
)
