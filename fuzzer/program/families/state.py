"""State a module carries from call to call (feature ``module-carry``).

A program drawn with the feature is a module (``Mode.module``) whose buffers are not
loaded afresh before each call but keep what the call before left (``Mode.carry``):
a KV cache written at a position, running statistics, as real modules keep them.
Its ops are what such a module's forward writes its state with:

* ``k_put``: a KV cache's write at a position, ``cache[pos] = cache[pos - 1] * 0.5 +
  sum(x)`` (the row before it, the last row for position 0), the position an ``int``
  from the program: a binding's size modulo the cache's length, or a drawn index
  below the cache's least length, in range for every binding;
* ``r_stat``: running statistics, ``buf.mul_(1 - m).add_(sum(x) * m)``.

Both reduce their operand with ``sum`` (0 for an empty one), so they take a value of
any shape, and write the whole state element by element from it.
"""

from __future__ import annotations

from fuzzer.program import sizes
from fuzzer.program.feature_record import Feature
from fuzzer.program.form_record import Form, Illegal, custom_form, op_text
from fuzzer.program.op_record import MUTATING, CustomOp

FEATURE = "module-carry"
#: the momentums ``r_stat`` is called with
MOMENTUMS = (0.1, 0.5, 0.9)
#: the drawn indices ``k_put`` may write at (or ``"size"``: a binding's size modulo
#: the cache's length)
POSITIONS = ("size", 0, 1, 2)


FEATURES: tuple[Feature, ...] = (
    Feature(FEATURE, 0.2, "a module whose state carries over from call to call (a KV cache of fixed "
            "length written at a position, running statistics), through mutating custom ops; judged after each call",
            seen_in=lambda p: bool(p.mode.module) and p.mode.carry),
)


def _op(name: str, doc: str, source: str) -> CustomOp:
    return CustomOp(name=name, declaration=MUTATING, source=source.strip("\n") + "\n", doc=doc, feature=FEATURE)


OPS: tuple[CustomOp, ...] = (
    _op("k_put", "cache[pos] = cache[pos - 1] * 0.5 + sum(x) in place (a KV cache's write at a position)", '''
@torch.library.custom_op("dcefuzz::k_put", mutates_args=("cache",))
def k_put(cache: torch.Tensor, x: torch.Tensor, pos: int, site: int) -> None:
    _hit("k_put", site)
    row = cache.select(0, pos - 1) * 0.5 + x.sum()
    cache.select(0, pos).copy_(row)
'''),
    _op("r_stat", "buf = buf * (1 - m) + sum(x) * m in place (running statistics)", '''
@torch.library.custom_op("dcefuzz::r_stat", mutates_args=("buf",))
def r_stat(buf: torch.Tensor, x: torch.Tensor, m: float, site: int) -> None:
    _hit("r_stat", site)
    buf.mul_(1.0 - m).add_(x.sum() * m)
'''),
)


OP = {op.name: op for op in OPS}


def _fits(operands) -> bool:
    """A state of rank 1 or more, a value of any shape."""
    return len(operands[0]) >= 1


def _position(attrs, dims) -> str:
    at = attrs.get("at")
    return f"({dims[1][0]}) % ({dims[0][0]})" if at == "size" else str(at)


def _infer_put(t, attrs, m):
    at = attrs.get("at")
    if at not in POSITIONS or not t[0] or any(sizes.has_unbacked(d) for d in t[0][:1]):
        raise Illegal(f"k_put needs a cache of rank >= 1 and a position of {POSITIONS}, got {at!r}")
    least = sizes.smallest(t[0][0], m)
    if at == "size" and (not t[1] or sizes.has_unbacked(t[1][0]) or least < 1):
        raise Illegal("k_put at a size needs a value of rank >= 1 and a cache of 1 row or more")
    if at != "size" and least <= at:
        raise Illegal(f"k_put at {at} needs a cache of {at + 1} rows or more for every binding")
    return None


def _infer_stat(t, attrs, m):
    if attrs.get("m") not in MOMENTUMS:
        raise Illegal(f"r_stat's momentum must be one of {MOMENTUMS}")
    return None


def _draw_position(rng, dims, fresh) -> dict:
    return {"at": rng.choice(POSITIONS)}


def _draw_momentum(rng, dims, fresh) -> dict:
    return {"m": rng.choice(MOMENTUMS)}


def _render_put(a, at, d):
    return f"{op_text('k_put')}({a[0]}, {a[1]}, {_position(at, d)}, {at['site']})"


def _render_stat(a, at, d):
    return f"{op_text('r_stat')}({a[0]}, {a[1]}, {at['m']}, {at['site']})"


#: the forms that call the ops (no simpler form: a carried state's write is its own)
FORMS: tuple[Form, ...] = (
    custom_form(OP["k_put"], 2, _infer_put, mutates=(0,), feature=FEATURE, draw=_draw_position, render=_render_put,
                fits=_fits),
    custom_form(OP["r_stat"], 2, _infer_stat, mutates=(0,), feature=FEATURE, draw=_draw_momentum,
                render=_render_stat, fits=_fits),
)
