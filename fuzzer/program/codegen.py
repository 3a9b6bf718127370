"""Lower a program to a plain, readable Python function.

The same text is what ``torch.compile`` traces and what a repro script shows, so it
is written for a reader: one statement per line, sizes read once at the top from the
inputs' shapes (``s0 = x0.shape[0]``) and used by name, custom ops called through
``torch.ops.dcefuzz`` so the line reads the same inside and outside the fuzzer.
"""

from __future__ import annotations

import functools
import linecache

from fuzzer.program import custom_ops, features, forms, objects, pairs, sources
from fuzzer.program.families import subclass
from fuzzer.program.form_record import REGION
from fuzzer.program.attrs import SITE_KEYS
from fuzzer.program.ir import Program, check
from fuzzer.program.library_forms import region_function

FUNCTION_NAME = "program"
#: the class of a program that is a module (``Mode.module``); ``program`` is an instance
MODULE_CLASS = "Program"
#: the function that runs a program with its mode: marks, grad, loss and backward
STEP_NAME = "step"
#: the loss a program that takes gradients differentiates, whichever way it does
LOSS_NAME = "loss_of"
#: a program whose gradients ``torch.func.grad`` takes (``Mode.func_grad``), so
#: differentiated: its values, then its gradients; its ``step`` calls it (compiled, or
#: not) where another program's step calls the program and then ``backward()``
FUNC_GRAD_NAME = "program_grad"
#: what ``mark`` calls each kind of mark (``ir.MARKS``)
MARK_CALLS = {"dynamic": "torch._dynamo.mark_dynamic", "maybe": "torch._dynamo.maybe_mark_dynamic",
              "unbacked": "torch._dynamo.decorators.mark_unbacked"}
#: Dynamo settings a program with sizes from data needs, so they are traced rather
#: than broken at
CAPTURE = "capture_scalar_outputs=True, capture_dynamic_output_shape_ops=True"
#: Dynamo settings a program with ``nested_compile_region`` needs so that its regions
#: reach the backend: by default (where the setting exists) Dynamo inlines a region
#: called once, and the program's regions are each called once per call site.  Only
#: the settings this torch has are patched, so the text runs on any torch
KEEP_REGIONS = '{k: False for k in ("inline_single_use_invoke_subgraph",) if hasattr(torch._dynamo.config, k)}'


def has_regions(program: Program) -> bool:
    return any(forms.form(s.form).hop == REGION for s in program.body)


def needs_step(program: Program) -> bool:
    """Whether the program runs through a ``step`` (any mode but the default, sizes
    from data, regions): otherwise the program is called as it is, as it always was."""
    return not program.mode.is_default or features.needs_capture(program) or has_regions(program)


def compile_args(program: Program) -> str:
    """The keyword arguments of ``torch.compile`` the program's mode asks for."""
    return "dynamic=None" if program.mode.dynamic == "auto" else "dynamic=True"


def dynamic_arg(program: Program):
    return None if program.mode.dynamic == "auto" else True


#: what stands for a call-site argument while a statement is rendered without its sites
#: (``source(plain=True)``): every custom form writes the site as its call's last argument
_NO_SITE = "__no_site__"


def sites_matter(program: Program) -> bool:
    """Whether leaving out the call-site arguments would make two calls one: calls of
    an op on the same operands with the same attributes that differ only by their site
    are two calls to a compiler, and may be merged once they do not."""
    seen: dict[str, tuple[int, ...]] = {}
    for stmt in program.body:
        if not stmt.sites:
            continue
        key = repr((stmt.form, stmt.args, sorted((k, v) for k, v in stmt.attrs.items() if k not in SITE_KEYS)))
        if seen.setdefault(key, stmt.sites) != stmt.sites:
            return True
    return False


def _without_sites(stmt, form, args: list[str], dims) -> str:
    """A custom call's text with its call-site arguments left out: the last argument,
    positional or the keyword-only ``site=``."""
    attrs = {**stmt.attrs, **{k: _NO_SITE for k in SITE_KEYS if k in stmt.attrs}}
    expr = form.render(args, attrs, dims).replace(f", site={_NO_SITE}", "").replace(f", {_NO_SITE}", "")
    if _NO_SITE in expr:
        raise ValueError(f"form {form.name} does not write its site as its call's last argument: {expr}")
    return expr


