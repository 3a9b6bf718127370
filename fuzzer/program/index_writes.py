"""Index writes, then reads of other positions of what they wrote (the ``index-writes``
feature).

Real code writes a tensor by index (``index_put_``, ``index_copy_``, ``scatter_``, a
masked store), then reads it elsewhere: rolled, gathered, reversed, shifted, and writes
it again with values read from such positions (``x.add_(x.roll(1, 0))``,
``x[idx] = x.flip(0)``).  Which of those reads see the write is the order of a write
and a read of one memory, which fusion and reinplacing may move; each form here is one
of them:

* writes of a second operand ``y`` of the same dims: ``put_perm`` (``x[..., p] = y``,
  a tensor index), ``copy_perm`` (``index_copy_``), ``scatter_perm`` (``scatter_`` by
  ``p`` along ``dim``), ``masked_scatter`` (``x.masked_scatter_(y > 0, y)``: the mask's
  positions take ``y``'s leading elements in order), and ``put_acc``
  (``index_put_(..., accumulate=True)`` with every index twice);
* reads of other positions, fresh values: ``roll`` and ``gather_perm``;
* writes whose values read other positions of the tensor they write, as copies made
  before the write (one eager answer): ``roll_add_``, ``flip_copy_``, ``put_flipped``,
  ``scatter_rolled``, ``shift_add_``;
* writes of ``index_fill_`` (half the positions, by ``p``'s first half, take a
  constant: ``fill_half_``) and ``index_reduce_`` (``y`` reduced into ``x`` by ``p``,
  ``prod`` or ``mean``: ``reduce_perm_``);
* the functional index ops, fresh values of ``x``'s dims: ``x.index_add(d, p, y)``
  (``add_perm``), ``x.index_copy(d, p, y)`` (``copy_perm_fn``), ``x.index_fill(d, p[:h],
  c)`` (``fill_half``).  Code writes them on any tensor, an expanded one included (an
  input of the ``expanded`` layout, whose rows share one row's memory): the result is
  a new tensor, so a compiler that turns one into its in-place twin over the operand's
  memory writes one element many times.

After a write the generator tries a read or a self-reading write of the same tensor
(``Form.then``), as real code does with what it just wrote.

What torch documents as undefined is never drawn: ``index_put_`` with duplicate
indices and ``accumulate=False`` ("the behavior is undefined"), ``index_copy_`` with
duplicate entries ("the result is nondeterministic"), ``scatter_`` with indices that are
not unique ("the behavior is non-deterministic"; each in ``torch/_tensor_docs.py``).  So
every index a write without accumulation takes is a permutation, ``p`` (``arange``
rolled by one, built in the text for every size, 0 included); only ``put_acc`` has
duplicates, which ``accumulate=True`` defines as a sum.  A write whose value overlaps
the memory it writes is the IR's overlap rule's (``fuzzer.program.storage``): refused
unless proven disjoint; the self-reading writes read copies.
"""

from __future__ import annotations

from fuzzer.program.feature_record import Feature
from fuzzer.program.form_record import (
    ATEN,
    INPLACE,
    Form,
    Illegal,
    Shrink,
    const,
    dim_attr,
    draw_const,
    draw_dim,
    need_rank,
    same_dims,
)

INDEX_WRITES = "index-writes"
#: how its writes of a second operand are drawn (``form_draw.CATEGORY_WEIGHTS``): a category
#: of their own, not lost among the many in-place forms
INDEX_WRITE = "index-write"

FEATURES: tuple[Feature, ...] = (
    Feature(INDEX_WRITES, 0.25, "index writes (index_put_ by a permutation, index_copy_, scatter_, "
            "masked_scatter_, index_put_ accumulating duplicates, index_fill_, index_reduce_) followed by reads "
            "of other positions (rolled, gathered) and writes whose values read them (rolled, reversed, "
            "shifted); the functional index ops (index_add, index_copy, index_fill)"),
)


def _along(arg: str, dim: int) -> str:
    """``arg[:, :, `` up to ``dim``: the start of an index along ``dim``."""
    return f"{arg}[{':, ' * dim}"


