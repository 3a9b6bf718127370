"""Tensor subclasses through custom ops (feature ``tensor-subclass``).

Quantisation and distributed libraries hold a value as a *wrapper subclass*: a tensor
made with ``torch.Tensor._make_wrapper_subclass`` whose data lives in inner tensors it
names (``__tensor_flatten__`` / ``__tensor_unflatten__``), every aten op running on
those (``__torch_dispatch__``), and each custom op it supports by a handler registered
for it (``torch.library.register_torch_dispatch``: open registration, without touching
the op or the class).  ``torch.compile`` traces such a value by its inner tensors
(AOTAutograd's ``subclass_utils``) and wraps them again at the graph's edges.

The family's class is :data:`PAIR_SOURCE`'s ``PairTensor``: two tensors of one shape,
``a`` and ``b``, as torch's own ``TwoTensor`` (``torch.testing._internal.two_tensor``)
holds them.  It and the handlers of the family's ops are the program's helpers
(``Form.helpers``), emitted before the program as a library's user code would be;
the ops themselves are plain custom ops of the library, which take plain tensors, and
each handler says what a call of one on a pair does:

* ``w_mix`` (pure): a pair of each part's result, the second reading the first part too;
* ``w_fold`` (pure): a plain tensor of both parts, as a dequantisation reads a value;
* ``w_update`` (mutating): writes both parts in place, the second from the first;
* ``w_addto`` (mutating): adds a second operand into the first, either or both a pair;
* ``w_log`` (ORDERED effect): logs each part;
* ``w_tap`` (ORDERED effect with a result): logs each part and returns a pair of each
  part's result, read by aten and by the family's ops as any pair is (a library's
  collective or cache op returning a sharded or quantised value).

The forms make a pair of two plain values (``w_pair``: the first *is* the pair's part
``a``, a view of its storage; ``b`` is a fresh product of the second), call the ops on
pairs, scale one by aten (``pair_scale``), view it and write it by aten as library code
slices, transposes, copies, reduces and updates a sharded or quantised value
(``pair_head``, ``pair_transpose``, ``pair_unsqueeze``, ``pair_clone``, ``pair_sum``,
``pair_add`` of two pairs, ``pair_mul_``: aten's forms of those names run by the class
on both parts, a view a pair of the parts' views), read its parts back
(``w_first``, ``w_second``: views), write it in place and return it.  A pair is a value of kind
``dtypes.SUBCLASS``: no form but these takes one.  The IR roots a pair and both its
parts in the storage of the pair's part ``a`` (an over-approximation: ``b`` is fresh),
so every real alias is one the rules see.

In a program that takes gradients an input handed over as a pair is the leaf that
requires grad (``fuzzer.program.pairs``), as a sharded parameter or quantised weight in
training: the aten forms read it (the class's ``__torch_dispatch__`` runs their
backward's aten ops on both parts too), and a returned pair is counted in the loss by
:data:`TOTAL_SOURCE`'s ``PairTotal`` (an ``autograd.Function``: the sum of the parts,
each part's gradient the result's).  The family's ops and ``w_pair``, ``w_first`` and
``w_second`` have no backward (an inner tensor read by its attribute is outside
autograd), so they read no value that requires grad (``grad.GradRules``).

Each form that calls an op shrinks toward the first library's op of its kind on a plain
tensor (``Shrink.simpler``), and the shrinker's ``plain`` pass
(``fuzzer.reduce.passes.plain``) turns a pair back into its part ``a`` where the bug
allows: the pair's maker and readers read as that operand, its calls as those ops.
"""

from __future__ import annotations

import dataclasses

from fuzzer.program import aten_forms
from fuzzer.program.dtypes import SUBCLASS
from fuzzer.program.feature_record import Feature
from fuzzer.program.form_record import (
    ATEN,
    NO_BACKWARD,
    SUBCLASS_SOURCE,
    SUBCLASS_USE,
    VIEW,
    Form,
    Shrink,
    custom_form,
    draw_const,
    fits_same_dims,
    infer_none,
    infer_same,
    infer_same2,
    infer_scaled,
)
from fuzzer.program.op_record import EFFECTFUL, MUTATING, PURE, CustomOp, op_maker

