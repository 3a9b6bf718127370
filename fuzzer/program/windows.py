"""Inputs that are windows of another input's storage (the ``overlapping-inputs`` feature).

``Mode.windows`` names, for some inputs, ``(input, base, dim, kind)``: the input is
handed over as ``base.narrow(dim, start, size)``, a view of part of the base input's
storage (its own draw is discarded), so two windows of one base, or a base beside its
window, are inputs that share memory in part.  Along ``dim`` of the base, of size ``d``,
each kind covers (``span``):

* ``head``: ``[0, d // 2)``;  ``tail``: ``[d // 2, 2 * (d // 2))`` -- of one size, they
  never meet;
* ``drop_last``: ``[0, d - 1)``;  ``drop_first``: ``[1, d)`` -- they overlap in all but
  one row (both need ``d >= 1`` in every binding).

The IR roots a window at its base and gives it the footprint of that slice of the base
(``footprint``), so the overlap rule (``fuzzer.program.storage``) decides which writes
are legal: a write to a head while its tail is read has one eager answer; a write to a
window while an overlapping one (or the base) is read is refused.  Later statements
that read what an earlier one wrote through another window are ordinary aliasing.

A window and its base are of the program's dtype, neither strided, laid out, a module's
buffer nor an alias (``Mode.aliases``), and a base is no window; no program with
windows takes gradients (a view is no leaf that requires grad).  How the tensors are
made is ``fuzzer.judge.observe.draw_inputs``'s, from the concrete spans ``concrete``
gives.

``Mode.window_calls`` lets the inputs change between calls: distinct inputs at the first
call and windows from the second on (``later``), or the other way round (``first``);
all bindings run through one compiled function, so its guards must tell the two apart,
and each call is judged.  The IR's rule holds the body to the windows' footprints,
which forbid more than distinct inputs do.
"""

from __future__ import annotations

from fuzzer.program import sizes, storage
from fuzzer.program.sizes import Dims

#: ``Mode.window_calls``: at which calls (bindings, in order, through one compiled
#: function) the windows share their base's storage; at the others each is drawn as an
#: input of its own, of the same dims (distinct inputs)
CALLS = ("", "later", "first")

#: each kind: its (start, size) along a dim of size ``d``, and the least ``d`` it needs
KINDS = {
    "head": (lambda d: ("0", sizes.half(d)), 0),
    "tail": (lambda d: (sizes.half(d), sizes.half(d)), 0),
    "drop_last": (lambda d: ("0", sizes.minus_one(d)), 1),
    "drop_first": (lambda d: ("1", sizes.minus_one(d)), 1),
}
#: the pairs drawn most often: two windows that never meet (a write to one beside the other is legal)
DISJOINT = ("head", "tail")


def span(kind: str, d: str) -> tuple[str, str]:
    """The start and size of a ``kind`` window along a dim of size ``d``."""
    return KINDS[kind][0](d)


def dims_of(base: Dims, dim: int, kind: str) -> Dims:
    return base[:dim] + (span(kind, base[dim])[1],) + base[dim + 1:]


def footprint(base: Dims, dim: int, kind: str) -> storage.Footprint:
    """The window's elements as indices of its base."""
    start, size = span(kind, base[dim])
    return storage.Footprint.whole(base).slice(dim, storage.Affine.of(start), 1, size)


def enter(drawn, root: dict, prints: dict, dims: dict) -> None:
    """Root each window at its base, with its footprint there."""
    for name, base, dim, kind in drawn:
        root[name], prints[name] = base, footprint(dims[base], dim, kind)


def fits(kind: str, d: str, sym_min: dict[str, int]) -> bool:
    return sizes.smallest(d, sym_min) >= KINDS[kind][1]


