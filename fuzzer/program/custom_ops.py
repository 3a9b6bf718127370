"""The custom-op library: every operator dcefuzz registers, kept as source text.

Why text: a finding is only useful if its standalone ``repro.py`` runs exactly the
operators the fuzzer ran.  Each operator is therefore written once, as a snippet of
plain ``torch.library`` code (``custom_op``, or a hand-written schema's ``define`` and
``impl``: ``fuzzer.program.families.schemas``); this module executes the snippets to
register them in the fuzzing process, and ``repro`` pastes the very same snippets
into the script it writes.  There is no second copy to drift.

Every real implementation calls ``_hit`` with its call-site id, so the trace tells
the oracle which call sites ran (ground truth: a custom op runs its Python body at
run time in compiled code too, while its fake impl only runs at compile time).
Effectful operators also append an event with a copy of their tensor inputs.

Honesty rules every operator obeys (a compiler may rely on them, so the fuzzer must
too): outputs are fresh tensors, never aliases of inputs, but for the alias a
tagged op declares: an op tagged ``torch.Tag.inplace`` or ``torch.Tag.out``
(``fuzzer.program.families.tagged``, and ``s_inplace`` and ``s_silu.out`` of the
hand-written schemas) returns the argument it writes, as its schema says
(``Tensor(a!)``), and an op's out overload computes what the op returns; ``mutates_args``
(a schema's ``!``) names exactly the tensors the body writes;
fake impls give the real outputs' metadata: shape, dtype and strides.  Every fresh
output is contiguous, in the real impl and the fake alike, because Inductor checks
a fallback's output strides against its fake impl's (``assert_size_stride``): a
layout that follows a non-contiguous input would break that promise and a failing
check would be our bug, not the compiler's (a tagged op's fake impl is torch's,
which returns the argument itself, so its strides are the argument's).
``tests/test_custom_ops.py`` runs ``torch.library.opcheck`` on every operator, with
every test it has by default, on empty, size-1 and size-2 dims and several layouts.
"""

from __future__ import annotations

import re
import sys
import types

from fuzzer.program.op_record import (  # noqa: F401 - the library's names, as callers know them
    DECLARATIONS,
    EFFECTFUL,
    HEADER,
    MUTATING,
    NAMESPACE,
    PURE,
    CustomOp,
)
from fuzzer.program import families, objects
from fuzzer.program.op_snippets import SAVED, BACKWARD, FIRST_LIBRARY

#: the library in its order: the first library's ops, then each family's
CUSTOM_OPS: tuple[CustomOp, ...] = FIRST_LIBRARY + families.OPS
BY_NAME: dict[str, CustomOp] = {op.name: op for op in CUSTOM_OPS}


def backward_source(name: str, scale: float = 1.0) -> str:
    """``register_autograd`` for pure op ``name``; ``scale`` != 1 makes its formula wrong."""
    saved, grads = BACKWARD[name]
    if scale != 1.0:
        grads = ", ".join(g if g == "None" else f"({g}) * {scale}" for g in _split(grads))
    return (f"def _{name}_setup(ctx, inputs, output):\n    ctx.save_for_backward({SAVED[name]})\n\n\n"
            f"def _{name}_backward(ctx, grad):\n    {saved}\n    return {grads}\n\n\n"
            f"{name}.register_autograd(_{name}_backward, setup_context=_{name}_setup)\n")


def _split(expressions: str) -> list[str]:
    """Top-level comma-separated parts of an expression list."""
    parts, depth, cur = [], 0, ""
    for ch in expressions:
        depth += ch in "([" and 1 or (-1 if ch in ")]" else 0)
        if ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    return parts + [cur.strip()]


def with_backward(op: CustomOp) -> str:
    """An op's snippet with its honest backward, where it has one kept apart."""
    if op.name in BACKWARD:
        return op.source + "\n\n" + backward_source(op.name)
    return op.source + "\n\n" + op.backward if op.backward else op.source


def with_callees(names) -> set[str]:
    """The named ops and every op their kernels call (``CustomOp.calls``), transitively."""
    wanted, todo = set(), list(names)
    while todo:
        name = todo.pop()
        if name not in wanted:
            wanted.add(name)
            todo.extend(BY_NAME[name].calls if name in BY_NAME else ())
    return wanted


def source_for(names, replaced: dict | None = None, backward: bool = True, holding: bool = False) -> str:
    """The header plus the snippets of the named operators, in library order.

    ``replaced`` maps an op's name to the snippet to use instead of its own (a cache
    pair's declaration variant, ``fuzzer.cache.variants``); ``backward=False`` leaves
    out the backward formulas kept apart (a cache pair's library has them only when
    it takes gradients, as before they were part of the standard library).  The ops
    their kernels call come too, and the texts their snippets need first (their
    preambles); ``holding``: the program holds opaque objects, whose classes' text
    comes whatever ops it calls (its step makes them).
    """
    wanted = with_callees(names)
    unknown = wanted - set(BY_NAME)
    if unknown:
        raise KeyError(f"unknown custom ops: {sorted(unknown)}")
    replaced = replaced or {}
    parts = [HEADER] + preambles(wanted, holding) + [replaced.get(op.name, with_backward(op) if backward else op.source)
                                                     for op in CUSTOM_OPS if op.name in wanted]
    return "\n\n".join(parts)