FEATURE = "tensor-subclass"
#: the class the family's values are, as the program's text names it
CLASS = "PairTensor"
#: the ``autograd.Function`` a loss reads a returned pair through (``TOTAL_SOURCE``)
TOTAL = "PairTotal"
#: how complicated a form of the family reads: above the plain forms it shrinks to
COMPLEXITY = 3


def unavailable() -> str | None:
    """Why this torch cannot run the family, or None: it needs open registration of a
    custom op's handler for a subclass (``torch.library.register_torch_dispatch``) and
    wrapper subclasses (``torch.Tensor._make_wrapper_subclass``)."""
    import torch

    if not hasattr(torch.library, "register_torch_dispatch"):
        return "this torch.library has no register_torch_dispatch"
    if not hasattr(torch.Tensor, "_make_wrapper_subclass"):
        return "this torch has no wrapper subclasses (torch.Tensor._make_wrapper_subclass)"
    return None


FEATURES: tuple[Feature, ...] = (
    Feature(FEATURE, 0.25, "a wrapper tensor subclass (two inner tensors, __tensor_flatten__, __torch_dispatch__) "
            "given to pure, mutating and effectful custom ops through handlers registered with "
            "register_torch_dispatch, returned, written in place and read back part by part; an input handed "
            "over as one (a module's buffer among them: Mode.pairs)",
            unavailable=unavailable, seen_in=lambda program: bool(program.mode.pairs)),
)

#: the class, as a wrapper subclass of a library is written: two parts of one shape, every
#: aten op on both (its aliasing kept right for views and in-place ops), a custom op as the
#: handler registered for it says
PAIR_SOURCE = '''\
import torch.utils._pytree as _pytree
from torch.utils._python_dispatch import return_and_correct_aliasing as _correct_aliasing


class PairTensor(torch.Tensor):
    """Two tensors of one shape held as one, as a quantisation or distributed library
    holds the parts of a value: every aten op runs on both parts, a custom op as the
    handler registered for it (torch.library.register_torch_dispatch) says."""

    __torch_function__ = torch._C._disabled_torch_function_impl

    @staticmethod
    def __new__(cls, a, b, outer_size=None, outer_stride=None):
        return torch.Tensor._make_wrapper_subclass(
            cls, a.size() if outer_size is None else outer_size,
            strides=a.stride() if outer_stride is None else outer_stride, storage_offset=a.storage_offset(),
            dtype=a.dtype, device=a.device, requires_grad=False)

    def __init__(self, a, b, outer_size=None, outer_stride=None):
        self.a = a
        self.b = b

    def __repr__(self):
        return f"PairTensor({self.a!r}, {self.b!r})"

    def __tensor_flatten__(self):
        return ["a", "b"], None

    @staticmethod
    def __tensor_unflatten__(inner, context, outer_size, outer_stride):
        return PairTensor(inner["a"], inner["b"], outer_size, outer_stride)

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        args_a, kwargs_a = _pytree.tree_map_only(PairTensor, lambda t: t.a, (args, kwargs))
        args_b, kwargs_b = _pytree.tree_map_only(PairTensor, lambda t: t.b, (args, kwargs))
        out_a, out_b = func(*args_a, **kwargs_a), func(*args_b, **kwargs_b)
        flat_a, spec = _pytree.tree_flatten(out_a)
        flat = [cls(x, y) if isinstance(x, torch.Tensor) else x for x, y in zip(flat_a, _pytree.tree_leaves(out_b))]
        return _correct_aliasing(func, args, kwargs, _pytree.tree_unflatten(flat, spec))
'''

