"""Which elements of its storage each value covers, and when a write's operands overlap.

A statement that writes one operand while it reads another of the same storage has one
eager answer only when the two cover disjoint elements: where they overlap, what is
read depends on the order in which the kernel writes (``x[1:].add_(x[:-1])``), and a
compiled program has no single result to match.  So the IR (``ir.check``) refuses a
written operand that shares its storage root with another operand unless this module
proves the two element sets disjoint for *every* binding; where it cannot, it refuses.

Every value that is a view of a root (an input, or a fresh result) is described by a
:class:`Footprint`: an affine map from its own indices to its root's *logical* indices
(the root's index space, whatever the root's strides: a root is never internally
overlapping, so disjoint logical indices are disjoint memory).  Each view dim moves one
or more root dims by a constant coefficient (a step slice by 2, an unfold's window
step), and the map starts at a symbolic base index per root dim.  A view whose form
gives no footprint (``Form.footprint`` is None) covers its whole root, so nothing
that shares that root may be read beside a write to it.

Two footprints of one root are disjoint when, along some root dim, their projections
are: either their index intervals are apart for every binding (``x[:, :k]`` and
``x[:, k:]``), or they fall in different residues modulo a period (``x[::2]`` and
``x[1::2]``, a gapped ``unfold`` and the same unfold one window-gap on).  The bounds are
sums of dim expressions with integer coefficients; a bound is proven only when every
coefficient is non-negative and the value at each dim's smallest size is (a dim is at
least its smallest value, ``sizes.smallest``).  Anything else is not proven.

A storage swap (``y.set_(z)``, :class:`Swaps`) moves a value onto another storage: the
statement's result is ``y`` as it now is, a view of ``z``'s root with ``z``'s footprint;
the name ``y`` is not read again, and ``y``'s old storage, which the views of it made
before still read, is never written again.  A tensor is resized only where it is made
(``x.new_empty(0).resize_(...)``), so no view of its old storage exists and a resized
value is a root of its own whose old footprint is void.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

from fuzzer.program import sizes
from fuzzer.program.sizes import Dims
from fuzzer.program.strided_writes import LateStrided


@dataclass(frozen=True)
class Affine:
    """``const + sum(coef * dim)`` over dim expressions, each taken as an opaque size."""

    const: int = 0
    terms: tuple[tuple[str, int], ...] = ()

    @classmethod
    def of(cls, expr: str | int) -> Affine:
        if isinstance(expr, int) or expr.isdigit():
            return cls(int(expr))
        return cls(0, ((expr, 1),))

    def __add__(self, other: Affine) -> Affine:
        table = dict(self.terms)
        for atom, c in other.terms:
            table[atom] = table.get(atom, 0) + c
        return Affine(self.const + other.const, tuple(sorted((a, c) for a, c in table.items() if c)))

    def times(self, k: int) -> Affine:
        return Affine(self.const * k, tuple((a, c * k) for a, c in self.terms if c * k))

    def __sub__(self, other: Affine) -> Affine:
        return self + other.times(-1)

    def proven_nonnegative(self, sym_min: dict[str, int]) -> bool:
        """``self >= 0`` for every admissible binding (sufficient, not necessary)."""
        if any(c < 0 for _, c in self.terms):
            return False
        return self.const + sum(c * max(0, sizes.smallest(a, sym_min)) for a, c in self.terms) >= 0


@dataclass(frozen=True)
class Footprint:
    """A view's elements as root indices: ``root[j] = base[j] + sum(coef * i)`` over the
    view dims ``i`` that move root dim ``j`` (``moves[i]``: ``(j, coef)`` pairs)."""

    base: tuple[Affine, ...]
    moves: tuple[tuple[tuple[int, int], ...], ...]
    dims: Dims

    @classmethod
    def whole(cls, dims: Dims) -> Footprint:
        """A root's own footprint: every element, each at its own index."""
        return cls(tuple(Affine() for _ in dims), tuple(((j, 1),) for j in range(len(dims))), tuple(dims))

    # the view ops, each a new footprint of the view's dims ``dims``
    def slice(self, dim: int, start: Affine, step: int, size: str) -> Footprint:
        base = list(self.base)
        for j, c in self.moves[dim]:
            base[j] = base[j] + start.times(c)
        moves = list(self.moves)
        moves[dim] = tuple((j, c * step) for j, c in self.moves[dim])
        return Footprint(tuple(base), tuple(moves), _replace(self.dims, dim, size))

    def select(self, dim: int) -> Footprint:
        """Index 0 of ``dim``."""
        return Footprint(self.base, self.moves[:dim] + self.moves[dim + 1:], self.dims[:dim] + self.dims[dim + 1:])

    def permute(self, order: tuple[int, ...]) -> Footprint:
        return Footprint(self.base, tuple(self.moves[k] for k in order), tuple(self.dims[k] for k in order))

    def unsqueeze(self, dim: int) -> Footprint:
        return Footprint(self.base, self.moves[:dim] + ((),) + self.moves[dim:],
                         self.dims[:dim] + ("1",) + self.dims[dim:])

    def diagonal(self) -> Footprint:
        """``x.diagonal()``: dims 0 and 1 walk together, as the last dim."""
        return Footprint(self.base, self.moves[2:] + (self.moves[0] + self.moves[1],), self.dims[2:] + (self.dims[0],))

    def unfold(self, dim: int, size: int, step: int, count: str) -> Footprint:
        """``x.unfold(dim, size, step)``: ``count`` windows ``step`` apart, each ``size`` long."""
        windows = self.slice(dim, Affine(), step, count)
        return Footprint(windows.base, windows.moves + (self.moves[dim],), windows.dims + (str(size),))

    def unit_last(self) -> bool:
        """Its last dim walks the root's last dim one by one: stride 1 where the root is
        laid out row-major."""
        return bool(self.moves) and self.moves[-1] == ((len(self.base) - 1, 1),)

    # ------------------------------------------------------------- disjointness
    def projection(self, j: int) -> tuple[Affine, list[tuple[int, str]]]:
        """Root dim ``j``'s indices: the base and each ``(coef, view size)`` that moves it."""
        return self.base[j], [(c, self.dims[i]) for i, moves in enumerate(self.moves) for jj, c in moves if jj == j]


