"""Opaque objects: the Python objects a program hands its custom ops beside its tensors
(feature ``opaque-objects``, whose ops and forms are ``fuzzer.program.families.opaque``).

``torch._library.opaque_object`` lets a custom op take an object of a registered class
that the compiler never looks inside (its Note [Opaque Objects]).  Two kinds, each
handled otherwise by ``torch.compile`` (``torch/_dynamo/variables/builder.py``):

* a *value* type is a constant: the graph specialises on the object, baked into it by
  its ``__fx_repr__``, and Dynamo guards on its ``__eq__`` (``CONSTANT_MATCH``), so a
  call with an unequal object recompiles.  ``Scale`` is one: a scale and a shift, as a
  kernel's configuration;
* a *reference* type is a "mutable stateful object", a black box handed to the graph
  as an input, guarded on its type and on what its ``guard_fn`` returns; its declared
  members are read with the real object at trace time (``MemberType.USE_REAL``) or
  inlined (``INLINED``).  ``Cache`` is one, as a serving engine's cache handle: a state
  its ops write and read in place (ORDERED ops: ops taking opaque objects are not
  effectful by default, and torch orders only what is), and a ``decay`` member that
  its ``guard_fn`` guards.

A program's objects (``Mode.objects``: name, class, seed) are made by its ``step`` at
every call from one of its inputs, the object's *seed* (:meth:`ObjectClass.build`):
a ``Scale`` picked by the seed's number of elements, so the object may be another at
the next call; a ``Cache`` over a copy of the seed, its ``decay`` picked the same way.
They are handed to the program after its tensors, or, in a module program, held as
the module's attributes half the time (``Mode.object_attrs``: the step sets
``fn.c0 = c0`` before every call and ``forward`` reads ``self.c0``), as a serving
engine's module holds its cache handle: Dynamo then reaches the object through the
module, its guards on the attribute, so a later call's other object must fail them
there.  A reference object's state after
the call is what the object shows of the calls: the step returns it after every other
value (:func:`states`), and the contract judges it there (``contract.Asks.states``).

The classes are written once, as library text (:data:`SOURCE`), which the family's ops
carry before their snippets (``CustomOp.preamble``): the fuzzer registers them with
its ops, and a repro script defines them as the fuzzer did.  The text finds the
registration this torch has: ``register_opaque_type`` with ``reference`` and
``value`` types and the base class ``torch._opaque_base.OpaqueBase`` (2.13), or
``register_custom_class`` with ``symbolic`` and ``constant`` types and
``torch._custom_class_base.CustomClassBase`` (2.14, where the old names are
deprecated).
"""

from __future__ import annotations

import dataclasses
import random
import re
from dataclasses import dataclass

from fuzzer import __version__
from fuzzer.program.form_record import Illegal
from fuzzer.program.sizes import Dims

VALUE, REFERENCE = "value", "reference"
#: how many objects of one class a program may hold
PER_CLASS: int = 2
#: the chance that a module program holds its objects as attributes (``Mode.object_attrs``)
#: rather than taking them as arguments
ON_MODULE_CHANCE: float = 0.5
_NAME = re.compile(r"^[a-z]\d+$")


@dataclass(frozen=True)
class ObjectClass:
    """A registered opaque class a program's objects may be of."""

    #: its name in the library's text, and the class a form takes (``Form.object_class``)
    name: str
    #: ``VALUE`` or ``REFERENCE`` (Note [Opaque Objects])
    kind: str
    #: the names a program gives its objects of the class: the prefix, then a number
    prefix: str
    #: the attribute that holds its state, returned by the step after each call (None: none)
    state: str | None = None

    def build(self, seed: str) -> str:
        """The step's expression that makes an object of the class from input ``seed``."""
        return f"{self.name}.of({seed})"

    def names(self) -> tuple[str, ...]:
        """The names a program may give its objects of the class."""
        return tuple(f"{self.prefix}{k}" for k in range(PER_CLASS))


#: the (k, b) a ``Scale`` is made with: by a seed's number of elements (``Scale.of``), or
#: written in a program's text (``o_scale_new``)
SCALE_CHOICES: tuple[tuple[float, float], ...] = ((0.5, 0.0), (2.0, 1.0), (-1.5, 0.25))
SCALE = ObjectClass("Scale", VALUE, "q")
#: a Scale registered ``hoist=True``: lifted as an input of the graph, not baked into it
HSCALE = ObjectClass("HScale", VALUE, "h")
CACHE = ObjectClass("Cache", REFERENCE, "c", state="data")
CLASSES: dict[str, ObjectClass] = {c.name: c for c in (SCALE, HSCALE, CACHE)}

