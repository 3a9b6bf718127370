"""Opaque objects handed to custom ops (feature ``opaque-objects``).

Serving and quantization libraries pass their ops Python objects the compiler never
looks inside: a kernel's configuration, a cache's handle (``torch._library.opaque_object``,
Note [Opaque Objects]; the classes and how a program makes its objects are
``fuzzer.program.objects``).  The ops here are written as such a library writes them:
``custom_op`` with the class in the signature, a fake impl that never touches the
object (a fake object refuses every attribute), and an ORDERED effect registered on
each op that writes or reads an object's state, since torch does not make ops with
opaque arguments effectful by default (``EffectHolder._set_default_effect`` in
``torch/_library/effects.py`` marks only a ``ClassType`` argument; an opaque object's
is a ``PyObject``), and ``infer_schema`` refuses an opaque argument in
``mutates_args``:

* ``o_scale``: ``x * q.k + q.b`` with a value object ``q`` (``Scale``), pure;
* ``o_put``: ``c.data = c.data * c.decay + sum(x)`` in place, with a reference object
  ``c`` (``Cache``), ORDERED, returning nothing; its event sees ``x`` and the state;
* ``o_read``: ``x * 0.5 + sum(c.data)``, ORDERED; its event sees ``x`` and the state;
* ``o_decayed``: ``x * c.decay``, pure: it reads the object's guarded member only,
  which no call changes.

The two pure ones have a backward (``register_autograd``, kept apart:
``CustomOp.backward``, so a brief shows it only where a program takes gradients), as a
quantised kernel taking its configuration object has: its ``setup_context`` keeps what
it needs of the object (``q.k``; the member ``c.decay``), never the object's state,
which a traced backward could not read (a fake object refuses it, as the fake impl's
must).

Higher-order ops hold them as a library's layers do: ``o_scale`` in each branch of a
``torch.cond`` (``o_scale_cond``) and ``o_scale``, ``o_hscale``, ``o_put`` and ``o_read`` in a
``nested_compile_region`` applied twice with the object an argument (``*_layer``: a
model's repeated layers configured by, or writing and reading, one object), and
``o_decayed`` and ``o_hscale`` on each row of a ``map``, the object closed over
(``*_map``: the object an operand of the map, being a graph input).

Three forms read an object in the program's own text, as Dynamo allows: ``q_member``
(``x * q0.k``: a value object's field, a constant of the graph), ``c_member``
(``x * c0.decay``: a reference object's ``USE_REAL`` member, read at trace time and
guarded by the class's ``guard_fn``) and ``c_method`` (``c0.scaled(x)``: an
``INLINED`` method).

A statement names its object by its ``obj`` attribute (``Form.object_class`` says of
which class); several statements may name one object, and a program holds up to two of
each class.  The forms are drawn as a category of their own (``form_record.OBJECT``,
weighted like the integer forms), so that a program with the feature holds objects
more often than not, rather than now and then among the pure, effectful and aten forms.  Each form shrinks toward the plain forms: a call on an object toward the
first library's op of its kind on the tensor alone (``o_put`` toward ``e_log``,
``o_read`` toward ``e_tap``, the pure ones toward ``p_sin``), a member read toward a
multiplication by a constant.
"""

from __future__ import annotations

from fuzzer.program import objects
from fuzzer.program.families.control import infer_rows
from fuzzer.program.feature_record import Feature
from fuzzer.program.form_record import (
    ATEN,
    COND,
    MAP,
    NO_BACKWARD,
    OBJECT,
    REGION,
    TWIN,
    Form,
    Illegal,
    Shrink,
    custom_form,
    draw_dim,
    infer_none,
    infer_same,
    need_rank,
    op_text,
)
from fuzzer.program.op_record import EFFECTFUL, PURE, CustomOp, op_maker
from fuzzer.program.op_snippets import FIRST

FEATURE = "opaque-objects"
#: how much likelier a program's first object of a class is named than its second
FIRST_OBJECT_WEIGHT: int = 3