#: the ``autograd.Function`` a loss reads a returned pair through: in a program's text only
#: where it takes gradients of a pair (a script defines only what its program needs)
TOTAL_SOURCE = '''\
class PairTotal(torch.autograd.Function):
    """A pair's parts summed into a plain tensor, differentiably, as a library's
    dequantisation or gather is: the gradient of each part is the result's."""

    @staticmethod
    def forward(ctx, pair):
        return pair.a + pair.b

    @staticmethod
    def backward(ctx, grad):
        grad = grad.contiguous()
        return PairTensor(grad, grad.clone())
'''

#: each op's handler for a pair, registered by its name; ``*rest`` is what follows the
#: tensors (the call site, where calls pass one), so a handler reads alike either way
HANDLERS: dict[str, str] = {
    "w_mix": '''\
@torch.library.register_torch_dispatch("dcefuzz::w_mix", PairTensor)
def _w_mix_of_pair(cls, func, types, args, kwargs):
    x, *rest = args
    return PairTensor(func(x.a, *rest), func(x.b, *rest) + x.a)
''',
    "w_fold": '''\
@torch.library.register_torch_dispatch("dcefuzz::w_fold", PairTensor)
def _w_fold_of_pair(cls, func, types, args, kwargs):
    x, *rest = args
    return func(x.a, *rest) + x.b
''',
    "w_update": '''\
@torch.library.register_torch_dispatch("dcefuzz::w_update", PairTensor)
def _w_update_of_pair(cls, func, types, args, kwargs):
    x, *rest = args
    func(x.a, *rest)
    x.b.add_(x.a)
''',
    "w_addto": '''\
@torch.library.register_torch_dispatch("dcefuzz::w_addto", PairTensor)
def _w_addto_of_pair(cls, func, types, args, kwargs):
    x, y, *rest = args
    if isinstance(x, PairTensor) and isinstance(y, PairTensor):
        func(x.a, y.a, *rest)
        func(x.b, y.b, *rest)
    elif isinstance(x, PairTensor):
        func(x.a, y, *rest)
        x.b.sub_(y)
    else:
        func(x, y.a, *rest)
        func(x, y.b, *rest)
''',
    "w_log": '''\
@torch.library.register_torch_dispatch("dcefuzz::w_log", PairTensor)
def _w_log_of_pair(cls, func, types, args, kwargs):
    x, *rest = args
    func(x.a, *rest)
    func(x.b, *rest)
''',
    "w_tap": '''\
@torch.library.register_torch_dispatch("dcefuzz::w_tap", PairTensor)
def _w_tap_of_pair(cls, func, types, args, kwargs):
    x, *rest = args
    return PairTensor(func(x.a, *rest), func(x.b, *rest))
''',
}


_op = op_maker(FEATURE)


