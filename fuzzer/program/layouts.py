"""Inputs handed over in another memory layout (the ``layouts`` feature).

``Mode.layouts`` names, for some inputs, how they are laid out in memory; the values are
the ones drawn (except ``expanded``'s), only the strides differ:

* ``transposed``: the last two dims swapped in memory (``x.mT.contiguous().mT``), rank 2
  or more;
* ``channels_last``: dim 1 innermost in memory (``x.movedim(1, -1).contiguous().movedim(-1,
  1)``: for rank 4 the strides of ``torch.channels_last``, for rank 3 its 1-d analogue),
  rank 3 or more;
* ``expanded``: ``x[:1].expand(x.shape)``, dim 0 of stride 0 (every row is the first
  row), rank 1 or more.  Its elements share memory, so eager refuses a write to it: the
  IR refuses a statement that writes its storage (``written_expanded``), and the
  generator draws it only for an input whose storage the body never writes.

An input with a layout is of the program's dtype, is not strided (``Mode.strided``) nor
an alias, and is never the base of an ``as_strided`` (which is laid over a contiguous
storage).  How the tensors are made is ``fuzzer.judge.observe.draw_inputs``'s.
"""

from __future__ import annotations

#: each layout and the ranks it takes
LAYOUTS = {
    "transposed": lambda rank: rank >= 2,
    "channels_last": lambda rank: rank >= 3,
    "expanded": lambda rank: rank >= 1,
}
#: the share of the inputs that may take a layout that get one
SHARE = 0.5


def problem(mode, dims: dict, dtypes: dict) -> str | None:
    """What is wrong with ``mode.layouts`` for inputs of ``dims`` and fixed ``dtypes``, or None."""
    seen = set()
    for name, kind in mode.layouts:
        if name not in dims or kind not in LAYOUTS or not LAYOUTS[kind](len(dims[name])) or name in seen:
            return f"bad layout {(name, kind)!r}"
        if name in mode.strided or name in dict(mode.aliases) or dtypes.get(name) is not None:
            return f"input {name} has a layout: it is not strided, nor an alias, and of the program's dtype"
        if kind == "expanded" and mode.grad:
            return f"input {name} is expanded: a program that takes gradients has no expanded input"
        seen.add(name)
    return None


def expanded(mode) -> set[str]:
    return {name for name, kind in mode.layouts if kind == "expanded"}


def written_expanded(stmt, form, root: dict[str, str], mode) -> str | None:
    """The operand ``stmt`` writes in an expanded input's storage, or None."""
    for w in form.mutates:
        if root[stmt.args[w]] in expanded(mode):
            return stmt.args[w]
    return None


def held(body, root: dict[str, str], form_of) -> tuple[set[str], set[str]]:
    """The inputs an ``as_strided`` or a view to another element size is laid over (kept
    contiguous), and the roots the body writes."""
    dense = {root[s.args[0]] for s in body if form_of(s.form).dense_root or form_of(s.form).unit_last}
    written = {root[s.args[w]] for s in body for w in form_of(s.form).mutates}
    return dense, written


def draw(rng, inputs, strided, aliases, dense: set[str], written: set[str], grad: bool, on: bool) -> tuple:
    """Layouts for some of ``inputs`` (not ``strided``, an alias, of a fixed dtype, nor
    ``dense``): each with ``SHARE``, a layout its rank takes, ``expanded`` only where its
    storage is not ``written`` and the program takes no gradients (none unless ``on``)."""
    if not on:
        return ()
    out = []
    taken = set(strided) | set(dict(aliases))
    for inp in inputs:
        if inp.name in taken or inp.name in dense or inp.dtype is not None:
            continue
        kinds = [k for k, fits in LAYOUTS.items() if fits(len(inp.dims))
                 and (k != "expanded" or (inp.name not in written and not grad))]
        if kinds and rng.random() < SHARE:
            out.append((inp.name, rng.choice(kinds)))
    return tuple(out)