FEATURES: tuple[Feature, ...] = (
    Feature(FEATURE, 0.2, "opaque objects handed to custom ops (torch._library.opaque_object): a value type the "
            "graph specialises and guards on, another at a later call; a reference type whose state ORDERED ops "
            "write and read in place, judged after each call, with a guarded member read at trace time and an "
            "inlined method", unavailable=objects.unavailable, seen_in=lambda p: bool(p.mode.objects)),
)


_op = op_maker(FEATURE, preamble=objects.SOURCE)


def _scale_op(name: str, cls: str, var: str, what: str) -> CustomOp:
    """A pure op scaling and shifting its tensor by a value object of class ``cls``
    (``x * var.k + var.b``), with a backward that keeps the object's ``k`` where the
    call is traced, never the object: ``o_scale`` and the hoisted class's ``o_hscale``
    are one kernel on two registrations of the same value type."""
    return _op(name, PURE, f"x * {var}.k + {var}.b with a value-type opaque object {var} {what}; fresh", f'''
@torch.library.custom_op("dcefuzz::{name}", mutates_args=())
def {name}(x: torch.Tensor, {var}: {cls}, site: int) -> torch.Tensor:
    _hit("{name}", site)
    return (x * {var}.k + {var}.b).contiguous()


@{name}.register_fake
def _(x, {var}, site):
    return x.new_empty(x.shape)
''', backward=f'''
def _{name}_setup(ctx, inputs, output):
    ctx.k = inputs[1].k  # the object's field, read where the call is traced


def _{name}_backward(ctx, grad):
    return grad * ctx.k, None, None


{name}.register_autograd(_{name}_backward, setup_context=_{name}_setup)
''')



OPS: tuple[CustomOp, ...] = (
    _scale_op("o_scale", objects.SCALE.name, "q", "(Scale)"),
    _scale_op("o_hscale", objects.HSCALE.name, "h", "whose type is hoisted (HScale)"),
    _op("o_put", EFFECTFUL, "c.data = c.data * c.decay + sum(x) in place, c a reference-type opaque object (Cache); "
        "ORDERED, logs x and the state it found", '''
@torch.library.custom_op("dcefuzz::o_put", mutates_args=())
def o_put(c: Cache, x: torch.Tensor, site: int) -> None:
    _hit("o_put", site, x, c.data, effect=True)
    c.data.mul_(c.decay).add_(x.sum())


@o_put.register_fake
def _(c, x, site):
    return None


_register_ordered(o_put)
'''),
    _op("o_read", EFFECTFUL, "x * 0.5 + sum(c.data), c a reference-type opaque object (Cache); ORDERED, logs x and "
        "the state it read; fresh", '''
@torch.library.custom_op("dcefuzz::o_read", mutates_args=())
def o_read(c: Cache, x: torch.Tensor, site: int) -> torch.Tensor:
    _hit("o_read", site, x, c.data, effect=True)
    return (x * 0.5 + c.data.sum()).contiguous()


@o_read.register_fake
def _(c, x, site):
    return x.new_empty(x.shape)


_register_ordered(o_read)
'''),
    _op("o_decayed", PURE, "x * c.decay, c a reference-type opaque object (Cache) whose guarded member it reads; "
        "fresh", '''
@torch.library.custom_op("dcefuzz::o_decayed", mutates_args=())
def o_decayed(x: torch.Tensor, c: Cache, site: int) -> torch.Tensor:
    _hit("o_decayed", site)
    return (x * c.decay).contiguous()


@o_decayed.register_fake
def _(x, c, site):
    return x.new_empty(x.shape)
''', backward='''
def _o_decayed_setup(ctx, inputs, output):
    ctx.decay = inputs[1].decay  # a declared member: read from the real object where the call is traced


def _o_decayed_backward(ctx, grad):
    return grad * ctx.decay, None, None


o_decayed.register_autograd(_o_decayed_backward, setup_context=_o_decayed_setup)
'''),
)

OP = {op.name: op for op in OPS}


def _draw_object(cls: objects.ObjectClass):
    """The attributes of a statement naming an object of ``cls``: one of the names a
    program gives its objects of the class, the first likelier."""
    names = cls.names()

    def draw(rng, dims, fresh) -> dict:
        return {"obj": rng.choices(names, weights=(FIRST_OBJECT_WEIGHT,) + (1,) * (len(names) - 1))[0]}
    return draw