OPS: tuple[CustomOp, ...] = (
    _op("w_mix", PURE, "sin(x) + x / 2, fresh; of a pair: each part's, the second plus the first part", '''
@torch.library.custom_op("dcefuzz::w_mix", mutates_args=())
def w_mix(x: torch.Tensor, site: int) -> torch.Tensor:
    _hit("w_mix", site)
    return (torch.sin(x) + x * 0.5).contiguous()


@w_mix.register_fake
def _(x, site):
    return x.new_empty(x.shape)
'''),
    _op("w_fold", PURE, "x * 2 - 1, fresh; of a pair: a plain tensor, the first part's plus the second part", '''
@torch.library.custom_op("dcefuzz::w_fold", mutates_args=())
def w_fold(x: torch.Tensor, site: int) -> torch.Tensor:
    _hit("w_fold", site)
    return (x * 2.0 - 1.0).contiguous()


@w_fold.register_fake
def _(x, site):
    return x.new_empty(x.shape)
'''),
    _op("w_update", MUTATING, "x = x * 1.5 - 0.5 in place; of a pair: the first part so, then b += a", '''
@torch.library.custom_op("dcefuzz::w_update", mutates_args=("x",))
def w_update(x: torch.Tensor, site: int) -> None:
    _hit("w_update", site)
    x.mul_(1.5).sub_(0.5)


@w_update.register_fake
def _(x, site):
    return None
'''),
    _op("w_addto", MUTATING, "x += y / 2 in place; of pairs part by part, a pair and a plain y in the first part "
        "(b -= y), a plain x from both parts of a pair y", '''
@torch.library.custom_op("dcefuzz::w_addto", mutates_args=("x",))
def w_addto(x: torch.Tensor, y: torch.Tensor, site: int) -> None:
    _hit("w_addto", site)
    x.add_(y * 0.5)


@w_addto.register_fake
def _(x, y, site):
    return None
'''),
    _op("w_log", EFFECTFUL, "logs its input (an ORDERED effect); of a pair: each part, in order", '''
@torch.library.custom_op("dcefuzz::w_log", mutates_args=())
def w_log(x: torch.Tensor, site: int) -> None:
    _hit("w_log", site, x, effect=True)


@w_log.register_fake
def _(x, site):
    return None


_register_ordered(w_log)
'''),
    _op("w_tap", EFFECTFUL, "logs its input (an ORDERED effect) and returns cos(x), fresh; of a pair: each "
        "part logged in order, a pair of each part's result", '''
@torch.library.custom_op("dcefuzz::w_tap", mutates_args=())
def w_tap(x: torch.Tensor, site: int) -> torch.Tensor:
    _hit("w_tap", site, x, effect=True)
    return torch.cos(x).contiguous()


@w_tap.register_fake
def _(x, site):
    return x.new_empty(x.shape)


_register_ordered(w_tap)
'''),
)

OP = {op.name: op for op in OPS}


def _handler(op: str):
    """The helpers of a form that calls ``op`` on a pair: the class and ``op``'s handler
    (a script defines only the ops its program calls, and a handler needs its op)."""
    def helpers(stmt, plain: bool) -> dict[str, str]:
        return {CLASS: PAIR_SOURCE, f"_{op}_of_pair": HANDLERS[op]}
    return helpers


def _is_pair(attrs) -> str:
    return SUBCLASS


def _is_plain(attrs) -> None:
    return None


def _render_pair(a, at, d):
    return f"{CLASS}({a[0]}, {a[1]} * {at['c']})"


def _attribute(name: str):
    def render(a, at, d):
        return f"{a[0]}.{name}"
    return render


def _fits_any(operands) -> bool:
    return True


def _class_only(stmt, plain: bool) -> dict[str, str]:
    return {CLASS: PAIR_SOURCE}


def _aten_on_pair(name: str, base: str, result_dtype) -> Form:
    """aten's form ``base`` on a pair, as library code slices, transposes and scales a
    quantised or sharded value in place: the class's ``__torch_dispatch__`` runs it on both
    parts (a view a pair of the parts' views, an in-place write both parts written); it
    shrinks to ``base`` on the plain tensor the pair becomes."""
    form = next(f for f in aten_forms.FORMS if f.name == base)
    return dataclasses.replace(form, name=name, feature=FEATURE, fits=fits_same_dims if form.arity > 1 else _fits_any,
                               operand_dtypes=(SUBCLASS,) * form.arity, broadcasts=False,
                               result_dtype=result_dtype if form.returns else None, opaque=False,
                               drawn_as=SUBCLASS_USE, shrink=Shrink((base,), COMPLEXITY))


def _reads_pair(op: str, arity: int, infer, kinds: tuple, *, form: str | None = None, **fields) -> Form:
    """The form that calls the family's op ``op`` with operands of ``kinds`` (a pair:
    ``SUBCLASS``; None: a plain tensor), drawn among the forms that read a pair.  No op
    of the family has a backward: in a program that takes gradients it reads no pair that
    requires grad (``grad.GradRules``), outside ``no_grad``."""
    return custom_form(OP[op], arity, infer, form=form, feature=FEATURE, operand_dtypes=kinds, grad=NO_BACKWARD,
                       fits=fits_same_dims if arity > 1 else _fits_any, helpers=_handler(op),
                       helper_per_site=False, drawn_as=SUBCLASS_USE, **fields)