#: the classes as library text: defined and registered before the ops that take them
SOURCE = '''\
from torch._library import opaque_object as _opaque

if hasattr(_opaque, "register_custom_class"):  # torch 2.14: the base moved, the kinds renamed
    from torch._custom_class_base import CustomClassBase as OpaqueBase
    _REGISTER, _REFERENCE, _VALUE = _opaque.register_custom_class, "symbolic", "constant"
else:
    from torch._opaque_base import OpaqueBase
    _REGISTER, _REFERENCE, _VALUE = _opaque.register_opaque_type, "reference", "value"


class Scale(OpaqueBase):
    """A value-type opaque object: a scale and a shift.  torch.compile specialises its
    graph on one and guards on __eq__; `of` picks one by a tensor's number of elements.
    Of the base class too, which torch 2.11 asks of every opaque type."""

    CHOICES = %(choices)s

    def __init__(self, k, b):
        self.k, self.b = k, b

    @classmethod
    def of(cls, seed):
        return cls(*cls.CHOICES[seed.numel() % len(cls.CHOICES)])

    def __eq__(self, other):
        return isinstance(other, Scale) and (self.k, self.b) == (other.k, other.b)

    def __hash__(self):
        return hash((self.k, self.b))

    def __fx_repr__(self):
        return f"Scale({self.k!r}, {self.b!r})", {"Scale": Scale}


# its members declared, as Cache's are: torch 2.11 reads an opaque value's attribute in
# compiled code only where a member declares it
_REGISTER(Scale, typ=_VALUE, members={"k": _opaque.MemberType.USE_REAL, "b": _opaque.MemberType.USE_REAL})


class HScale(OpaqueBase):
    """A Scale whose type is registered hoist=True: lifted as a graph input, not baked in."""

    CHOICES, __init__, of = Scale.CHOICES, Scale.__init__, classmethod(Scale.of.__func__)

    def __eq__(self, other):
        return isinstance(other, HScale) and (self.k, self.b) == (other.k, other.b)

    def __hash__(self):
        return hash(("HScale", self.k, self.b))

    def __fx_repr__(self):
        return f"HScale({self.k!r}, {self.b!r})", {"HScale": HScale}


_REGISTER(HScale, typ=_VALUE, hoist=True, members={"k": _opaque.MemberType.USE_REAL, "b": _opaque.MemberType.USE_REAL})


class Cache(OpaqueBase):
    """A reference-type opaque object, as a serving engine's cache handle: a state its
    ops write and read in place, and a decay read at trace time (guarded by guard_fn)
    and by `scaled`, inlined."""

    DECAYS = (0.5, 0.25, 0.75)

    def __init__(self, data, decay):
        self.data, self.decay = data, decay

    @classmethod
    def of(cls, seed):
        return cls(seed.detach().clone(), cls.DECAYS[seed.numel() % len(cls.DECAYS)])

    def scaled(self, x):
        return x * self.decay


_REGISTER(Cache, typ=_REFERENCE, guard_fn=lambda c: [c.decay],
          members={"decay": _opaque.MemberType.USE_REAL, "scaled": _opaque.MemberType.INLINED})
'''


SOURCE = SOURCE.replace("%(choices)s", repr(SCALE_CHOICES))

#: each name a program may give an object, with the object's class
OWNER: dict[str, ObjectClass] = {name: cls for cls in CLASSES.values() for name in cls.names()}


def hold(mode, body, inputs, seed: int):
    """``mode`` holding every object ``body`` names (``Attrs.obj``), in the order first
    named, each of the class that owns its name and seeded by an input of the
    program's dtype drawn for program ``seed`` from a stream of its own (so a program's
    other draws are those it had without objects)."""
    named = list(dict.fromkeys(stmt.attrs["obj"] for stmt in body if "obj" in stmt.attrs))
    if not named:
        return mode
    rng = random.Random(f"dcefuzz-objects-{__version__}-{seed}")
    seeds = [inp.name for inp in inputs if inp.dtype is None]
    return dataclasses.replace(mode, objects=tuple((name, OWNER[name].name, rng.choice(seeds)) for name in named))