def _object_first(name: str):
    """The render of a call whose object comes first: ``op(obj, x, site)``."""
    return lambda a, at, d: f"{op_text(name)}({at['obj']}, {a[0]}, {at['site']})"


def _object_second(name: str):
    """The render of a call whose object follows its tensor: ``op(x, obj, site)``."""
    return lambda a, at, d: f"{op_text(name)}({a[0]}, {at['obj']}, {at['site']})"


#: how complicated a form that takes an object reads: more than the plain form it
#: shrinks to, so that a rewrite moves down the shrinker's order
OBJECT_COMPLEXITY: int = 3
#: a member read shrinks to a multiplication by a constant
_TO_SCALE = Shrink(("scale",), OBJECT_COMPLEXITY)



def _call(name: str, infer, cls: objects.ObjectClass, render, simpler: str, **fields) -> Form:
    """The form calling op ``name`` on one tensor and an object of ``cls``, shrinking to
    the plain op ``simpler`` on the tensor alone."""
    return custom_form(OP[name], 1, infer, feature=FEATURE, draw=_draw_object(cls), render=render(name),
                       object_class=cls.name, drawn_as=OBJECT, shrink=Shrink((simpler,), OBJECT_COMPLEXITY), **fields)


def _member(name: str, cls: objects.ObjectClass, render, shrink: Shrink) -> Form:
    """The form reading a member of an object of ``cls`` in the program's own text."""
    return Form(name, ATEN, 1, infer_same, render, feature=FEATURE, draw=_draw_object(cls), object_class=cls.name,
                drawn_as=OBJECT, shrink=shrink)


def _draw_made(rng, dims, fresh) -> dict:
    """Which of ``Scale``'s choices a statement writes in the program's text."""
    return {"pick": rng.randrange(len(objects.SCALE_CHOICES))}


def _render_made(a, at, d) -> str:
    k, b = objects.SCALE_CHOICES[at["pick"]]
    return f"{op_text('o_scale')}({a[0]}, {objects.SCALE.name}({k!r}, {b!r}), {at['site']})"


def _render_sized(a, at, d) -> str:
    return f"{op_text('o_scale')}({a[0]}, {objects.SCALE.name}({a[0]}.shape[{at['dim']}], 0.0), {at['site']})"


def _infer_made(t, attrs, m):
    if attrs.get("pick") not in range(len(objects.SCALE_CHOICES)):
        raise Illegal(f"o_scale_new: pick must be one of 0..{len(objects.SCALE_CHOICES) - 1}")
    return infer_same(t, attrs, m)


def _infer_sized(t, attrs, m):
    need_rank(t[0], 1)
    if attrs.get("dim") not in range(len(t[0])):
        raise Illegal(f"o_scale_sized: dim must be a dim of its operand, got {attrs.get('dim')!r}")
    return infer_same(t, attrs, m)


def _layer_name(form: str, attrs) -> str:
    """A layer's function: one per call site where it calls an op, one per form where it
    reads a member only (every statement's the same layer)."""
    return f"{form}{attrs['site']}" if "site" in attrs else form


def _layer_helpers(body):
    """The ``nested_compile_region`` function a statement calls twice, as a model calls its
    repeated layer, taking the tensor and the object; ``body(stmt, plain)`` is what it
    returns, after the lines ``_layer_helpers`` is given in front of it where it has any
    (``body`` then returns ``(lines, result)``)."""
    def helpers(stmt, plain: bool) -> dict[str, str]:
        name = _layer_name(stmt.form, stmt.attrs)
        text = body(stmt, plain)
        lines, result = text if isinstance(text, tuple) else ((), text)
        inner = "".join(f"    {line}\n" for line in (*lines, f"return {result}"))
        return {name: f"@torch.compiler.nested_compile_region\ndef {name}(t, q):\n{inner}"}
    return helpers


