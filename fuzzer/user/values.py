"""A user's opaque value objects: the configurations a library's ops take beside tensors.

``torch._library.opaque_object`` lets a custom op take an object the compiler never
looks inside.  A *value* type (Note [Opaque Objects]; ``constant`` in 2.14's words) is
a constant to the compiler: Dynamo specialises the graph on the object and rebuilds it
in generated code from its ``__fx_repr__``, the text and the names that text uses.  A
value object is therefore what a scalar is to a program: one of a few values the
module gives (``DCEFUZZ_SCALARS``, or ``declare(scalars=...)``), drawn per call.  A
program stores the value as that same text (``Cfg(128, 4)``), so its JSON is
readable and stable, and its code writes it in the call, as a library's caller writes
``op(x, Cfg(128, 4))``; compiled code then builds the object in the compiled region,
which every supported torch traces.

A *reference* type ("mutable stateful objects") has a state the contract must read
after each call, which dcefuzz knows only of its own classes (``fuzzer.program.objects``):
a user's op taking one stays skipped, with the reason.

Each value is checked when the op is read (:func:`text_of`): its text must make an
equal object from the names it declares, each name an identifier a program may bind
(:data:`RESERVED`), bound to something importable by module and name, so a repro
script binds it by import (:func:`import_lines`).  The names are held per process
(:data:`NAMES`): a worker reads the module again, and so finds them again.
"""

from __future__ import annotations

import keyword
import re

#: the argument type a value object's argument has (``fuzzer.user.argtypes``)
KIND = "OpaqueValue"
#: names a value's text may not use: what a program's own text binds
RESERVED = frozenset({"torch", "fn", "step", "compiled", "forward", "self", "program", "program_grad",
                      "loss_of", "Program"})
#: how a program names its own values (``x0``, ``v3``, ``s1``), which a value's names may not look like
_PROGRAM_NAME = re.compile(r"^[a-z]+\d+$")

#: every name a loaded value's text uses, with what it is bound to
NAMES: dict[str, object] = {}


class BadValue(ValueError):
    """A value object dcefuzz cannot write in a program, and why."""


def value_class(fn, name: str):
    """The opaque class argument ``name`` of the function ``fn`` (a ``custom_op``'s)
    is annotated with, and its kind (``"value"`` or ``"reference"``); None where the
    annotation is no registered opaque class."""
    import inspect

    try:
        from torch._library import opaque_object
    except ImportError:
        return None
    annotation = inspect.signature(fn).parameters[name].annotation
    if not isinstance(annotation, type) or not opaque_object.is_opaque_type(annotation):
        return None
    kind = "value" if opaque_object.is_opaque_value_type(annotation) else "reference"
    return annotation, kind


def text_of(obj, cls=None) -> str:
    """The text a program writes ``obj`` as: its ``__fx_repr__`` text, checked to make
    an equal object of ``cls`` from the names it declares (recorded in :data:`NAMES`);
    raises :class:`BadValue`."""
    from torch._library.opaque_object import get_opaque_obj_repr

    if cls is not None and not isinstance(obj, cls):
        raise BadValue(f"{obj!r} is not a {cls.__qualname__}")
    try:
        text, names = get_opaque_obj_repr(obj)
    except TypeError as exc:
        raise BadValue(str(exc)) from None
    for name, bound in names.items():
        _check_name(name, bound)
    try:
        made = eval(text, {"__builtins__": {}}, dict(names))  # noqa: S307 - the library's own text
    except Exception as exc:  # noqa: BLE001 - whatever the text raises, it is the library's
        raise BadValue(f"its __fx_repr__ text {text!r} does not evaluate: {type(exc).__name__}: {exc}") from None
    if type(made) is not type(obj) or not made == obj:
        raise BadValue(f"its __fx_repr__ text {text!r} makes an object unequal to it")
    NAMES.update(names)
    return text


def _check_name(name: str, bound) -> None:
    if not name.isidentifier() or keyword.iskeyword(name) or name in RESERVED or _PROGRAM_NAME.match(name):
        raise BadValue(f"its __fx_repr__ names {name!r}, which a program's own text may bind")
    if NAMES.get(name, bound) is not bound:
        raise BadValue(f"its __fx_repr__ names {name!r}, which another value already names otherwise")
    module, qualname = getattr(bound, "__module__", None), getattr(bound, "__qualname__", None)
    if not module or not qualname or "<locals>" in qualname:
        raise BadValue(f"its __fx_repr__ names {name!r}, bound to {bound!r}, which a script cannot import")


def made(text: str):
    """A fresh object from a value's text (the declaration check calls ops with it)."""
    return eval(text, {"__builtins__": {}}, dict(NAMES))  # noqa: S307 - a text text_of checked


def texts_in(program) -> list[str]:
    """The texts a program's calls of user ops may hold values as: every string among
    their scalars (``fuzzer.user.form.SCALARS``); :func:`names_in` keeps the names of
    loaded values only, so another string argument binds nothing."""
    return [v for stmt in program.body for v in stmt.attrs.get("scalars", {}).values() if isinstance(v, str)]


def names_in(texts) -> dict[str, object]:
    """The names these value texts use, with what they are bound to: the namespace a
    program's code runs in needs them."""
    words = {w for text in texts for w in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text)}
    return {name: NAMES[name] for name in sorted(words) if name in NAMES}


def import_lines(texts) -> list[str]:
    """A script's lines that bind the names these value texts use, by import."""
    lines = []
    for name, bound in names_in(texts).items():
        path = bound.__qualname__
        lines.append(f"{name} = importlib.import_module({bound.__module__!r}).{path}")
    return lines
