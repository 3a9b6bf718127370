"""A program's mode: how it runs beyond its body (dynamic mode, marks, gradients,
dtype, layouts, aliases, windows, a module's buffers, opaque objects, inputs handed over
as a tensor subclass), and what a mode may be for the inputs it names.  The IR (``fuzzer.program.ir``) holds a mode in each
program and raises what :func:`problem` finds."""

from __future__ import annotations

from dataclasses import dataclass

from fuzzer.program import dtypes as dtypes_
from fuzzer.program import layouts, objects
from fuzzer.program.sizes import Dims

DTYPES, FIXED_DTYPES = dtypes_.DTYPES, dtypes_.FIXED_DTYPES

#: how an input dim is marked before every run: ``torch._dynamo.mark_dynamic``,
#: ``maybe_mark_dynamic`` or ``torch._dynamo.decorators.mark_unbacked``
MARKS = ("dynamic", "maybe", "unbacked")
#: ``torch.compile(dynamic=True)``, or automatic dynamic (``dynamic=None``): sizes turn
#: symbolic only after a recompile shows they change
DYNAMIC_MODES = ("true", "auto")

@dataclass(frozen=True)
class Mode:
    """How a program runs beyond its body; the default is how every program ran
    before modes existed (and is left out of its JSON, so old digests hold)."""

    dynamic: str = "true"
    #: (input name, dim index, one of MARKS), applied to the inputs before each run
    marks: tuple[tuple[str, int, str], ...] = ()
    #: inputs require grad; the sum of the returned values is differentiated, and
    #: the inputs' gradients are judged as extra returned values
    grad: bool = False
    dtype: str = "float32"
    #: inputs handed over non-contiguous (their last dim strided by 2)
    strided: tuple[str, ...] = ()
    #: (input, base): the input is a view of the whole of another input (the same
    #: storage, so a write to one shows in the other); their dims are the same
    aliases: tuple[tuple[str, str], ...] = ()
    #: the inputs that are the buffers of a module (``codegen``'s ``Program``): the
    #: program is an ``nn.Module`` whose forward reads them as ``self.<name>``, and its
    #: ``step`` loads each from the input of its name before the call and writes the
    #: buffer's contents after the call back into it (the module's state, judged)
    module: tuple[str, ...] = ()
    #: the module's buffers carry over from call to call (``families.state``): the step
    #: loads them from the draw at the first call only (or where the draw's shape is
    #: another), so the state after call k is the state call k + 1 starts from
    carry: bool = False
    #: (input, layout): inputs handed over in another memory layout (``fuzzer.program.layouts``)
    layouts: tuple[tuple[str, str], ...] = ()
    #: (input, base, dim, kind): inputs that are windows of part of another input's
    #: storage (``fuzzer.program.windows``)
    windows: tuple[tuple[str, str, int, str], ...] = ()
    #: at which calls the windows share their base's storage: every call (""), from the
    #: second on ("later": distinct inputs first), or the first only ("first")
    window_calls: str = ""
    #: the gradients are taken by ``torch.func.grad`` of the program and its loss
    #: (``codegen.program_grad``), not by ``backward()``; needs ``grad``
    func_grad: bool = False
    #: (name, class, seed input): the opaque objects (``fuzzer.program.objects``) the step
    #: makes from the seed at every call and hands to the program after its tensors
    objects: tuple[tuple[str, str, str], ...] = ()
    #: the module holds its objects as attributes (``self.<name>``), which the step sets
    #: before every call, as a serving engine's module holds its cache handle: Dynamo
    #: reads them through the module, not as arguments; needs ``module`` and ``objects``
    object_attrs: bool = False
    #: (input, partner): the input is handed over as a tensor subclass whose parts are it
    #: and the partner, which the program reads no other way (``fuzzer.program.pairs``)
    pairs: tuple[tuple[str, str], ...] = ()

    def to_json(self) -> dict:
        data = {"dynamic": self.dynamic, "marks": [list(m) for m in self.marks], "grad": self.grad,
                "dtype": self.dtype, "strided": list(self.strided)}
        if self.aliases:
            data["aliases"] = [list(a) for a in self.aliases]
        if self.module:
            data["module"] = list(self.module)
        if self.carry:
            data["carry"] = True
        if self.layouts:
            data["layouts"] = [list(x) for x in self.layouts]
        if self.windows:
            data["windows"] = [list(w) for w in self.windows]
        if self.window_calls:
            data["window_calls"] = self.window_calls
        if self.func_grad:
            data["func_grad"] = True
        if self.objects:
            data["objects"] = [list(o) for o in self.objects]
        if self.object_attrs:
            data["object_attrs"] = True
        if self.pairs:
            data["pairs"] = [list(p) for p in self.pairs]
        return data

    @classmethod
    def from_json(cls, data: dict) -> Mode:
        return cls(dynamic=str(data.get("dynamic", "true")),
                   marks=tuple((str(n), int(d), str(h)) for n, d, h in data.get("marks", ())),
                   grad=bool(data.get("grad", False)), dtype=str(data.get("dtype", "float32")),
                   strided=tuple(str(n) for n in data.get("strided", ())),
                   aliases=tuple((str(n), str(b)) for n, b in data.get("aliases", ())),
                   module=tuple(str(n) for n in data.get("module", ())), carry=bool(data.get("carry", False)),
                   layouts=tuple((str(n), str(k)) for n, k in data.get("layouts", ())),
                   windows=tuple((str(n), str(b), int(d), str(k)) for n, b, d, k in data.get("windows", ())),
                   window_calls=str(data.get("window_calls", "")), func_grad=bool(data.get("func_grad", False)),
                   objects=tuple((str(n), str(c), str(s)) for n, c, s in data.get("objects", ())),
                   object_attrs=bool(data.get("object_attrs", False)),
                   pairs=tuple((str(n), str(p)) for n, p in data.get("pairs", ())))

    @property
    def is_default(self) -> bool:
        return self == Mode()