def _layer_call(form: str):
    """The render of a layer statement: the region applied twice, the object handed to both."""
    def render(a, at, d):
        name = _layer_name(form, at)
        return f"{name}({name}({a[0]}, {at['obj']}), {at['obj']})"
    return render


def _render_cond(op: str):
    """The render of ``op``'s call with its object in each branch of a ``torch.cond``."""
    def render(a, at, d) -> str:
        call = op_text(op)
        return (f"torch.cond({a[0]}.sum() > 0, lambda t: {call}(t, {at['obj']}, {at['site']}), "
                f"lambda t: {call}(t * 0.5, {at['obj']}, {at['site2']}), ({a[0]},))")
    return render


def _in_cond(op: str, cls: objects.ObjectClass, simpler: str) -> Form:
    """``op`` with its object of ``cls`` in each branch of a ``torch.cond`` (the object
    closed over), as a library's layer calls its kernel with its configuration; toward
    the call beside its object (``simpler``)."""
    return custom_form(OP[op], 1, infer_same, form=f"{op}_cond", feature=FEATURE, draw=_draw_object(cls),
                       render=_render_cond(op), object_class=cls.name, drawn_as=OBJECT, branches=True, hop=COND,
                       opaque=False, shrink=Shrink((simpler,), OBJECT_COMPLEXITY + 1))


def _site(stmt, plain: bool) -> str:
    """A call's site argument inside a helper, none in the plain text."""
    return "" if plain else f", {stmt.attrs['site']}"


def _in_layer(op: str, cls: objects.ObjectClass, simpler: str, body=None) -> Form:
    """``op`` with its object of ``cls`` in a ``nested_compile_region`` applied twice
    (hierarchical compilation of a model's repeated layers, the object an argument of
    the region); toward the call beside its object (``simpler``).  ``body`` writes the
    region (``_layer_helpers``); by default it returns ``op(t, q, site)``."""
    layer = f"{op}_layer"
    body = body or (lambda stmt, plain: f"{op_text(op)}(t, q{_site(stmt, plain)})")
    return custom_form(OP[op], 1, infer_same, form=layer, feature=FEATURE, draw=_draw_object(cls),
                       render=_layer_call(layer), object_class=cls.name, drawn_as=OBJECT, hop=REGION, nested=True,
                       helpers=_layer_helpers(body), returns=True, shrink=Shrink((simpler,), OBJECT_COMPLEXITY + 1))


def _twin_layer_helpers(stmt, plain: bool) -> dict[str, str]:
    name = f"layer_sin{stmt.attrs['site']}"
    return {name: f"@torch.compiler.nested_compile_region\ndef {name}(t):\n"
                  f"    return {op_text('p_sin')}(t{_site(stmt, plain)})\n"}


#: a repeated layer with no object, ``p_sin`` applied twice in a ``nested_compile_region``:
#: ``o_scale_layer``'s twin for the probes of a cause (``fuzzer.triage.causes``), never drawn
TWIN_LAYER = custom_form(FIRST["p_sin"], 1, infer_same, form="layer_sin", feature=FEATURE,
                         render=lambda a, at, d: f"layer_sin{at['site']}(layer_sin{at['site']}({a[0]}))",
                         hop=REGION, nested=True, helpers=_twin_layer_helpers, returns=True, drawn_as=TWIN,
                         shrink=Shrink(("p_sin",), OBJECT_COMPLEXITY))


def _render_map(op: str):
    """The render of ``op``'s call on each row of its operand, its object closed over."""
    return lambda a, at, d: (f"torch._higher_order_ops.map(lambda t: {op_text(op)}(t, {at['obj']}, {at['site']}), "
                             f"{a[0]})")


def _in_map(op: str, cls: objects.ObjectClass) -> Form:
    """``op`` with its object of ``cls`` on each row of a ``torch._higher_order_ops.map``,
    the object closed over (a batch's rows run through one kernel configured by, or
    reading, one object; the object an operand of the map where it is a graph input:
    a reference object, a hoisted value); toward the call beside its object.  Without a
    backward: ``map``'s documentation says it "does not support autograd", so no map
    reads a value that requires grad (``fuzzer.program.grad``)."""
    return custom_form(OP[op], 1, infer_rows, form=f"{op}_map", feature=FEATURE, draw=_draw_object(cls),
                       render=_render_map(op), object_class=cls.name, drawn_as=OBJECT, hop=MAP, nested=True,
                       grad=NO_BACKWARD, shrink=Shrink((op,), OBJECT_COMPLEXITY + 1))