def perm(arg: str, dim: int) -> str:
    """A permutation of ``arg``'s positions along ``dim``: ``arange`` rolled by one."""
    return f"torch.arange({arg}.size({dim}), device={arg}.device).roll(1)"


def spread(arg: str, dim: int, rank: int) -> str:
    """:func:`perm` laid along ``dim`` of an index of ``arg``'s shape (``scatter_``, ``gather``)."""
    shape = ", ".join("-1" if k == dim else "1" for k in range(rank))
    return f"{perm(arg, dim)}.view({shape}).expand_as({arg})"


def pairs(arg: str) -> str:
    """An index of dim 0 that takes every position twice (``0, 0, 1, 1, ...``)."""
    return f"torch.arange({arg}.size(0), device={arg}.device) // 2"


def _infer_write(t, attrs, m):
    dim_attr(attrs, t[0])
    same_dims(t[0], t[1])
    return None


def _infer_masked(t, attrs, m):
    same_dims(t[0], t[1])
    return None


def _infer_acc(t, attrs, m):
    need_rank(t[0], 1)
    same_dims(t[0], t[1])
    return None


def _infer_read(t, attrs, m):
    dim_attr(attrs, t[0])
    return t[0]


def _infer_self_write(t, attrs, m):
    dim_attr(attrs, t[0])
    return None


def half(arg: str, dim: int) -> str:
    """The first half of :func:`perm`: positions of ``arg`` along ``dim``, each once."""
    return f"{perm(arg, dim)}[: {arg}.size({dim}) // 2]"


def _infer_pair_read(t, attrs, m):
    dim_attr(attrs, t[0])
    return same_dims(t[0], t[1])


def _infer_fill(t, attrs, m):
    dim_attr(attrs, t[0])
    const(attrs)
    return t[0]


def _infer_fill_self(t, attrs, m):
    _infer_fill(t, attrs, m)
    return None


def _infer_reduce(t, attrs, m):
    if attrs.get("reduce") not in REDUCTIONS:
        raise Illegal(f"reduction {attrs.get('reduce')!r} not in {REDUCTIONS}")
    return _infer_write(t, attrs, m)


def _draw_fill(rng, dims, fresh) -> dict:
    return {**draw_dim(rng, dims, fresh), **draw_const(rng, dims, fresh)}


def _draw_reduce(rng, dims, fresh) -> dict:
    return {**draw_dim(rng, dims, fresh), "reduce": rng.choice(REDUCTIONS)}


#: the reductions ``reduce_perm_`` draws: smooth ones, whose gradient has no tie to
#: break (``amax`` and ``amin`` split it between equal values as each kernel likes)
REDUCTIONS = ("prod", "mean")

#: what a write tries next on the tensor it wrote: a read of other positions, or a write
#: whose values read them
AFTER_WRITE = ("roll", "gather_perm", "roll_add_", "flip_copy_", "put_flipped", "scatter_rolled", "shift_add_")
#: a write of ``y`` toward a plain copy of it, then a plain write; a read toward a copy
TO_COPY, TO_CLONE, TO_SCALE = Shrink(("copy_", "mul_"), 3), Shrink(("clone",), 3), Shrink(("mul_",), 3)


def _write(name: str, arity: int, infer, render, shrink: Shrink, then=AFTER_WRITE, **more) -> Form:
    """An in-place form of the feature; a write of a second operand (``then`` its
    follow-ups) is drawn as an index write."""
    return Form(name, INPLACE, arity, infer, render, mutates=(0,), returns=False, feature=INDEX_WRITES,
                draw=more.pop("draw", draw_dim), shrink=shrink, then=then,
                drawn_as=INDEX_WRITE if then else None, **more)


