"""Custom ops inside a ``torch.autograd.Function`` (feature ``autograd-function``).

Libraries wrap their kernels in ``autograd.Function`` subclasses as often as they
register a backward: the forward calls custom ops, writes in place, and the backward
calls custom ops too.  Each form here is one such class, emitted before the program
(one class per call site, like a region: ``Form.helpers``), and its call
``Name.apply(x)``:

* ``fn_pure``: forward ``p_sin``, backward the gradient times ``p_mix`` of the
  saved input (linear in the gradient: ``families.fnshapes`` says why);
* ``fn_scale``: forward writes a fresh intermediate with ``m_scale``; backward
  ``p_sin`` of the gradient;
* ``fn_dirty``: forward writes its input with ``m_scale`` and marks it dirty
  (``ctx.mark_dirty``), returning it: the result is the input, written; backward
  ``p_sin``.  Autograd lets it write a value that requires grad where
  ``fuzzer.program.grad`` says.

A backward is what the class says, not a derivative: compiled code must run what
eager runs.  The calls are ``Form.nested`` (``missed-dce`` does not judge them).
The family adds no op: it calls the first library's.
"""

from __future__ import annotations

from fuzzer.program.families.control import call
from fuzzer.program.feature_record import Feature
from fuzzer.program.form_record import BACKWARD, Form, Shrink, custom_form, infer_same
from fuzzer.program.op_snippets import FIRST

FEATURE = "autograd-function"
OPS: tuple = ()

FEATURES: tuple[Feature, ...] = (
    Feature(FEATURE, 0.25, "torch.autograd.Function subclasses whose forward and backward call "
            "custom ops: pure, writing a fresh intermediate, writing its input marked dirty"),
)


def function_class(name: str, params: str, forward: list[str], backward: list[str]) -> str:
    """The text of an ``autograd.Function`` subclass ``name`` whose forward takes
    ``params`` and runs the lines ``forward``, and whose backward of ``grad`` runs
    ``backward`` (``families.fnshapes`` writes its classes with it too)."""
    lines = [f"class {name}(torch.autograd.Function):", "    @staticmethod", f"    def forward(ctx, {params}):"]
    lines += [f"        {line}" for line in forward]
    lines += ["", "    @staticmethod", "    def backward(ctx, grad):"]
    lines += [f"        {line}" for line in backward]
    return "\n".join(lines) + "\n"


def _pure(stmt, plain: bool) -> dict[str, str]:
    s, s2 = stmt.attrs["site"], stmt.attrs["site2"]
    name = f"SinFunction{s}"
    return {name: function_class(name, "x", ["ctx.save_for_backward(x)", f"return {call('p_sin', 'x', s, plain)}"],
                                 ["x, = ctx.saved_tensors", f"return grad * {call('p_mix', 'x, x', s2, plain)}"])}


def _scale(stmt, plain: bool) -> dict[str, str]:
    s, s2 = stmt.attrs["site"], stmt.attrs["site2"]
    name = f"ScaleFunction{s}"
    return {name: function_class(name, "x", ["y = x * 2.0", call("m_scale", "y", s, plain), "return y"],
                                 [f"return {call('p_sin', 'grad', s2, plain)}"])}


def _dirty(stmt, plain: bool) -> dict[str, str]:
    s, s2 = stmt.attrs["site"], stmt.attrs["site2"]
    name = f"ScaleInPlace{s}"
    return {name: function_class(name, "x", [call("m_scale", "x", s, plain), "ctx.mark_dirty(x)", "return x"],
                                 [f"return {call('p_sin', 'grad * 0.5', s2, plain)}"])}


def _apply(prefix: str):
    """The render of ``<prefix><site>.apply(x)``: the call of the statement's class."""
    def render(a, at, d):
        return f"{prefix}{at['site']}.apply({a[0]})"
    return render


def _function(op: str, prefix: str, helpers, form: str, **fields) -> Form:
    """The form of an ``autograd.Function`` class (``helpers``) whose forward calls the
    first library's op ``op``: two call sites (forward, backward), nested."""
    return custom_form(FIRST[op], 1, infer_same, form=form, feature=FEATURE, grad=BACKWARD, render=_apply(prefix),
                       nested=True, returns=True, site_count=2, helpers=helpers, **fields)


#: the family's forms, each toward the bare call of its forward (where that has no
#: result and the form's is read, the plain clone, which drops the call)
FORMS: tuple[Form, ...] = (
    _function("p_sin", "SinFunction", _pure, "fn_pure", also_calls=("p_mix",), shrink=Shrink(("p_sin",), 3)),
    _function("m_scale", "ScaleFunction", _scale, "fn_scale", also_calls=("p_sin",),
              shrink=Shrink(("m_scale", "clone"), 3)),
    _function("m_scale", "ScaleInPlace", _dirty, "fn_dirty", also_calls=("p_sin",), mutates=(0,), dirty=True,
              shrink=Shrink(("m_scale", "clone"), 3)),
)