def _cache_layer(op: str) -> Form:
    """A reference object's ORDERED op in a repeated layer (:func:`_in_layer`), as a
    serving model's repeated layer writes its cache handle (``o_put``; the layer returns
    ``t + 1``, the hidden state it hands on) or reads it (``o_read``), one effect per
    layer; toward the op's call beside its object, which (``o_put``) replaces the layer
    where nothing reads what it returned."""
    writes = not OP[op].returns

    def body(stmt, plain: bool):
        call = f"{op_text(op)}(q, t{_site(stmt, plain)})"
        return ((call,), "t + 1") if writes else call
    return _in_layer(op, objects.CACHE, op, body)


FORMS: tuple[Form, ...] = (
    _call("o_scale", infer_same, objects.SCALE, _object_second, "p_sin"),
    _in_cond("o_scale", objects.SCALE, "o_scale"),
    _in_layer("o_scale", objects.SCALE, "o_scale"),
    # the same with a hoisted Scale (lifted as a graph input), toward the plain call; not
    # in a cond: eager torch.cond (which Dynamo traces) refuses a hoisted object among the
    # operands it lifts (cond_op's assertion, 2.13.0), so no such program can be judged
    _call("o_hscale", infer_same, objects.HSCALE, _object_second, "p_sin"),
    _in_layer("o_hscale", objects.HSCALE, "o_hscale"),
    _in_map("o_hscale", objects.HSCALE),
    # a value object made in the compiled region, as a library's forward writes its
    # kernel's configuration: of constants, or of a size of the tensor it configures
    custom_form(OP["o_scale"], 1, _infer_made, form="o_scale_new", feature=FEATURE, draw=_draw_made,
                render=_render_made, makes_object=objects.SCALE.name, drawn_as=OBJECT,
                shrink=Shrink(("p_sin",), OBJECT_COMPLEXITY, start=(("pick", 0),))),
    custom_form(OP["o_scale"], 1, _infer_sized, form="o_scale_sized", feature=FEATURE, draw=draw_dim,
                render=_render_sized, makes_object=objects.SCALE.name, drawn_as=OBJECT,
                shrink=Shrink(("o_scale_new", "p_sin"), OBJECT_COMPLEXITY + 1)),
    _call("o_put", infer_none, objects.CACHE, _object_first, "e_log"),
    _call("o_read", infer_same, objects.CACHE, _object_first, "e_tap"),
    _call("o_decayed", infer_same, objects.CACHE, _object_second, "p_sin"),
    _in_map("o_decayed", objects.CACHE),
    # the cache's writes and reads in a repeated layer, the object an argument of the region
    _cache_layer("o_put"),
    _cache_layer("o_read"),
    _member("q_member", objects.SCALE, lambda a, at, d: f"{a[0]} * {at['obj']}.k", _TO_SCALE),
    # the member read inside a repeated layer, toward the read in the program's text
    Form("q_member_layer", ATEN, 1, infer_same, _layer_call("q_member_layer"), feature=FEATURE,
         draw=_draw_object(objects.SCALE), object_class=objects.SCALE.name, drawn_as=OBJECT, hop=REGION,
         helpers=_layer_helpers(lambda stmt, plain: "t * q.k"), helper_per_site=False,
         shrink=Shrink(("q_member",), OBJECT_COMPLEXITY + 1)),
    _member("c_member", objects.CACHE, lambda a, at, d: f"{a[0]} * {at['obj']}.decay", _TO_SCALE),
    _member("c_method", objects.CACHE, lambda a, at, d: f"{at['obj']}.scaled({a[0]})",
            Shrink(("c_member", "scale"), OBJECT_COMPLEXITY + 1)),
    TWIN_LAYER,
)
