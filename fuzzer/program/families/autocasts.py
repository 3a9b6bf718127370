"""Custom ops with a ``register_autocast`` rule, called in ``torch.autocast`` regions
(feature ``autocast-rules``).

``CustomOpDef.register_autocast(device_type, cast_inputs)`` registers a kernel at the
device's ``Autocast`` key (``torch._library.custom_ops``): in an enabled region it
casts the op's floating tensors to ``cast_inputs`` (``_cast``: never a float64 one,
never one of another device) and calls the op with autocast off.  So a call computes
in the rule's dtype whatever the region's, returns what the op makes of that dtype,
and a region switched off inside (``enabled=False``) casts nothing.  Libraries
register such a rule for a kernel written for half precision, or for one that must
run in float32 inside a half-precision region.

The ops, each registered for the CPU and CUDA regions alike, each computing with
correctly rounded arithmetic only, so a call gives the same bits on the same inputs
whatever their strides (an op like ``sin`` may not, its vectorised loop and its scalar
one a float32 ulp apart, which a rounding to bfloat16 can turn into one of its own):

* ``a_square`` (pure): ``x * x``, its rule casting to bfloat16 (a half-precision kernel);
* ``a_mix`` (pure, two operands): ``x * 0.5 + y``, its rule casting to float32
  (a kernel that must run in float32);
* ``a_scale`` (mutating): ``a = a * 0.5 + 1`` in place, its rule casting to bfloat16.

The forms call each in a region of a drawn dtype (``region``: bfloat16 or float16,
which the rule's dtype overrides for the call), in a helper function per call site
(``Form.helpers``) whose region follows its operand's device:

* ``autocast_square``: ``a_square`` in a region; its result is bfloat16 whatever the
  program's dtype (``Form.result_dtype``), so a compiled program that drops or adds the
  cast returns another dtype, which clause ``wrong-output`` compares;
* ``autocast_back``: the same, cast back to its operand's dtype after the region, as
  code that leaves a region does: its result feeds the rest of the program;
* ``autocast_off``: ``a_square`` in a region switched off inside: no cast;
* ``autocast_mix``: ``a_mix`` in a region; its result is float32;
* ``autocast_scale``: ``a_scale`` of a bfloat16 value (an ``autocast_square`` result),
  written in place: its cast is to the dtype it has, which ``Tensor.to`` does by
  returning the tensor itself, so the write lands in it.  An operand of another dtype
  would be cast to a copy, which the op writes and drops; the float64 reference, which
  autocast never casts, would write the operand itself, so such a write has no
  reference and is not drawn.

What compiled code must keep is what eager computes in the same region; the float64
reference is cast nowhere (``docs/contract.md``, AUTOCAST'S CASTS).  A form reads exact
values only (``Form.exact_operands``, ``fuzzer.program.exact``): a cast to a lower
precision turns a float the compiler computed one ulp apart into a whole ulp of that
precision, and the op's own rounding after it can leave eager's error at that element
smaller than the one compiled code carries, a difference no clause may flag
(``autocast_off`` casts nothing, and reads any value).  From exact
values eager and compiled cast the same bits (a conversion rounds to nearest even in
both), so the call computes the same and its result is exact.  No form reads a value
that requires grad.  Each form shrinks toward the op called outside any region, then
toward the first library's op of its kind.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from fuzzer.program.families.control import call
from fuzzer.program.feature_record import Feature
from fuzzer.program.form_record import (
    NO_BACKWARD,
    TRANSFORM,
    TWIN,
    Form,
    Illegal,
    Shrink,
    custom_form,
    infer_none,
    infer_same,
    infer_same2,
)
from fuzzer.program.op_record import MUTATING, PURE, CustomOp, op_maker

FEATURE = "autocast-rules"
#: the dtypes a region is drawn with: those CPU and CUDA autocast both take
REGIONS = ("bfloat16", "float16")


def _unavailable() -> str | None:
    """An autocast rule needs ``CustomOpDef.register_autocast`` and CPU autocast."""
    import torch
    from torch._library.custom_ops import CustomOpDef

    if not hasattr(CustomOpDef, "register_autocast") or not torch.amp.is_autocast_available("cpu"):
        return "this torch has no CustomOpDef.register_autocast or no CPU autocast"
    return None


FEATURES: tuple[Feature, ...] = (
    Feature(FEATURE, 0.2, "custom ops with a register_autocast rule (to bfloat16, to float32; pure and in "
            "place) called in torch.autocast regions of bfloat16 or float16, and in one switched off inside",
            unavailable=_unavailable),
)


_op = op_maker(FEATURE)


OPS: tuple[CustomOp, ...] = (
    _op("a_square", PURE, "x * x; in an autocast region its input is cast to bfloat16", '''
@torch.library.custom_op("dcefuzz::a_square", mutates_args=())
def a_square(x: torch.Tensor, site: int) -> torch.Tensor:
    _hit("a_square", site)
    return (x * x).contiguous()


@a_square.register_fake
def _(x, site):
    return x.new_empty(x.shape)


# a kernel written for half precision: an autocast region hands it bfloat16
a_square.register_autocast("cpu", torch.bfloat16)
a_square.register_autocast("cuda", torch.bfloat16)
'''),
    _op("a_mix", PURE, "x * 0.5 + y; in an autocast region its inputs are cast to float32", '''
@torch.library.custom_op("dcefuzz::a_mix", mutates_args=())
def a_mix(x: torch.Tensor, y: torch.Tensor, site: int) -> torch.Tensor:
    _hit("a_mix", site)
    return (x * 0.5 + y).contiguous()


@a_mix.register_fake
def _(x, y, site):
    return x.new_empty(x.shape)


# a kernel that must run in float32, even inside a half-precision region
a_mix.register_autocast("cpu", torch.float32)
a_mix.register_autocast("cuda", torch.float32)
'''),
    _op("a_scale", MUTATING, "a = a * 0.5 + 1 in place; in an autocast region its input is cast to bfloat16", '''
@torch.library.custom_op("dcefuzz::a_scale", mutates_args=("a",))
def a_scale(a: torch.Tensor, site: int) -> None:
    _hit("a_scale", site)
    a.mul_(0.5).add_(1.0)


@a_scale.register_fake
def _(a, site):
    return None


a_scale.register_autocast("cpu", torch.bfloat16)
a_scale.register_autocast("cuda", torch.bfloat16)
'''),
)

OP = {op.name: op for op in OPS}


def draw_region(rng, dims, fresh) -> dict:
    return {"region": rng.choice(REGIONS)}


def _region(attrs) -> str:
    region = attrs.get("region")
    if region not in REGIONS:
        raise Illegal(f"an autocast region of {region!r}, not one of {REGIONS}")
    return region


def typed(infer):
    """``infer`` after the region's dtype is checked."""
    def typed(t, attrs, m):
        _region(attrs)
        return infer(t, attrs, m)
    return typed


