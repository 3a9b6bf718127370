"""Tagged in-place and out= ops (feature ``tagged-ops``).

``torch.library.custom_op(..., tags=(torch.Tag.inplace,))`` declares an op that writes
its first Tensor argument and returns it (schema ``Tensor(a0!) a -> Tensor(a0!)``);
``tags=torch.Tag.out`` one that writes keyword-only output buffers, which it never
reads, and returns them (``*, Tensor(a2!) out -> Tensor(a2!)``).  torch compiles both
through branches of ``auto_functionalize`` of their own, and gives both a fake impl
of its own making (the argument, or the buffers, returned), so these ops register
none: a library written for that torch does not, and one it is handed is used
"instead" with a warning.  Each op calls ``_hit`` with its site like every op of the
library.

A statement calling one knows its result *is* its first operand
(``Form.result_aliases``): the in-place op's argument, or the out= op's buffer (an
out= form lists its buffers first, so the buffer it returns is operand 0).  The IR
gives the result the operand's storage root, so a later write through the result is
a write to the argument, and the shared-storage rule holds for it.

An out= call passes each buffer by keyword after the site (``op(x, site, out=o)``),
so a call written without its site (a brief) still reads right.
"""

from __future__ import annotations

from fuzzer.program.feature_record import Feature
from fuzzer.program.form_record import Form, Shrink, custom_form, infer_same, infer_same2, op_text, same_dims
from fuzzer.program.op_record import MUTATING, CustomOp

FEATURE = "tagged-ops"


def unavailable() -> str | None:
    """Why this torch has no tagged custom ops, or None: ``torch.Tag`` needs ``inplace``
    and ``out``, and ``custom_op``'s schema inference must read the tags as declaring
    a returned alias of the written argument (probed on ``infer_schema``, which
    ``custom_op`` calls with them)."""
    import torch

    if not (hasattr(torch.Tag, "inplace") and hasattr(torch.Tag, "out")):
        return "this torch.Tag has no inplace or out tag"

    def probe(a):
        return a

    probe.__annotations__ = {"a": torch.Tensor, "return": torch.Tensor}
    try:
        schema = torch.library.infer_schema(probe, mutates_args=("a",), tags=(torch.Tag.inplace,))
    except (TypeError, ValueError) as exc:
        return f"this torch.library.custom_op cannot declare a tagged op: {exc}"
    if not schema.endswith("-> Tensor(a0!)"):
        return f"this torch reads Tag.inplace otherwise: {schema}"
    return None


FEATURES: tuple[Feature, ...] = (
    Feature(FEATURE, 0.3, "custom ops tagged torch.Tag.inplace (write their first argument and return it) "
            "and torch.Tag.out (write keyword-only buffers and return them); later statements may read and "
            "write through the returned alias", unavailable=unavailable),
)


def _op(name: str, doc: str, source: str) -> CustomOp:
    return CustomOp(name=name, declaration=MUTATING, source=source.strip("\n") + "\n", doc=doc, feature=FEATURE)


OPS: tuple[CustomOp, ...] = (
    _op("t_scale", "a = a * 0.5 + 1 in place, returns a (Tag.inplace)", '''
@torch.library.custom_op("dcefuzz::t_scale", mutates_args=("a",), tags=(torch.Tag.inplace,))
def t_scale(a: torch.Tensor, site: int) -> torch.Tensor:
    _hit("t_scale", site)
    return a.mul_(0.5).add_(1.0)
'''),
    _op("t_addto", "a += b, returns a (Tag.inplace with a second, read operand)", '''
@torch.library.custom_op("dcefuzz::t_addto", mutates_args=("a",), tags=(torch.Tag.inplace,))
def t_addto(a: torch.Tensor, b: torch.Tensor, site: int) -> torch.Tensor:
    _hit("t_addto", site)
    return a.add_(b)
'''),
    _op("t_sin_out", "out = sin(x), returns out (Tag.out, one keyword-only buffer)", '''
@torch.library.custom_op("dcefuzz::t_sin_out", mutates_args=("out",), tags=(torch.Tag.out,))
def t_sin_out(x: torch.Tensor, site: int, *, out: torch.Tensor) -> torch.Tensor:
    _hit("t_sin_out", site)
    torch.sin(x, out=out)
    return out
'''),
    _op("t_split_out", "lo = x * 0.5, hi = cos(x), returns (lo, hi) (Tag.out, two buffers)", '''
@torch.library.custom_op("dcefuzz::t_split_out", mutates_args=("lo", "hi"), tags=(torch.Tag.out,))
def t_split_out(x: torch.Tensor, site: int, *, lo: torch.Tensor, hi: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    _hit("t_split_out", site)
    torch.mul(x, 0.5, out=lo)
    torch.cos(x, out=hi)
    return lo, hi
'''),
)


OP = {op.name: op for op in OPS}


def _same_dims(operands) -> bool:
    return all(d == operands[0] for d in operands[1:])


def _render_sin_out(a, at, d):
    return f"{op_text('t_sin_out')}({a[1]}, {at['site']}, out={a[0]})"


def _render_split(take: int):
    """``t_split_out``'s call returning buffer ``take``: the operands are that buffer,
    the read tensor, then the other buffer."""
    def render(a, at, d):
        lo, hi = (a[0], a[2]) if take == 0 else (a[2], a[0])
        return f"{op_text('t_split_out')}({a[1]}, {at['site']}, lo={lo}, hi={hi})[{take}]"
    return render


def _infer3(t, attrs, m):
    same_dims(t[0], t[1])
    return same_dims(t[0], t[2])


# each toward the plain mutating op of its argument (its result read as the argument,
# ``fuzzer.reduce.passes.rewrite``), a second buffer or operand dropped on the way
FORMS: tuple[Form, ...] = (
    custom_form(OP["t_scale"], 1, infer_same, mutates=(0,), feature=FEATURE, result_aliases=True,
                shrink=Shrink(("m_scale",), 1)),
    custom_form(OP["t_addto"], 2, infer_same2(True), mutates=(0,), feature=FEATURE, result_aliases=True,
                shrink=Shrink(("m_addto", "m_scale", "t_scale"))),
    custom_form(OP["t_sin_out"], 2, infer_same2(True), mutates=(0,), feature=FEATURE, render=_render_sin_out,
                result_aliases=True, shrink=Shrink(("m_addto", "m_scale"))),
    custom_form(OP["t_split_out"], 3, _infer3, mutates=(0, 2), feature=FEATURE, render=_render_split(0),
                result_aliases=True, fits=_same_dims, shrink=Shrink(("t_sin_out", "m_addto", "m_scale"), 3)),
    custom_form(OP["t_split_out"], 3, _infer3, mutates=(0, 2), feature=FEATURE, render=_render_split(1),
                form="t_split_out_hi", result_aliases=True, fits=_same_dims,
                shrink=Shrink(("t_sin_out", "m_addto", "m_scale"), 3)),
)