def _regions(program: Program, plain: bool = False) -> list[str]:
    """The ``nested_compile_region`` functions the program calls, one per call site,
    and its forms' other helpers (``Form.helpers``: branches, loop bodies,
    ``autograd.Function`` classes)."""
    # a program handed a pair (``Mode.pairs``) has the pair's class, whatever its body calls
    out: dict[str, str] = {subclass.CLASS: subclass.PAIR_SOURCE} if program.mode.pairs else {}
    if program.mode.pairs and program.mode.grad:
        out[subclass.TOTAL] = subclass.TOTAL_SOURCE
    for stmt in program.body:
        form = forms.form(stmt.form)
        if form.helpers is not None:
            out.update(form.helpers(stmt, plain))
            continue
        name = form.custom
        if stmt.form != f"in_region_{name}":
            continue
        function = region_function(name, stmt.site)
        call = f"torch.ops.{custom_ops.NAMESPACE}.{name}(t{'' if plain else f', {stmt.site}'})"
        body = f"return {call}" if custom_ops.BY_NAME[name].returns else call
        out[function] = f"@torch.compiler.nested_compile_region\ndef {function}(t):\n    {body}\n"
    return list(out.values())


def _step(program: Program) -> str:
    mode = program.mode
    params = ", ".join(i.name for i in program.inputs)
    backward = mode.grad and not mode.func_grad
    what = f", `fn` being `{FUNC_GRAD_NAME}` (its values and gradients)" if mode.func_grad else ""
    lines = [f"def {STEP_NAME}(fn, {params}):",
             f'    """One run of `program` (eager or compiled as `fn`): its mode applied{what}."""']
    for name, dim, how in mode.marks:
        lines.append(f"    {MARK_CALLS[how]}({name}, {dim})")
    lines += _load_buffers(mode, mode.carry)
    lines += objects.step_lines(mode.objects, mode.object_attrs)
    if backward:
        lines += [f"    {i.name}.requires_grad_(True)" for i in program.inputs if pairs.requiring_grad(i.name, mode)]
        lines += pairs.leaf_lines(mode)
    call = ", ".join([pairs.value(i.name, mode) for i in program.inputs
                      if i.name not in mode.module and i.name not in pairs.partners(mode)] + objects.handed(mode))
    settings = []
    if features.needs_capture(program):
        settings.append(f"torch._dynamo.config.patch({CAPTURE})")
    if has_regions(program):
        settings.append(f"torch._dynamo.config.patch({KEEP_REGIONS})")
    if settings:
        lines += [f"    with {', '.join(settings)}:", f"        outs = fn({call})"]
    else:
        lines.append(f"    outs = fn({call})")
    lines += [f"    {line}  # the state the call left, judged as the input's contents"
              for name in mode.module for line in pairs.written_back(name, f"fn.{name}", mode)]
    states = objects.state_text(mode.objects)
    if states:  # a reference object's state, after every other value
        lines.append(f"    states = {states}  # what the objects show of the call, judged as returned values")
    if backward:
        lines += [f"    loss = {LOSS_NAME}(outs)",
                  "    if isinstance(loss, torch.Tensor):",
                  "        loss.backward()",
                  "    grads = (" + "".join(f"{pairs.grad_of(i.name, mode)}, " for i in program.inputs).rstrip() + ")"]
    lines.append("    return outs" + (" + grads" if backward else "") + (" + states" if states else ""))
    return "\n".join(lines) + "\n"


def _loss(pairs_held: bool = False) -> str:
    """``pairs_held``: a returned pair counts as the sum of its parts (``PairTotal``,
    differentiable, as a library's dequantisation or gather is), so the loss stays a
    plain tensor and each part's gradient is the loss's."""
    each = f"({subclass.TOTAL}.apply(o) if isinstance(o, {subclass.CLASS}) else o)" if pairs_held else "o"
    return (f"def {LOSS_NAME}(outs):\n"
            '    """The loss a program that takes gradients differentiates: the sum of every value it '
            'returns that requires grad (0 where none does)."""\n'
            f"    return sum({each}.sum() for o in outs if o.requires_grad)\n")