def _replace(dims: Dims, k: int, new: str) -> Dims:
    return dims[:k] + (new,) + dims[k + 1:]


def _last(base: Affine, terms: list[tuple[int, str]]) -> Affine:
    """The last index a projection reaches (below ``base`` when a size is 0: empty)."""
    out = base
    for c, size in terms:
        out = out + (Affine.of(size) - Affine(1)).times(c)
    return out


#: the most residues enumerated for one projection (a window's constant length)
MAX_RESIDUES = 64


def _residues(terms: list[tuple[int, str]], period: int) -> set[int] | None:
    """The residues modulo ``period`` a projection adds to its base, or None when a
    size that matters is not a constant."""
    ranges = []
    for c, size in terms:
        if c % period == 0:
            continue
        if not size.isdigit() or int(size) > MAX_RESIDUES:
            return None
        ranges.append([c * k for k in range(int(size))])
    return {sum(p) % period for p in itertools.product(*ranges)}


def _apart(a: Footprint, b: Footprint, j: int, sym_min: dict[str, int]) -> bool:
    base_a, terms_a = a.projection(j)
    base_b, terms_b = b.projection(j)
    if any(c <= 0 for c, _ in terms_a + terms_b):
        return False
    one = Affine(1)
    if (base_b - _last(base_a, terms_a) - one).proven_nonnegative(sym_min):
        return True
    if (base_a - _last(base_b, terms_b) - one).proven_nonnegative(sym_min):
        return True
    shift = base_a - base_b
    if shift.terms:
        return False
    for period in sorted({abs(c) for c, _ in terms_a + terms_b if abs(c) > 1}):
        ra, rb = _residues(terms_a, period), _residues(terms_b, period)
        if ra is not None and rb is not None and not {(r + shift.const) % period for r in ra} & rb:
            return True
    return False


def disjoint(a: Footprint | None, b: Footprint | None, sym_min: dict[str, int]) -> bool:
    """Whether two views of one root cover no common element for any binding (None: a
    view of unknown extent, which overlaps everything)."""
    if a is None or b is None or len(a.base) != len(b.base):
        return False
    return any(_apart(a, b, j, sym_min) for j in range(len(a.base)))


def result_footprint(form, operand: Footprint | None, attrs: dict, dims: Dims) -> Footprint | None:
    """The footprint of a statement's result: a fresh value covers its own root; a view
    moves its operand's (``form.footprint``; a box over the root for ``as_strided``); a
    result that is its written operand (``Form.result_aliases``) has that operand's."""
    if form.result_aliases:
        return operand  # the result is operand 0 itself (a tagged op's written argument)
    if not form.is_view:
        return Footprint.whole(dims)
    if form.footprint is None or (operand is None and not form.dense_root):
        return None
    out = form.footprint(operand, attrs, dims)
    return Footprint(out.base, out.moves, tuple(dims))


def check_writes(stmt, form, root: dict[str, str], prints: dict[str, Footprint | None],
                 sym_min: dict[str, int]) -> None:
    """Raise ``Illegal`` where a written operand may overlap another operand: one of the
    same storage whose elements are not proven disjoint from it for every binding."""
    from fuzzer.program.form_record import Illegal
    for w in form.mutates:
        target = stmt.args[w]
        for j, other in enumerate(stmt.args):
            if j != w and root[other] == root[target] and not disjoint(prints.get(target), prints.get(other), sym_min):
                raise Illegal(f"written operand {target} shares storage with {other}, and their elements may overlap")


