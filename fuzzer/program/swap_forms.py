"""Storage swaps in a program, as statement forms (the ``storage-swaps`` feature).

Real code moves a tensor onto another storage (``set_``) and reallocates one
(``resize_``): a workspace grown to the size of the data, a tensor pointed at a
buffer, a parameter's storage swapped.  The forms here write what such code writes,
on the values torch lets a compiled function swap:

* ``set_alias``: ``x.new_empty(0).set_(x)``, a fresh tensor set onto ``x``'s storage
  (its sizes, strides and offset): a view of ``x`` to the IR, so a write through it is
  a write to ``x``, an input's or a module buffer's included;
* ``set_clone``: ``x.new_empty(0).set_(x.clone())``: a fresh tensor set onto a clone's
  storage, a root of its own;
* ``swap``: ``y.set_(z)`` for a fresh result ``y`` (operand 1) of ``z``'s dims: ``y``
  now views ``z``'s storage, and the statement's result is ``y`` as it now is;
  ``storage.Swaps`` keeps the rule (``y`` not read again, its old storage not written);
* ``resize_copy``: ``x.new_empty(0).resize_(x.shape).copy_(x)``: a buffer grown from
  nothing, every element written before it is read (grown memory is uninitialised);
* ``resize_head``: ``x.clone(memory_format=torch.contiguous_format).resize_(h, ...)``
  with ``h`` half of dim 0: a contiguous buffer shrunk, which keeps its first rows.

Dynamo traces ``set_`` on a value the function made, never on an input (an in-place
view of a graph input breaks the graph), so no form swaps an input or a buffer
itself; ``resize_`` it does not trace at all (``Tensor.resize_`` breaks the graph), so a
program with a ``resize_`` form runs in two graphs and is untested where nothing else
is found, like any break the program did not ask for.  A graph break makes every value
made before it an input of the graph that resumes (the resized tensor too): a ``swap`` of
such a value is a ``set_`` of a graph input as AOTAutograd sees it, and what it says it
does not support for one is refused as for an input swapped on purpose
(:func:`swaps_graph_input`, INPUT SWAP LIMITS in ``fuzzer.judge.contract``).  None has a
backward (``NO_BACKWARD``): a swap reads no value that requires grad.
"""

from __future__ import annotations

from fuzzer.program import sizes
from fuzzer.program.families.swaps import FEATURE as STORAGE_SWAPS
from fuzzer.program.form_record import (
    ATEN,
    CONTROL,
    NO_BACKWARD,
    VIEW,
    Form,
    Shrink,
    infer_same,
    known_dim,
    need_rank,
    py_dim,
)

#: the feature is declared with the custom ops that swap storage (``families.swaps``)
FEATURES: tuple = ()


def _infer_head(t, attrs, m):
    need_rank(t[0], 1)
    for d in t[0]:
        known_dim(d)
    return (sizes.half(t[0][0]),) + t[0][1:]


def _render_head(a, at, d):
    return (f"{a[0]}.clone(memory_format=torch.contiguous_format)"
            f".resize_(({py_dim(sizes.half(d[0][0]))}, *{a[0]}.shape[1:]))")


def _form(name: str, category: str, arity: int, infer, render, **more) -> Form:
    return Form(name, category, arity, infer, render, feature=STORAGE_SWAPS, grad=NO_BACKWARD, **more)


#: the swaps, each toward the plain forms: a tensor set onto a storage to the view or the
#: clone it reads, a swapped value to that view (the swapped operand dropped), a resized
#: buffer to the clone or the slice it holds
FORMS: tuple[Form, ...] = (
    _form("set_alias", VIEW, 1, infer_same, lambda a, at, d: f"{a[0]}.new_empty(0).set_({a[0]})",
          footprint=lambda f, at, d: f, shrink=Shrink(("alias",), 3)),
    _form("set_clone", ATEN, 1, infer_same, lambda a, at, d: f"{a[0]}.new_empty(0).set_({a[0]}.clone())",
          shrink=Shrink(("clone",), 3)),
    _form("swap", VIEW, 2, infer_same, lambda a, at, d: f"{a[1]}.set_({a[0]})",
          footprint=lambda f, at, d: f, consumes=(1,), shrink=Shrink(("set_alias", "alias"), 4)),
    _form("resize_copy", ATEN, 1, infer_same,
          lambda a, at, d: f"{a[0]}.new_empty(0).resize_({a[0]}.shape).copy_({a[0]})", shrink=Shrink(("clone",), 3)),
    _form("resize_head", ATEN, 1, _infer_head, _render_head, shrink=Shrink(("head",), 3)),
)


#: the forms Dynamo does not trace (``Tensor.resize_`` breaks the graph): the graph that
#: resumes after one takes the resized tensor, and every value made before it, as inputs
RESIZES: frozenset = frozenset({"resize_copy", "resize_head"})


#: the forms that set a tensor onto another's storage: an alias of it that is no view
#: (``_base`` None), which AOTAutograd's merging of aliased inputs does not handle
#: (ALIAS MERGE LIMITS, ``fuzzer.judge.contract``)
SET_ALIASES = frozenset({"set_alias", "swap"})


def swaps_graph_input(program, form_of) -> bool:
    """Whether a ``swap`` of ``program`` sets a value that a graph break before it (a
    ``resize_`` form, the one that made the value included, or a ``CONTROL`` form) turned
    into an input of the graph that resumes: a ``set_`` of a graph input to AOTAutograd,
    though the program swaps only values it made.  ``form_of`` maps a form's name to its
    record (``fuzzer.program.forms.form``)."""
    made: dict[str, int] = {}
    breaks: list[int] = []
    for i, stmt in enumerate(program.body):
        if stmt.form == "swap" and stmt.args[1] in made:
            if any(made[stmt.args[1]] <= b < i for b in breaks):
                return True
        if stmt.form in RESIZES or form_of(stmt.form).category == CONTROL:
            breaks.append(i)
        if stmt.out is not None:
            made[stmt.out] = i
    return False
