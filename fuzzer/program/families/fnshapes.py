"""``autograd.Function`` shapes as libraries write them (feature ``function-shapes``).

``families.function`` writes Functions of one argument whose backward calls pure
ops.  Libraries' Functions (fused linear and attention kernels, losses) take several
tensors, return a gradient for each, write in backward and keep buffers on ``ctx``.
Each form here is one such class (``Form.helpers``, one class per call site) and its
call ``Name.apply(...)``:

* ``fn_pair``: two arguments of the same dims, both saved; forward ``p_mix``,
  backward a gradient for each argument, each of its own (the gradient times
  ``p_mix`` of the saved arguments; the gradient times the first);
* ``fn_linear``: two arguments; forward ``p_mix``, then adds the second argument to
  that fresh result in place (``out += y``, as the ``LinearFunction`` of torch's
  "Extending torch.autograd" note adds its bias) and returns it; backward the
  gradient times ``p_sin`` of the second, and times the second;
* ``fn_gradbuf``: backward writes a gradient in place: a clone of the incoming one,
  through ``m_addto`` (adding the gradient times the saved input) and then ``mul_``
  by the saved input, and returns it;
* ``fn_saved``: forward makes a buffer, writes it with ``m_scale`` and keeps it on
  ``ctx``; backward writes it again with ``m_scale`` and returns the gradient times it.

Every backward is linear in its gradient.  ``Function.backward`` is the
vector-Jacobian product (its docstring: defining it "is equivalent to defining the
``vjp`` function"), and autograd hands a backward zeros for an output no gradient
reached (``set_materialize_grads``), so compiled code may run a backward on zeros where
eager never calls it (an output a graph break made a graph's, the loss not reading it):
a backward that is not zero there would differ by design, not by a bug.

The two-argument forms pick their operands one at a time (``Form.fits``), so a
program may hand one value to both (``F.apply(v, v)``), and autograd adds the two
gradients it gets for it.  No form writes a value of the program: their writes go to
tensors the Function makes, so ``fuzzer.program.grad`` admits them as pure calls.
No backward writes the gradient it is given: torch's note "Extending torch.autograd"
(``docs/source/notes/extending.rst``) says of backward's gradient arguments "It is
important NEVER to modify these in-place", so such a program would be one torch does
not define, and ``fn_gradbuf`` writes a clone.  Nor does a forward write an argument
without marking it dirty (the same note: ``mark_dirty`` "must be used to mark any
input that is modified inplace"); ``families.function``'s ``fn_dirty`` marks it.

A backward is what the class says, not a derivative: compiled code must run what
eager runs.  The calls are ``Form.nested`` (``missed-dce`` does not judge them).  The
family adds no op: it calls the first library's.
"""

from __future__ import annotations

from fuzzer.program.families.control import call
from fuzzer.program.families.function import function_class
from fuzzer.program.feature_record import Feature
from fuzzer.program.form_record import BACKWARD, Form, Shrink, custom_form, fits_same_dims, infer_same, infer_same2
from fuzzer.program.op_snippets import FIRST

FEATURE = "function-shapes"
OPS: tuple = ()

FEATURES: tuple[Feature, ...] = (
    Feature(FEATURE, 0.2, "autograd.Function subclasses as libraries write them: two tensor arguments "
            "(one value may be given as both), a gradient returned for each, an in-place add to the forward's "
            "result, a backward that writes a clone of its gradient in place, a buffer kept on ctx that forward "
            "and backward both write"),
)


def _pair(stmt, plain: bool) -> dict[str, str]:
    s, s2 = stmt.attrs["site"], stmt.attrs["site2"]
    name = f"PairFunction{s}"
    forward = ["ctx.save_for_backward(x, y)", f"return {call('p_mix', 'x, y', s, plain)}"]
    backward = ["x, y = ctx.saved_tensors", f"return grad * {call('p_mix', 'y, x', s2, plain)}, grad * x"]
    return {name: function_class(name, "x, y", forward, backward)}


def _linear(stmt, plain: bool) -> dict[str, str]:
    s, s2 = stmt.attrs["site"], stmt.attrs["site2"]
    name = f"AddFunction{s}"
    forward = ["ctx.save_for_backward(y)", f"out = {call('p_mix', 'x, y', s, plain)}", "out += y", "return out"]
    backward = ["y, = ctx.saved_tensors", f"return grad * {call('p_sin', 'y', s2, plain)}, grad * y"]
    return {name: function_class(name, "x, y", forward, backward)}


def _gradbuf(stmt, plain: bool) -> dict[str, str]:
    s, s2 = stmt.attrs["site"], stmt.attrs["site2"]
    name = f"GradInPlace{s}"
    forward = ["ctx.save_for_backward(x)", f"return {call('p_sin', 'x', s, plain)}"]
    backward = ["x, = ctx.saved_tensors", "g = grad.clone()", call("m_addto", "g, grad * x", s2, plain),
                "g.mul_(x)", "return g"]
    return {name: function_class(name, "x", forward, backward)}


def _saved(stmt, plain: bool) -> dict[str, str]:
    s, s2 = stmt.attrs["site"], stmt.attrs["site2"]
    name = f"SavedBuffer{s}"
    forward = ["buf = x.clone()", call("m_scale", "buf", s, plain), "ctx.buf = buf", "return buf * x"]
    backward = ["buf = ctx.buf", call("m_scale", "buf", s2, plain), "return grad * buf"]
    return {name: function_class(name, "x", forward, backward)}


def _apply(prefix: str):
    """The render of ``<prefix><site>.apply(...)``: the call of the statement's class."""
    def render(a, at, d):
        return f"{prefix}{at['site']}.apply({', '.join(a)})"
    return render


def _function(op: str, prefix: str, helpers, arity: int, form: str, **fields) -> Form:
    """The form of an ``autograd.Function`` class (``helpers``) of ``arity`` arguments of
    one shape whose forward calls the first library's op ``op``: two call sites, nested."""
    return custom_form(FIRST[op], arity, infer_same if arity == 1 else infer_same2(True), form=form,
                       feature=FEATURE, grad=BACKWARD, render=_apply(prefix), nested=True, returns=True, site_count=2,
                       helpers=helpers, **fields)


#: the family's forms, each toward a Function of one argument that writes nothing in
#: backward (``families.function``), then the bare call
FORMS: tuple[Form, ...] = (
    _function("p_mix", "PairFunction", _pair, 2, "fn_pair", fits=fits_same_dims,
              shrink=Shrink(("fn_pure", "p_mix"), 4)),
    _function("p_mix", "AddFunction", _linear, 2, "fn_linear", fits=fits_same_dims, also_calls=("p_sin",),
              shrink=Shrink(("fn_pair", "p_mix"), 5)),
    _function("p_sin", "GradInPlace", _gradbuf, 1, "fn_gradbuf", also_calls=("m_addto",),
              shrink=Shrink(("fn_pure", "p_sin"), 4)),
    _function("m_scale", "SavedBuffer", _saved, 1, "fn_saved", shrink=Shrink(("fn_scale", "m_scale", "clone"), 4)),
)