def on_module(program, seed: int):
    """``program``, a module program holding objects, with its objects held as the
    module's attributes (``Mode.object_attrs``) for ``ON_MODULE_CHANCE`` of seeds, drawn
    from a stream of its own (so its other draws are those it had without)."""
    mode = program.mode
    if not (mode.module and mode.objects):
        return program
    if random.Random(f"dcefuzz-object-attrs-{__version__}-{seed}").random() >= ON_MODULE_CHANCE:
        return program
    return dataclasses.replace(program, mode=dataclasses.replace(mode, object_attrs=True))


def unavailable() -> str | None:
    """Why this torch cannot register the classes as :data:`SOURCE` does, or None: it
    needs ``torch._library.opaque_object`` with member types and either registration
    (``register_custom_class`` and its base, or ``register_opaque_type`` and its)."""
    try:
        from torch._library import opaque_object
    except ImportError:
        return "this torch has no torch._library.opaque_object"
    if not hasattr(opaque_object, "MemberType"):
        return "this torch's opaque objects declare no members (MemberType)"
    base = "torch._custom_class_base" if hasattr(opaque_object, "register_custom_class") else "torch._opaque_base"
    if base == "torch._opaque_base" and not hasattr(opaque_object, "register_opaque_type"):
        return "this torch registers no opaque types"
    try:
        __import__(base)
    except ImportError:
        return f"this torch has no {base}"
    return None


def problem(objects, dims: dict[str, Dims], given: dict[str, str | None]) -> str | None:
    """What is wrong with a mode's ``objects`` for a program of these inputs (their
    ``dims`` and fixed dtypes ``given``), or None: each a name of its class's, once, of
    a known class, seeded by an input of the program's own dtype."""
    seen: set[str] = set()
    for entry in objects:
        if len(entry) != 3:
            return f"bad object {entry!r}: (name, class, seed)"
        name, cls, seed = entry
        if cls not in CLASSES:
            return f"bad object {entry!r}: no class {cls!r}"
        if name not in CLASSES[cls].names() or not _NAME.match(name):
            return f"bad object {entry!r}: not a name of {cls}'s ({', '.join(CLASSES[cls].names())})"
        if name in seen or name in dims:
            return f"object {name} named twice"
        if seed not in dims or given.get(seed) is not None:
            return f"object {name}'s seed {seed!r} is no input of the program's dtype"
        seen.add(name)
    return None


def check_named(wanted: str | None, named, objects) -> None:
    """A statement whose form takes an object of class ``wanted`` (None: none) names one
    the program holds, of that class, by its ``obj`` attribute (``named``); one whose form
    takes none names none.  Raises ``form_record.Illegal``."""
    if wanted is None:
        if named is not None:
            raise Illegal(f"the form takes no object, and the statement names {named!r}")
    elif declared(objects).get(named) != wanted:
        raise Illegal(f"the form takes a {wanted} the program holds, and the statement names {named!r}")


def declared(objects) -> dict[str, str]:
    """Each object's class, by its name."""
    return {name: cls for name, cls, _ in objects}


def states(objects) -> tuple[str, ...]:
    """The objects whose states the step returns after every other value, in order."""
    return tuple(name for name, cls, _ in objects if CLASSES[cls].state is not None)


def step_lines(objects, on_module: bool = False) -> list[str]:
    """The step's lines that make each object from its seed, before the call;
    ``on_module``: each then set as the module's attribute of its name (``fn.<name>``,
    which a compiled module sets on the module it wraps), not handed to the call."""
    made = [f"    {name} = {CLASSES[cls].build(seed)}" for name, cls, seed in objects]
    return made + ([f"    fn.{name} = {name}" for name, _, _ in objects] if on_module else [])


def settled(mode):
    """``mode`` with its objects held by the module only while it still has a module and
    objects (what a shrink that drops either leaves)."""
    return dataclasses.replace(mode, object_attrs=mode.object_attrs and bool(mode.module) and bool(mode.objects))


def handed(mode) -> list[str]:
    """The objects the call takes as arguments, after the tensors: none where the module
    holds them (``Mode.object_attrs``)."""
    return [] if mode.object_attrs else [name for name, _, _ in mode.objects]


def state_text(objects) -> str:
    """The tuple of the states the step returns (``""``: none)."""
    parts = [f"{name}.{CLASSES[cls].state}" for name, cls, _ in objects if CLASSES[cls].state is not None]
    return f"({', '.join(parts)},)" if parts else ""
