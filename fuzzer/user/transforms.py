"""A user's op under a transform its library registered a rule for.

A library that wants its op to batch registers a vmap rule (``register_vmap``), and one
whose kernel must run in another precision registers an autocast rule
(``register_autocast``); torch puts each at a dispatch key of its own
(``FuncTorchBatched``, ``AutocastCPU``/``AutocastCUDA``), where ``UserOp.vmap_rule`` and
``UserOp.autocast_rule`` find them.  Such an op gets, beside its plain form
(``fuzzer.user.form``), the forms dcefuzz's own ops of those families have:

* ``ns::name@vmap`` (feature ``vmap-rules``): ``torch.func.vmap`` of a lambda calling the
  op, every operand batched over one drawn dim (``dim``), the result's batch put at
  ``out`` (none for an op that returns nothing, whose writes land in the batch).  The
  op's typing is its own on one example (each operand without the batch dim), so any
  signature the plain form takes is vmapped alike; the operands' batch dims must be one
  size.  The compiler computes around the rule's call, so the result is not opaque.
* ``ns::name@autocast`` (feature ``autocast-rules``): a pure op called in an autocast
  region of a drawn dtype (``fuzzer.program.families.autocasts.Region``), its result
  cast back to its first operand's dtype after the region, as code that leaves a region
  does; its operands are exact values (the cast to a lower precision would otherwise
  turn a compiled ulp into one of bfloat16).

Left out, and said once here: an op whose results alias its arguments (a tagged op), of
several results, of a fixed result dtype, with an effect, or whose scalars name sizes
by letters of its signature (the region's helper is written without its operands'
dims); a mutating op in a region (its rule casts a written operand to a copy, which
the float64 reference never does).  Each form shrinks to the plain call of the op,
keeping its scalars.
"""

from __future__ import annotations

from fuzzer.program.custom_ops import PURE
from fuzzer.program.families import autocasts, vmaps
from fuzzer.program.form_record import NO_BACKWARD, TRANSFORM, Form, Illegal, Shrink, known_dim
from fuzzer.user.declared import UserOp
from fuzzer.user.form import form_of

#: what a transform form of a user op adds to the op's name (``ns::name@vmap``)
VMAP, AUTOCAST = "@vmap", "@autocast"


def forms_of(op: UserOp) -> list[Form]:
    """The transform forms of ``op``: those of the rules its library registered, where
    the op is of a kind these forms call (the module docstring)."""
    if op.aliases or op.results > 1 or op.effect:
        return []
    plain = form_of(op)
    if plain.specialises:
        return []
    out = []
    if op.vmap_rule:
        out.append(_vmap_form(op, plain))
    if op.autocast_rule and op.declaration == PURE and op.results == 1 and plain.result_dtype is None:
        out.append(_autocast_form(op, plain))
    return out


def _example(dims, d: int):
    """One example's dims: ``dims`` without the batch dim ``d``."""
    return tuple(dims[:d]) + tuple(dims[d + 1:])


def _vmap_infer(op: UserOp, plain: Form):
    def infer(t, attrs, m):
        d = attrs.get("dim")
        if not t or not isinstance(d, int) or not all(0 <= d < len(x) for x in t):
            raise Illegal(f"batch dim {d!r} out of range for an operand")
        batch = known_dim(t[0][d])
        if any(x[d] != batch for x in t[1:]):
            raise Illegal(f"{op.qualname}@vmap: the operands' batch dims differ")
        result = plain.infer([_example(x, d) for x in t], attrs, m)
        if result is None:
            return None
        o = attrs.get("out")
        if not isinstance(o, int) or not 0 <= o <= len(result):
            raise Illegal(f"out {o!r} out of range for a result of rank {len(result)}")
        return tuple(result[:o]) + (batch,) + tuple(result[o:])
    return infer


def _vmap_render(op: UserOp, plain: Form):
    def render(a, at, dims):
        d = at["dim"]
        params = [f"p{k}" for k in range(len(a))]
        call = plain.render(params, at, [_example(x, d) for x in dims] if dims else [])
        in_dims = str(d) if len(a) == 1 else f"({', '.join([str(d)] * len(a))})"
        out = at.get("out") if op.results else None
        return f"torch.func.vmap(lambda {', '.join(params)}: {call}, in_dims={in_dims}, out_dims={out})({', '.join(a)})"
    return render


def _vmap_fits(plain: Form):
    """Operands of rank 1 or more that fit the op over dim 0 (the draw may take another)."""
    def fits(operands) -> bool:
        if not all(len(x) >= 1 for x in operands):
            return False
        return plain.fits is None or plain.fits([_example(x, 0) for x in operands])
    return fits


def _vmap_draw(plain: Form):
    def draw(rng, dims, fresh) -> dict:
        attrs = plain.draw(rng, dims, fresh) if plain.draw is not None else {}
        rank = max(len(dims), 1)
        return {**attrs, "dim": rng.randrange(rank), "out": rng.randrange(rank)}
    return draw


def _vmap_form(op: UserOp, plain: Form) -> Form:
    return Form(
        name=op.qualname + VMAP, category=plain.category, arity=plain.arity, infer=_vmap_infer(op, plain),
        render=_vmap_render(op, plain), mutates=plain.mutates, custom=op.qualname, returns=plain.returns,
        feature=vmaps.FEATURE, grad=NO_BACKWARD, site_traced=False, fits=_vmap_fits(plain), draw=_vmap_draw(plain),
        operand_dtypes=plain.operand_dtypes, result_dtype=plain.result_dtype, opaque=False, drawn_as=TRANSFORM,
        shrink=Shrink((op.qualname,), 5))


def _helper_prefix(op: UserOp) -> str:
    return "autocast_" + op.qualname.replace("::", "_") + "_"


def _autocast_form(op: UserOp, plain: Form) -> Form:
    params = [f"t{k}" for k in range(plain.arity)]
    prefix = _helper_prefix(op)

    def helpers(stmt, plain_call: bool) -> dict[str, str]:
        inside = [f"y = {plain.render(params, stmt.attrs, [])}"]
        after = [f"return y.to({params[0]}.dtype)"]
        return autocasts.Region(prefix, ", ".join(params), lambda site, p: (inside, after)).helpers(stmt, plain_call)

    def draw(rng, dims, fresh) -> dict:
        attrs = plain.draw(rng, dims, fresh) if plain.draw is not None else {}
        return {**attrs, **autocasts.draw_region(rng, dims, fresh)}

    return Form(
        name=op.qualname + AUTOCAST, category=plain.category, arity=plain.arity, infer=autocasts.typed(plain.infer),
        render=autocasts.helper_call(prefix), custom=op.qualname, returns=True, feature=autocasts.FEATURE,
        grad=NO_BACKWARD, site_traced=False, fits=plain.fits, draw=draw, operand_dtypes=plain.operand_dtypes,
        opaque=op.opaque, drawn_as=TRANSFORM, helpers=helpers, exact_operands=True, shrink=Shrink((op.qualname,), 4))