@dataclass(frozen=True)
class Region:
    """The helper function of a form: ``<prefix><site>(params)`` runs ``lines(site,
    plain)`` (the lines in the region, the lines after it) in a region of the statement's
    dtype on its first parameter's device, switched off inside where ``off``."""

    prefix: str
    params: str
    lines: Callable[[int, bool], tuple[list[str], list[str]]]
    off: bool = False

    def helpers(self, stmt, plain: bool) -> dict[str, str]:
        """``Form.helpers``: the function, by name."""
        s = stmt.attrs["site"]
        device = f"{self.params.split(',')[0]}.device.type"
        head = [f"def {self.prefix}{s}({self.params}):",
                f"    with torch.autocast({device}, dtype=torch.{_region(stmt.attrs)}):"]
        indent = "        "
        if self.off:
            head.append(f"        with torch.autocast({device}, enabled=False):")
            indent += "    "
        inside, after = self.lines(s, plain)
        text = head + [indent + line for line in inside] + [f"    {line}" for line in after]
        return {f"{self.prefix}{s}": "\n".join(text) + "\n"}


def helper_call(prefix: str):
    def render(a, at, d):
        return f"{prefix}{at['site']}({', '.join(a)})"
    return render


def _square_lines(s, plain):
    return [f"return {call('a_square', 't', s, plain)}"], []


def _back_lines(s, plain):
    return [f"y = {call('a_square', 't', s, plain)}"], ["return y.to(t.dtype)"]


def _mix_lines(s, plain):
    return [f"return {call('a_mix', 'a, b', s, plain)}"], []


def _scale_lines(s, plain):
    return [call("a_scale", "t", s, plain)], []


def _bfloat16(attrs) -> str:
    return "bfloat16"


def _float32(attrs) -> str:
    return "float32"


def _any_dims(operands) -> bool:
    """``Form.fits`` of a form whose operand has a fixed dtype: any dims."""
    return True


def _region_form(op: str, arity: int, infer, region: Region, simpler: str, **fields) -> Form:
    """A form calling ``op`` in an autocast region (``region``'s helper): drawn as a
    transform, no backward, of exact operands only where the region casts."""
    return custom_form(OP[op], arity, typed(infer), form=region.prefix, feature=FEATURE,
                       render=helper_call(region.prefix), helpers=region.helpers, draw=draw_region, grad=NO_BACKWARD,
                       drawn_as=TRANSFORM, exact_operands=not region.off, shrink=Shrink((simpler,), 4), **fields)


def _plain(op: str, arity: int, infer, simpler: str, complexity: int, **fields) -> Form:
    """The op called outside any region: a twin, never drawn."""
    return custom_form(OP[op], arity, infer, feature=FEATURE, grad=NO_BACKWARD, drawn_as=TWIN,
                       shrink=Shrink((simpler,), complexity), **fields)


FORMS: tuple[Form, ...] = (
    _region_form("a_square", 1, infer_same, Region("autocast_square", "t", _square_lines), "a_square",
                 result_dtype=_bfloat16),
    _region_form("a_square", 1, infer_same, Region("autocast_back", "t", _back_lines), "a_square"),
    _region_form("a_square", 1, infer_same, Region("autocast_off", "t", _square_lines, off=True), "a_square"),
    _region_form("a_mix", 2, infer_same2(True), Region("autocast_mix", "a, b", _mix_lines), "a_mix",
                 result_dtype=_float32),
    _region_form("a_scale", 1, infer_none, Region("autocast_scale", "t", _scale_lines), "a_scale", mutates=(0,),
                 operand_dtypes=("bfloat16",), fits=_any_dims),
    _plain("a_square", 1, infer_same, "p_sin", 1),
    _plain("a_mix", 2, infer_same2(True), "p_mix", 3),
    # a write of a bfloat16 value outside any region: no op of the first library writes one
    custom_form(OP["a_scale"], 1, infer_none, feature=FEATURE, grad=NO_BACKWARD, drawn_as=TWIN, mutates=(0,),
                operand_dtypes=("bfloat16",), fits=_any_dims, shrink=Shrink(complexity=1)),
)
