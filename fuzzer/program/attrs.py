"""A statement's attributes: the scalars its form takes and the names it gives.

``Stmt.attrs`` stays a dict: it is saved as the statement's JSON object, compared
whole (an identical call repeats its site only with equal attributes) and handed to a
form's ``infer``, ``render`` and ``footprint`` as it is.  :class:`Attrs` names every
key a form may draw (``Form.draw``) or the generator may add, each with what it means,
so a reader finds the keys in one place; a form reads only its own.
"""

from __future__ import annotations

from typing import Any, TypedDict


class Attrs(TypedDict, total=False):
    """The keys of ``Stmt.attrs``; a statement holds those of its form only."""

    #: the call site of a custom op, recorded in the run-time trace (an identical call
    #: repeats an earlier statement's)
    site: int
    #: the second call site of a call with two branches (``torch.cond``'s false branch)
    site2: int
    #: the name of a size only the data knows (an unbacked symbol, ``u3``)
    size: str
    #: the statement runs under ``torch.no_grad()`` (a program that takes gradients only)
    no_grad: bool
    #: the operand's dim the form works along (a vmap's batch dim: its ``in_dims``)
    dim: int
    #: where a vmap puts the batch dim in its result (its ``out_dims``)
    out: int
    #: the inner vmap's batch dim, of each example of the outer one (two levels of vmap)
    inner: int
    #: the dtype of an autocast region (``torch.autocast(..., dtype=...)``): ``bfloat16``, ``float16``
    region: str
    #: a constant of ``form.CONSTANTS``
    c: float
    #: a unary function of ``form.UNARY_FUNCTIONS`` (``sin``, ``tanh``, ...)
    fn: str
    #: which result of a two-result op is kept (0 or 1)
    take: int
    #: an integer form's operation: a bitwise op or a division (``int_forms``)
    op: str
    #: an integer form's divisor, or ``p_affine``'s int scalar
    k: int
    #: ``p_affine``'s float scalar (one of ``form.CONSTANTS``)
    a: float
    #: ``p_affine``'s bool scalar
    flag: bool
    #: where ``k_put`` writes: a drawn index, or ``"size"`` (a binding's size modulo the cache's)
    at: int | str
    #: ``r_stat``'s momentum
    m: float
    #: ``c_sinmix``'s keyword scalar (None: its default)
    alpha: float | None
    #: ``c_two``'s keyword scalar (None: its default)
    beta: float | None
    #: an ``as_strided`` view's base: the dims of the contiguous input it is laid over
    base: list[str]
    #: an ``as_strided`` view's pieces, one for each dim of its base (``strided_forms.PIECES``)
    pieces: list[str]
    #: an order of dims: the one an ``as_strided`` view takes its base's dims in, the one
    #: ``permute_to`` and a write back (``transposed_forms``) read their operand's in
    order: list[int]
    #: the order a write back (``transposed_forms``) takes what it read in, to its operand's dims
    back: list[int]
    #: how a write back makes a fresh tensor of what it read (``transposed_forms.VIA``)
    via: str
    #: an ``unfold``'s window size
    size_w: int
    #: an ``unfold``'s step
    step: int
    #: a view to a dtype of another element size: which (``strided_forms.WIDTHS``)
    width: str
    #: the diagonal ``diagonal_scatter`` writes (``scatter_forms.OFFSETS``)
    diag: int
    #: ``reduce_perm_``'s reduction (``index_writes.REDUCTIONS``)
    reduce: str
    #: a user's op's scalar arguments, by name (``fuzzer.user.form``)
    scalars: dict[str, Any]
    #: the opaque object the statement hands its op or reads (``Mode.objects``'s name)
    obj: str
    #: which of ``objects.SCALE_CHOICES`` a value object made in the program's text is made of
    pick: int


#: the keys that hold a call site: what a renumbering of sites rewrites
SITE_KEYS: tuple[str, ...] = ("site", "site2")