def problem(mode: Mode, dims: dict[str, Dims], inputs, given: dict[str, str | None]) -> str | None:
    """What is wrong with ``mode`` for a program of these inputs (their ``dims`` and
    ``given`` dtypes), or None."""
    if mode.dynamic not in DYNAMIC_MODES:
        return f"dynamic mode {mode.dynamic!r} not in {DYNAMIC_MODES}"
    if mode.dtype not in DTYPES:
        return f"dtype {mode.dtype!r} not in {DTYPES}"
    for name, dim, how in mode.marks:
        if name not in dims or not 0 <= dim < len(dims[name]) or how not in MARKS:
            return f"bad mark {(name, dim, how)!r}"
    for name in mode.strided:
        if name not in dims:
            return f"strided input {name} is not an input"
    bases = {b for _, b in mode.aliases}
    for name, base in mode.aliases:
        if (name not in dims or base not in dims or name == base or dims[name] != dims[base]
                or name in bases or name in mode.strided):
            return f"bad alias {(name, base)!r}"
    if mode.func_grad and not mode.grad:
        return "torch.func.grad takes gradients only of a program that takes them"
    if mode.aliases and mode.grad:
        return "an input that is a view of another cannot be a leaf that requires grad"
    if (wrong := _module_problem(mode, dims)) is not None:
        return wrong
    if (wrong := objects.problem(mode.objects, dims, given)) is not None:
        return wrong
    if mode.object_attrs and not (mode.module and mode.objects):
        return "objects held as a module's attributes need a module and objects"
    if mode.objects and mode.func_grad:
        return "torch.func.grad takes the gradients of tensors only: no objects under it"
    for inp in inputs:
        if inp.dtype is not None and inp.dtype not in FIXED_DTYPES:
            return f"input {inp.name}: dtype {inp.dtype!r} not in {FIXED_DTYPES}"
        if inp.dtype is not None and mode.grad:
            return f"input {inp.name} is {inp.dtype}: a program that takes gradients has floating inputs only"
        if inp.dtype is not None and inp.name in mode.strided:
            return f"input {inp.name} is {inp.dtype}: only inputs of the program's dtype are strided"
    for name, base in mode.aliases:
        if given[name] != given[base]:
            return f"bad alias {(name, base)!r}: another dtype"
    return layouts.problem(mode, dims, given)


def _module_problem(mode: Mode, dims: dict[str, Dims]) -> str | None:
    """A module's buffers are inputs, each once, that the step hands over as they are:
    not strided, not aliased, not marked (a mark on the drawn input would not reach the
    buffer it is copied into), and never in a program that takes gradients (a buffer
    is no leaf)."""
    if not mode.module:
        return "a state that carries over needs a module's buffers" if mode.carry else None
    if mode.grad:
        return "a module's buffers do not require grad: no module in a program that takes gradients"
    aliased = {n for pair in mode.aliases for n in pair}
    marked = {n for n, _, _ in mode.marks} | {n for n, _ in mode.layouts}
    for name in mode.module:
        if name not in dims or name in aliased or name in marked or name in mode.strided:
            return f"bad buffer {name!r}: an input, not strided, aliased, laid out or marked"
    if len(set(mode.module)) != len(mode.module):
        return f"a buffer named twice in {mode.module!r}"
    return None