def layout_refusal(form, name: str, root: dict[str, str], dense: set[str], prints: dict) -> str | None:
    """Why ``form``, which reads its operand's layout, cannot be laid over ``name``; None
    where it can.  An ``as_strided`` (``Form.dense_root``) reads an input handed over
    contiguous, or a result laid out row-major (``Form.dense_result``), by its dims,
    through the root itself or a view whose footprint in it is known (a pair's part
    ``b``, a view by the IR's roots, is another storage: a box of the root's dims over it
    reads past its end); a view to another element size (``Form.unit_last``) a view of
    one whose last dim has stride 1.  The generator's draw and the IR's check both ask it."""
    if form.unit_last and not (root[name] in dense and prints.get(name) is not None and prints[name].unit_last()):
        return (f"{form.name} needs its operand's last dim at stride 1: a view of an input handed "
                "over contiguous, along its last dim")
    if not form.dense_root:
        return None
    base = root[name]
    if base != name and prints.get(name) is None:
        return (f"{form.name} is laid over {name}, a view whose place in {base}'s storage is not "
                "known (a pair's part, whose storage may be another)")
    if base not in dense:
        return (f"{form.name} is laid over the storage of {base}, which is not an input handed over "
                "contiguous, nor a result laid out row-major")
    return None


def check_dense_root(stmt, form, root: dict[str, str], dims: dict[str, Dims], dense: set[str], prints: dict) -> None:
    """:func:`layout_refusal` of the statement's operand, and an ``as_strided``'s base the
    dims of the root it is laid over.  Raises ``form_record.Illegal``."""
    from fuzzer.program.form_record import Illegal
    if not (form.unit_last or form.dense_root):
        return
    why = layout_refusal(form, stmt.args[0], root, dense, prints)
    if why is not None:
        raise Illegal(why)
    base = root[stmt.args[0]]
    if form.dense_root and stmt.attrs.get("base") != list(dims[base]):
        raise Illegal(f"{form.name}'s base {stmt.attrs.get('base')!r} is not {base}'s dims {dims[base]}")


@dataclass
class Swaps:
    """The rule of ``set_`` swaps (``Form.consumes``), as statements are checked in order.

    ``y.set_(z)`` has one eager answer where ``y`` is a fresh result: its own root, no
    input (Dynamo does not trace an in-place view of a graph input: it breaks the
    graph) and not a view (whose base would keep a footprint the swapped tensor no
    longer has), and ``z`` is of another storage.  After it, ``y`` is read only as the
    statement's result, and ``y``'s old storage is frozen: functionalization freezes the
    storage a tensor was set away from and refuses a write to it ("cannot mutate
    tensors with frozen storage"), so nothing writes it, while the views of it made
    before may still be read.

    An input swapped (``Form.consumes_input``: a parameter or buffer, by the one ``set_``
    torch compiles on a graph input, aten's ``set_.source_Tensor`` under ``no_grad``; Note
    [set_() Input Mutations in AOTAutograd]) is an input of a storage of its own (no other
    input aliases it) that nothing wrote before (a write before the ``set_`` is the case
    that Note says is not handled), set onto another storage (a value the program made, or
    another input's: the Note's cases (1) and (2)).  That storage is frozen after the swap
    too: AOTAutograd keeps a write to an input that saw a
    ``set_`` only under ``no_grad`` and raises otherwise ("not supported today",
    ``functional_utils._check_if_mutation_can_be_in_graph``)."""

    swapped: set = field(default_factory=set)
    #: the storages an input was set onto: never written after
    frozen: set = field(default_factory=set)
    #: the storages written so far: an input written before is never swapped
    written: set = field(default_factory=set)
    #: the generator reads the views made before of a storage swapped away from (feature
    #: ``input-swaps``); without it, as before, it uses none
    old_views: bool = False

    def check(self, stmt, form, root: dict[str, str], inputs) -> None:
        """Raise ``Illegal`` where ``stmt`` breaks the rule."""
        from fuzzer.program.form_record import Illegal
        for a in stmt.args:
            if a in self.swapped:
                raise Illegal(f"{a} was swapped onto another storage by set_: read its result instead")
        for w in form.mutates:
            if root[stmt.args[w]] in self.swapped:
                raise Illegal(f"written operand {stmt.args[w]} is in a storage set_ swapped away from (frozen)")
            if root[stmt.args[w]] in self.frozen:
                raise Illegal(f"written operand {stmt.args[w]} is in a storage an input was set_ onto (AOTAutograd "
                              "keeps only writes under no_grad to it)")
        for k in form.consumes:
            y, z = stmt.args[k], _other(stmt, k)
            if form.consumes_input:
                why = self._input_refused(y, z, root, inputs)
                if why is not None:
                    raise Illegal(why)
                continue
            if root[y] != y or y in inputs:
                raise Illegal(f"set_ swaps only a fresh result of its own storage, not {y}")
            if root[z] == y:
                raise Illegal(f"set_ swaps {y} onto its own storage")

    def _input_refused(self, y: str, z: str | None, root: dict[str, str], inputs) -> str | None:
        """Why input ``y`` may not be swapped onto ``z``'s storage (None: it may; ``z`` None:
        onto a storage not chosen yet)."""
        if y not in inputs or root[y] != y or any(root[i] == y for i in inputs if i != y):
            return f"set_ swaps only an input of a storage of its own, not {y}"
        if y in self.written:
            return f"set_ swaps input {y}, written before (AOTAutograd does not handle a write before a set_)"
        if z is not None and root[z] == y:
            return f"set_ swaps input {y} onto its own storage"
        return None

    def record(self, stmt, form, root: dict[str, str]) -> None:
        self.written.update(root[stmt.args[w]] for w in form.mutates)
        self.swapped.update(stmt.args[k] for k in form.consumes)
        if form.consumes_input:
            self.frozen.update(root[z] for k in form.consumes if (z := _other(stmt, k)) is not None)

    def takes(self, form, k: int, value: str, before: list[str], root: dict[str, str], inputs) -> bool:
        """Whether ``value`` may be operand ``k`` of a new statement of ``form`` whose
        operands before it are ``before`` (the generator's side of :meth:`check`)."""
        consumed = [j for j in form.consumes if j < k]
        if form.consumes_input and (k in form.consumes or consumed):
            y, z = (value, None) if k in form.consumes else (before[consumed[0]], value)
            return self._input_refused(y, z, root, inputs) is None
        if k not in form.consumes:
            return True
        return root[value] == value and value not in inputs and root[before[0]] != value

    def usable(self, value: str, root: dict[str, str]) -> bool:
        """Whether the generator may still use ``value``: not swapped, nor, unless it reads
        them (``old_views``), a view of a storage swapped away from."""
        return value not in self.swapped and (self.old_views or root[value] not in self.swapped)