def _func_grad(program: Program, name: str) -> str:
    """``name`` under ``torch.func.grad``: its values, then the gradient of its loss for
    each input (every input, as ``step`` makes every input require grad for
    ``backward()``; zeros where the loss does not reach it, as ``step`` gives)."""
    params = ", ".join(i.name for i in program.inputs)
    argnums = ", ".join(str(k) for k in range(len(program.inputs)))
    one = "," if len(program.inputs) == 1 else ""
    return "\n".join([
        f"def {FUNC_GRAD_NAME}({params}):",
        f'    """`{name}` under torch.func.grad: its values, then the gradient of {LOSS_NAME}(its values) '
        'for each input."""',
        f"    def loss_and_values({params}):",
        f"        outs = {name}({params})",
        f"        loss = {LOSS_NAME}(outs)",
        "        # a loss that reaches no input (no value requires grad) is 0, whose gradients are zeros",
        "        return (loss if isinstance(loss, torch.Tensor) else torch.zeros(())), outs",
        f"    grads, outs = torch.func.grad(loss_and_values, argnums=({argnums}{one}), has_aux=True)({params})",
        "    return outs + grads",
    ]) + "\n"


def _load_buffers(mode, carry: bool = False) -> list[str]:
    """The step's lines that give a module's buffers (``mode.module``) their state before a
    call: each buffer is the same tensor on every call (a cache's state lives on in place),
    its values the binding's draw (a pair of draws, ``Mode.pairs``); a new buffer where the
    draw's shape or dtype is another.  ``carry``: the draw is loaded at the first call only
    (or where its shape or dtype is another), and every later call starts from the state
    the call before left."""
    if not mode.module:
        return []
    drawn = "".join(f"({n!r}, {pairs.value(n, mode)}), " for n in mode.module)
    head = [f"    for name, value in ({drawn.rstrip(' ')}):", "        buffer = getattr(fn, name)"]
    if carry:
        return head + ["        if buffer is None or buffer.shape != value.shape or buffer.dtype != value.dtype:",
                       "            setattr(fn, name, value.clone())  # the first call: the state starts from the draw"]
    return head + ["        if buffer is not None and buffer.shape == value.shape and buffer.dtype == value.dtype:",
                   "            buffer.copy_(value)",
                   "        else:",
                   "            setattr(fn, name, value.clone())"]


def source(program: Program, name: str = FUNCTION_NAME, plain: bool = False) -> str:
    """The program's text: its region helpers, the function and, when its mode needs
    one, the ``step`` that runs it; ``plain``: its custom calls without their call-site
    arguments, for ops written without them (``custom_ops.plain_snippet``).  A program
    that takes gradients has its loss (``loss_of``) and, where ``torch.func.grad`` takes
    them (``Mode.func_grad``), the function under it (``program_grad``) its step runs."""
    parts = _regions(program, plain) + [_function(program, name, plain)]
    if program.mode.grad:
        parts.append(_loss(bool(program.mode.pairs)))
        if program.mode.func_grad:
            parts.append(_func_grad(program, name))
    if needs_step(program):
        parts.append(_step(program))
    return "\n\n".join(parts)


def header(program: Program) -> str:
    """How the program is compiled, what features it uses and how its inputs are
    made (dtype, layout, aliasing), as comment lines."""
    used = program.features()
    run = f"{STEP_NAME}(compiled, ...)" if needs_step(program) else "compiled(...)"
    mode = program.mode
    inputs = [f"dtype {mode.dtype}"] + [f"{n} strided (last dim by 2)" for n in mode.strided]
    inputs += [f"{n} = {b}.view({b}.shape)" for n, b in mode.aliases] + [f"{n} {how}" for n, how in mode.layouts]
    how = "loaded at the first call, carried over" if mode.carry else "loaded before each call"
    inputs += [f"{n} is the module's buffer ({how}, read after it)" for n in mode.module]
    handed = "set as the module's attribute" if mode.object_attrs else "handed over after the tensors"
    inputs += [f"{n} = {objects.CLASSES[c].build(s)} at each call, {handed}" for n, c, s in mode.objects]
    inputs += [f"{n} = {pairs.value(n, mode)}" for n, _ in mode.pairs]
    return (f"# compiled = torch.compile({entry_name(program)}, {compile_args(program)}); each binding runs {run}\n"
            f"# features: {', '.join(used) if used else 'none'}\n"
            f"# inputs: {'; '.join(inputs)}\n")


