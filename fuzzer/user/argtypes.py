"""A user's op's scalar arguments by the type the op means, not the type the JIT
stores it as.

A schema stores a dtype, a layout and a memory format as ``int`` and a device as
``Device``: an op declared ``ScalarType float8_dtype=24`` reads as ``int`` to anyone who
looks at ``arg.type``, and passing it 1, 2 or 3 hands the op ``torch.uint8``, ``int8``
and ``int16``.  ``arg.real_type`` is what the op means; each real type here has the
values a program may pass (``default_values``), how a value is written in a program's
JSON and code (``code``), and the object the op receives (``python``):

- ``ScalarType``: a dtype by name (``"float32"``), written ``torch.float32``;
- ``Layout``, ``MemoryFormat``: ``"strided"``, ``"contiguous_format"``, ...;
- ``Device``: ``"device"``, the device of the call's first tensor (``x0.device``), so a
  program is as portable as its tensors;
- ``List[int]`` (``int[N]``, ``SymInt[]``): a list of ints and signature letters, a
  letter standing for the size it binds in this call (``[1, "n"]``: a block of one row
  and all ``n`` columns);
- ``str``, ``int``, ``float``, ``bool``: themselves;
- ``OpaqueValue``: an object of an opaque value type, written as its ``__fx_repr__``
  text and made from it (``fuzzer.user.values``).

An argument left at its default is not passed.  One with no default and no hint whose
type has no sensible value (``str``, ``List[int]``) makes the op one dcefuzz cannot
call until the hints give values.
"""

from __future__ import annotations

from collections.abc import Mapping

from fuzzer.user import values

#: real types a scalar argument may have, and the values taken when the op gives no
#: default and the hints none (None: it needs hints)
DEFAULT_VALUES: dict[str, tuple | None] = {
    "int": (1, 2, 3),
    "SymInt": (1, 2, 3),
    "float": (0.5, 2.0, -1.0),
    "bool": (False, True),
    "ScalarType": ("float32",),
    "Layout": ("strided",),
    "MemoryFormat": ("contiguous_format",),
    "Device": ("device",),
    "str": None,
    "List[int]": None,
    "List[SymInt]": None,
}
#: the types whose values name a torch object (``torch.<name>``)
TORCH_NAMED = ("ScalarType", "Layout", "MemoryFormat")
#: the value that stands for the call's own device
OWN_DEVICE = "device"


class BadValue(ValueError):
    """A hinted value that does not fit its argument's type."""


def real_type(arg) -> str:
    """The type an argument means: ``ScalarType`` for a dtype stored as ``int``;
    ``Optional[X]`` read as ``X`` (a value is always given, or the default kept)."""
    kind = getattr(arg, "real_type", None) or arg.type
    text = str(kind)
    if text.startswith("Optional[") and text.endswith("]"):
        text = text[len("Optional["):-1]
    if text.startswith("int[") or text == "int[]":
        return "List[int]"
    if text.startswith("SymInt["):
        return "List[SymInt]"
    return text


def is_list(kind: str) -> bool:
    return kind in ("List[int]", "List[SymInt]")


def check(kind: str, value, letters: tuple[str, ...] = ()) -> object:
    """``value`` as a program stores it, checked against ``kind``; raises :class:`BadValue`."""
    import torch

    if kind in TORCH_NAMED:
        name = str(value).removeprefix("torch.")
        target = getattr(torch, name, None)
        want = {"ScalarType": torch.dtype, "Layout": torch.layout, "MemoryFormat": torch.memory_format}[kind]
        if not isinstance(target, want):
            raise BadValue(f"{value!r} is not a torch {kind}")
        return name
    if kind == "Device":
        if value != OWN_DEVICE:
            raise BadValue(f"a Device argument takes {OWN_DEVICE!r} (the call's own device), not {value!r}")
        return value
    if is_list(kind):
        if not isinstance(value, (list, tuple)):
            raise BadValue(f"{kind} takes a list, not {value!r}")
        for item in value:
            if not (isinstance(item, int) and not isinstance(item, bool)) and item not in letters:
                raise BadValue(f"{value!r}: each item is an int or a letter of the op's signature {list(letters)}")
        return list(value)
    if kind == "str" and not isinstance(value, str):
        raise BadValue(f"a str argument takes a string, not {value!r}")
    if kind in ("int", "SymInt") and not (isinstance(value, int) and not isinstance(value, bool)):
        raise BadValue(f"an int argument takes an int, not {value!r}")
    if kind == "float" and not isinstance(value, (int, float)):
        raise BadValue(f"a float argument takes a number, not {value!r}")
    if kind == "bool" and not isinstance(value, bool):
        raise BadValue(f"a bool argument takes true or false, not {value!r}")
    return value


def code(kind: str, value, letters: Mapping[str, str], first_tensor: str) -> str:
    """The value as program code: ``letters`` maps the signature's letters to this
    call's dims (program expressions), ``first_tensor`` names the call's first tensor."""
    if kind in TORCH_NAMED:
        return f"torch.{value}"
    if kind == "Device":
        return f"{first_tensor}.device"
    if is_list(kind):
        return "[" + ", ".join(str(v) if isinstance(v, int) else letters[v] for v in value) + "]"
    if kind == values.KIND:
        return value  # its __fx_repr__ text, code already
    return repr(value)


def python(kind: str, value, sizes: Mapping[str, int], device: str):
    """The object the op receives, with concrete ``sizes`` per letter (the declaration
    check calls ops directly)."""
    import torch

    if kind in TORCH_NAMED:
        return getattr(torch, value)
    if kind == "Device":
        return torch.device(device)
    if is_list(kind):
        return [v if isinstance(v, int) else sizes[v] for v in value]
    if kind == values.KIND:
        return values.made(value)
    return value