FORMS: tuple[Form, ...] = (
    _write("put_perm", 2, _infer_write,
           lambda a, at, d: f"{_along(a[0], at['dim'])}{perm(a[0], at['dim'])}] = {a[1]}", TO_COPY),
    _write("copy_perm", 2, _infer_write,
           lambda a, at, d: f"{a[0]}.index_copy_({at['dim']}, {perm(a[0], at['dim'])}, {a[1]})", TO_COPY),
    _write("scatter_perm", 2, _infer_write,
           lambda a, at, d: f"{a[0]}.scatter_({at['dim']}, {spread(a[0], at['dim'], len(d[0]))}, {a[1]})", TO_COPY),
    _write("masked_scatter", 2, _infer_masked, lambda a, at, d: f"{a[0]}.masked_scatter_({a[1]} > 0, {a[1]})",
           TO_COPY, draw=None),
    _write("put_acc", 2, _infer_acc,
           lambda a, at, d: f"{a[0]}.index_put_(({pairs(a[0])},), {a[1]}, accumulate=True)",
           Shrink(("add_", "mul_"), 3), draw=None),
    Form("roll", ATEN, 1, _infer_read, lambda a, at, d: f"torch.roll({a[0]}, 1, {at['dim']})", feature=INDEX_WRITES,
         draw=draw_dim, shrink=TO_CLONE),
    Form("gather_perm", ATEN, 1, _infer_read,
         lambda a, at, d: f"{a[0]}.gather({at['dim']}, {spread(a[0], at['dim'], len(d[0]))})", feature=INDEX_WRITES,
         draw=draw_dim, shrink=TO_CLONE),
    _write("roll_add_", 1, _infer_self_write, lambda a, at, d: f"{a[0]}.add_(torch.roll({a[0]}, 1, {at['dim']}))",
           TO_SCALE, then=()),
    _write("flip_copy_", 1, _infer_self_write,
           lambda a, at, d: f"{a[0]}.copy_(torch.flip({a[0]}, ({at['dim']},)))", TO_SCALE, then=()),
    _write("put_flipped", 1, _infer_self_write,
           lambda a, at, d: f"{_along(a[0], at['dim'])}{perm(a[0], at['dim'])}] = {a[0]}.flip({at['dim']})",
           TO_SCALE, then=()),
    _write("scatter_rolled", 1, _infer_self_write,
           lambda a, at, d: (f"{a[0]}.scatter_({at['dim']}, {spread(a[0], at['dim'], len(d[0]))}, "
                             f"torch.roll({a[0]}, -1, {at['dim']}))"), TO_SCALE, then=()),
    _write("shift_add_", 1, _infer_self_write,
           lambda a, at, d: f"{_along(a[0], at['dim'])}1:].add_({_along(a[0], at['dim'])}:-1].clone())",
           TO_SCALE, then=()),
    _write("fill_half_", 1, _infer_fill_self,
           lambda a, at, d: f"{a[0]}.index_fill_({at['dim']}, {half(a[0], at['dim'])}, {at['c']})", TO_SCALE,
           draw=_draw_fill),
    _write("reduce_perm_", 2, _infer_reduce,
           lambda a, at, d: f"{a[0]}.index_reduce_({at['dim']}, {perm(a[0], at['dim'])}, {a[1]}, '{at['reduce']}')",
           TO_COPY, draw=_draw_reduce),
    Form("add_perm", ATEN, 2, _infer_pair_read,
         lambda a, at, d: f"{a[0]}.index_add({at['dim']}, {perm(a[0], at['dim'])}, {a[1]})", feature=INDEX_WRITES,
         draw=draw_dim, shrink=Shrink(("add",), 3)),
    Form("copy_perm_fn", ATEN, 2, _infer_pair_read,
         lambda a, at, d: f"{a[0]}.index_copy({at['dim']}, {perm(a[0], at['dim'])}, {a[1]})", feature=INDEX_WRITES,
         draw=draw_dim, shrink=TO_CLONE),
    Form("fill_half", ATEN, 1, _infer_fill,
         lambda a, at, d: f"{a[0]}.index_fill({at['dim']}, {half(a[0], at['dim'])}, {at['c']})",
         feature=INDEX_WRITES, draw=_draw_fill, shrink=TO_CLONE),
)