def _function(program: Program, name: str, plain: bool = False) -> str:
    typing = check(program)
    buffers = program.mode.module
    hidden = set(buffers) | pairs.partners(program.mode)  # a pair's partner is read as its part
    params = ", ".join([i.name for i in program.inputs if i.name not in hidden] + objects.handed(program.mode))
    lines = [f"def {'forward' if buffers else name}({'self, ' if buffers else ''}{params}".rstrip(", ") + "):"]
    lines += [f"    {b} = self.{b}" for b in buffers]
    lines += [f"    {o} = self.{o}" for o, _, _ in program.mode.objects if program.mode.object_attrs]
    for sym in program.symbols:
        for inp in program.inputs:
            if sym in inp.dims and inp.name not in pairs.partners(program.mode):
                lines.append(f"    {sym} = {inp.name}.shape[{inp.dims.index(sym)}]")
                break
    for stmt in program.body:
        form = forms.form(stmt.form)
        dims = [typing.dims[a] for a in stmt.args]
        # a region's or a helper's call names its site, not passes it
        if plain and stmt.sites and form.hop != REGION and (form.helpers is None or not form.helper_per_site):
            expr = _without_sites(stmt, form, list(stmt.args), dims)
        else:
            expr = form.render(list(stmt.args), stmt.attrs, dims)
        line = f"{stmt.out} = {expr}" if stmt.out is not None else expr
        if stmt.no_grad:
            lines += ["    with torch.no_grad():", f"        {line}"]
        else:
            lines.append(f"    {line}")
    outs = "".join(f"{o}, " for o in program.outputs)
    lines.append(f"    return ({outs.rstrip(', ')}{',' if len(program.outputs) == 1 else ''})")
    return "\n".join(lines) + "\n" if not buffers else _module(buffers, lines, name, program.mode.carry)


def _module(buffers: tuple[str, ...], forward: list[str], name: str, carry: bool = False) -> str:
    """A program with buffers as a module: its forward, and ``name``, an instance."""
    when = "at its first call, then carries over" if carry else "before each call"
    lines = [f"class {MODULE_CLASS}(torch.nn.Module):",
             f'    """`{name}` as a module whose buffers ({", ".join(buffers)}) are its state, which '
             f'`{STEP_NAME}` loads {when}."""',
             "", "    def __init__(self):", "        super().__init__()"]
    lines += [f"        self.register_buffer({b!r}, None)" for b in buffers]
    lines += [""] + [f"    {line}" for line in forward]
    return "\n".join(lines) + f"\n\n\n{name} = {MODULE_CLASS}()\n"


def build(program: Program, name: str = FUNCTION_NAME):
    """Compile the lowered text into a function object (each call: a new code object).

    A fresh code object per program matters: dynamo caches compiled graphs per code
    object, so reusing one would make programs share a cache and its recompile limit.
    """
    return build_with_step(program, name)[0]


def driven(step, fn):
    """``fn`` as a run calls it: through the program's ``step`` when it has one."""
    return fn if step is None else functools.partial(step, fn)


def entry_name(program: Program, name: str = FUNCTION_NAME) -> str:
    """The function a run calls through the step and a compiler compiles: the program,
    or ``program_grad`` where ``torch.func.grad`` takes its gradients."""
    return FUNC_GRAD_NAME if program.mode.func_grad else name


def build_with_step(program: Program, name: str = FUNCTION_NAME):
    """The program's function (:func:`entry_name`) and its ``step`` (None when it needs none)."""
    import torch

    text = source(program, name)
    filename = f"<dcefuzz {program.digest()[:12]}>"
    # Let tracebacks and dynamo's messages quote the generated lines.
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    namespace = {"torch": torch}
    # what its ops' sources bind: the classes its step makes objects of, the names a
    # user's value objects are written with
    namespace.update(sources.names(program))
    exec(compile(text, filename, "exec"), namespace)
    return namespace[entry_name(program, name)], namespace.get(STEP_NAME)