def preambles(names, holding: bool = False) -> list[str]:
    """The texts the named ops' snippets need before them (``CustomOp.preamble``: the
    opaque classes their signatures name), each once, in library order; ``holding``:
    the opaque classes first, whatever the ops (a program that holds objects)."""
    held = [objects.SOURCE] if holding else []
    return list(dict.fromkeys(held + [op.preamble for op in CUSTOM_OPS if op.name in names and op.preamble]))


#: the library's effect registration, which exists to reach the private API of torch
#: before 2.11, as a brief writes it: the public call it makes on a current torch
_REGISTER = re.compile(r"\n+_register_ordered\((\w+)\)$", re.MULTILINE)


def brief_snippet(source: str) -> str:
    """An op's snippet as a brief repro shows it: blank lines folded, its ORDERED
    registration written as the public ``register_effect`` call."""
    ordered = r"\n\1.register_effect(torch._library.effects.EffectType.ORDERED)"
    return re.sub(r"\n{2,}", "\n", _REGISTER.sub(ordered, source).strip("\n")) + "\n"


def plain_snippet(source: str) -> str:
    """An op's snippet without the fuzzer's scaffolding: no call-site argument, no
    ``_hit`` recording its calls, as a user would write the op.  For a brief whose bug
    needs no call trace: a maintainer then reads only the op.  The site is every op's
    last argument, so a backward formula loses its last gradient (``None``) with it;
    an op whose body was only its ``_hit`` (an effect that logs) does nothing.  A
    hand-written schema loses its ``int site``, and a kernel's call of another op of
    the library the site it passes on."""
    out = []
    backward = False
    for line in source.splitlines():
        if line.startswith("def "):
            backward = line.startswith("def _") and "_backward(" in line
        line = line.replace(", site: int)", ")").replace(", site)", ")").replace(", site):", "):")
        line = line.replace(", site: int, *,", ", *,").replace(", int site)", ")")
        line = line.replace(", int site, *,", ", *,").replace(", site, *,", ", *,")
        body = line.strip()
        if body.startswith("_hit("):
            continue
        if backward and body.startswith("return ") and body.endswith(", None"):
            line = line[:-len(", None")]
        out.append(line)
    return re.sub(r"^(def [^\n]*:\n)(?! )", r"\1    pass\n", "\n".join(out) + "\n", flags=re.MULTILINE)


def brief_source(names, grad: bool = False, traced: bool = True, holding: bool = False) -> str:
    """The named ops' snippets as a brief shows them, with their backward formulas only
    for a program that takes gradients; ``traced=False``: without the fuzzer's
    scaffolding (:func:`plain_snippet`); ``holding``: with the opaque classes (:func:`preambles`)."""
    plain = (lambda text: text) if traced else plain_snippet
    wanted = with_callees(names)
    return "\n".join([brief_snippet(text) for text in preambles(wanted, holding)]
                     + [brief_snippet(plain(with_backward(BY_NAME[n]) if grad else BY_NAME[n].source))
                        for n in BY_NAME if n in wanted])


def registrable() -> list[str]:
    """The ops this torch can register: those of a family whose feature it cannot run
    are left out (``families.unavailable``, what ``features.unavailable`` says), so
    programs never call them."""
    return [op.name for op in CUSTOM_OPS if op.feature is None or families.unavailable(op.feature) is None]


def _register(source: str) -> types.ModuleType:
    """Execute a library's source once, in a module of its own, registering its ops.
    The module is importable by its name (``sys.modules``): Dynamo imports the module
    of a function it inlines from another's globals, as compiled autograd's graph
    inlines an op's ``register_autograd`` backward."""
    module = types.ModuleType("fuzzer._registered_ops")
    sys.modules[module.__name__] = module
    code = compile(source, "<dcefuzz oplib>", "exec")
    exec(code, module.__dict__)
    return module


_installed: types.ModuleType | None = None


def install(source: str | None = None) -> types.ModuleType:
    """Register the op library in this process, once: the standard one, or ``source``.

    A process registers its ops once and for good (torch has no way to redefine an
    op), so the library is installed on first use rather than at import: the side
    processes of a cache pair (``fuzzer.cache``) install a *variant* of it under the
    same names before anything else asks for it.  It returns the namespace the
    generated programs run in: every op callable by its bare name, plus ``torch`` and
    ``TRACE`` (what the ops log); each caller asks for it by this call, so where the
    ops are registered is never a side effect of reading an attribute.
    """
    global _installed
    if _installed is None:
        _installed = _register(source if source is not None else source_for(registrable()))
    elif source is not None:
        raise RuntimeError("the op library is already registered in this process")
    return _installed