def _other(stmt, k: int) -> str | None:
    """The operand a swap's operand ``k`` is set onto: the other of two (None: the form
    makes it in its text)."""
    return stmt.args[1 - k] if len(stmt.args) == 2 else None


@dataclass
class Tracker:
    """What the generator keeps of storage while it grows a program: each value's
    footprint, the roots an ``as_strided`` may be laid over (inputs handed over
    contiguous, ``Form.dense_result`` results), the values no aten form writes
    (:class:`LateStrided`), and whether a write may read a disjoint part of its own
    storage (without the rule, as before it existed, nothing written shares a root
    with another operand)."""

    overlap_rule: bool = False
    prints: dict = field(default_factory=dict)
    dense: set = field(default_factory=set)
    swaps: Swaps = field(default_factory=Swaps)
    late: LateStrided = field(default_factory=LateStrided)

    def apart(self, root: dict[str, str], a: str, b: str, sym_min: dict[str, int]) -> bool:
        """Whether ``a`` may be written while ``b`` is read, in one statement."""
        if root[a] != root[b]:
            return True
        return self.overlap_rule and disjoint(self.prints.get(a), self.prints.get(b), sym_min)

    def prefer(self, rng, root: dict[str, str], first: str, others: list[str], writes) -> list[str]:
        """The candidates for the operand beside a written ``first``: half the time, those
        of its own storage where there are some (they are rare, and what the rule is for)."""
        near = [v for v in others if root[v] == root[first]]
        if self.overlap_rule and writes and near and rng.random() < 0.5:
            return near
        return others

    def add_input(self, name: str, dims: Dims, dense: bool) -> None:
        self.prints[name] = Footprint.whole(dims)
        if dense:
            self.dense.add(name)

    def operands(self, form, root: dict[str, str], values: list[str]) -> list[str]:
        """The values a new statement of ``form`` may take as its first operand: for one laid
        over views (``Form.over_views``), those that are views of a root it may be laid over."""
        if not form.over_views:
            return values
        return [v for v in values if root[v] != v and root[v] in self.dense]

    def writable(self, stmt, form, root: dict[str, str], inputs) -> bool:
        """Whether ``stmt`` breaks nothing of :class:`LateStrided`'s."""
        return self.late.refused(stmt, form, root, inputs) is None

    def add_result(self, stmt, form, dims: Dims, root: dict[str, str]) -> None:
        self.prints[stmt.out] = result_footprint(form, self.prints[stmt.args[0]] if stmt.args else None,
                                                 stmt.attrs, dims)
        if form.dense_result:
            self.dense.add(stmt.out)