#: a pair toward the plain tensor of its part ``a`` (the ``plain`` pass); a call toward the
#: first library's op of its kind, arity and result on that tensor
FORMS: tuple[Form, ...] = (
    Form("w_pair", VIEW, 2, infer_same2(True), _render_pair, feature=FEATURE, fits=fits_same_dims, draw=draw_const,
         result_dtype=_is_pair, helpers=_class_only, helper_per_site=False, drawn_as=SUBCLASS_SOURCE,
         grad=NO_BACKWARD, shrink=Shrink(complexity=COMPLEXITY, to_operand=True)),
    Form("w_first", VIEW, 1, infer_same, _attribute("a"), feature=FEATURE, fits=_fits_any,
         operand_dtypes=(SUBCLASS,), result_dtype=_is_plain, drawn_as=SUBCLASS_USE,
         grad=NO_BACKWARD, shrink=Shrink(complexity=COMPLEXITY, to_operand=True)),
    Form("w_second", VIEW, 1, infer_same, _attribute("b"), feature=FEATURE, fits=_fits_any,
         operand_dtypes=(SUBCLASS,), result_dtype=_is_plain, drawn_as=SUBCLASS_USE,
         grad=NO_BACKWARD, shrink=Shrink(complexity=COMPLEXITY, to_operand=True)),
    Form("pair_scale", ATEN, 1, infer_scaled, lambda a, at, d: f"{a[0]} * {at['c']}", feature=FEATURE,
         fits=_fits_any, draw=draw_const, operand_dtypes=(SUBCLASS,), result_dtype=_is_pair, opaque=False,
         drawn_as=SUBCLASS_USE, shrink=Shrink(("scale",), COMPLEXITY)),
    _reads_pair("w_mix", 1, infer_same, (SUBCLASS,), result_dtype=_is_pair, shrink=Shrink(("p_sin",), COMPLEXITY)),
    _reads_pair("w_fold", 1, infer_same, (SUBCLASS,), result_dtype=_is_plain, shrink=Shrink(("p_sin",), COMPLEXITY)),
    _reads_pair("w_update", 1, infer_none, (SUBCLASS,), mutates=(0,), shrink=Shrink(("m_scale",), COMPLEXITY)),
    _reads_pair("w_addto", 2, infer_same2(False), (SUBCLASS, SUBCLASS), mutates=(0,),
                shrink=Shrink(("m_addto",), COMPLEXITY)),
    _reads_pair("w_addto", 2, infer_same2(False), (SUBCLASS, None), form="w_addto_plain", mutates=(0,),
                shrink=Shrink(("m_addto",), COMPLEXITY)),
    _reads_pair("w_addto", 2, infer_same2(False), (None, SUBCLASS), form="w_addto_into", mutates=(0,),
                shrink=Shrink(("m_addto",), COMPLEXITY)),
    _reads_pair("w_log", 1, infer_none, (SUBCLASS,), shrink=Shrink(("e_log",), COMPLEXITY)),
    _reads_pair("w_tap", 1, infer_same, (SUBCLASS,), result_dtype=_is_pair, shrink=Shrink(("e_tap",), COMPLEXITY)),
    _aten_on_pair("pair_head", "head", _is_pair),
    _aten_on_pair("pair_transpose", "transpose", _is_pair),
    _aten_on_pair("pair_mul_", "mul_", None),
    _aten_on_pair("pair_unsqueeze", "unsqueeze", _is_pair),
    _aten_on_pair("pair_clone", "clone", _is_pair),
    _aten_on_pair("pair_sum", "sum", _is_pair),
    _aten_on_pair("pair_add", "add", _is_pair),
)