def problem(mode, dims: dict[str, Dims], given: dict[str, str | None], sym_min: dict[str, int]) -> str | None:
    """What is wrong with ``mode.windows`` for inputs of ``dims`` and fixed dtypes ``given``, or None."""
    names = [w[0] for w in mode.windows]
    bases = {w[1] for w in mode.windows}
    apart = set(mode.strided) | {n for n, _ in mode.layouts} | set(mode.module) \
        | {n for pair in mode.aliases for n in pair}
    if mode.windows and mode.grad:
        return "an input that is a window of another cannot be a leaf that requires grad"
    if mode.window_calls not in CALLS or (mode.window_calls and not mode.windows):
        return f"bad window calls {mode.window_calls!r}: one of {CALLS}, and only with windows"
    for name, base, dim, kind in mode.windows:
        if (name not in dims or base not in dims or name == base or names.count(name) > 1 or name in bases
                or base in names or kind not in KINDS or not 0 <= dim < len(dims[base])):
            return f"bad window {(name, base, dim, kind)!r}"
        if not fits(kind, dims[base][dim], sym_min) or dims[name] != dims_of(dims[base], dim, kind):
            return f"bad window {(name, base, dim, kind)!r}: its dims are not {kind} of {base}'s"
        if name in apart or base in apart or given[name] is not None or given[base] is not None:
            return (f"window {name} of {base}: both of the program's dtype, not strided, laid out, "
                    "a buffer nor an alias")
    return None


def calls(rng, drawn, under_as_strided) -> str:
    """``Mode.window_calls`` for ``drawn`` windows: one of ``CALLS``, every call where an
    ``as_strided`` is laid over a base (``ir.dense_inputs``); drawn last of the mode, so the
    mode's other draws are those of a program without it."""
    if not drawn:
        return ""
    how = rng.choice(CALLS)
    return "" if {w[1] for w in drawn} & set(under_as_strided) else how


def shared(mode, index: int) -> bool:
    """Whether the windows share their base's storage at call ``index`` (``Mode.window_calls``)."""
    return {"": True, "later": index > 0, "first": index == 0}[mode.window_calls]


def changing_call(mode) -> int:
    """The first call (binding) at which the windows' aliasing differs from the first call's
    (``Mode.window_calls``): where code compiled for one aliasing first meets the other;
    for ``later`` and ``first`` alike the second call, from the rule of :func:`shared`."""
    return next(index for index in range(1, 3) if shared(mode, index) != shared(mode, 0))


def concrete(mode, names: list[str], shapes: list[tuple[int, ...]], index: int) -> tuple:
    """``(k, j, dim, start, size)`` for each window at call ``index``: input k is
    ``input_j.narrow(dim, start, size)`` (none where the windows are distinct inputs there)."""
    out = []
    if not shared(mode, index):
        return ()
    for name, base, dim, kind in mode.windows:
        k, j = names.index(name), names.index(base)
        start = sizes.evaluate(span(kind, str(shapes[j][dim]))[0], {})
        out.append((k, j, dim, start, shapes[k][dim]))
    return tuple(out)


def held(drawn) -> set[str]:
    """The windows and their bases: kept contiguous, neither strided nor laid out."""
    return {n for w in drawn for n in w[:2]}


def draw(rng, shapes: list[list[str]], dtypes: list, sym_min: dict[str, int], aliases,
         on: bool) -> list[tuple[str, str, int, str]]:
    """Windows over one of the inputs (of the program's dtype, in none of ``aliases``;
    none where there is none, or unless ``on``): a head and a tail half the time, else
    one or two kinds its dim fits; each a new input appended to ``shapes`` (and ``dtypes``)."""
    aliased = {n for pair in aliases for n in pair}
    plain = [k for k, t in enumerate(dtypes) if t is None and f"x{k}" not in aliased]
    if not on or not plain:
        return []
    j = rng.choice(plain)
    dim = rng.randrange(len(shapes[j]))
    d = shapes[j][dim]
    kinds = [k for k in KINDS if fits(k, d, sym_min)]
    if rng.random() < 0.5:
        chosen = list(DISJOINT)
    else:
        chosen = rng.sample(kinds, rng.choice((1, 2)))
    out = []
    for kind in chosen:
        shapes.append(list(dims_of(tuple(shapes[j]), dim, kind)))
        dtypes.append(None)
        out.append((f"x{len(shapes) - 1}", f"x{j}", dim, kind))
    return out
