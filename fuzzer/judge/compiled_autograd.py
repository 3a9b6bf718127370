"""Runs under compiled autograd, for the ``compiled-autograd`` target (``fuzzer.judge.targets``).

Compiled autograd (``torch._dynamo.compiled_autograd``) traces the backward the
autograd engine would run, every node of it (a compiled forward's backward, a custom
op's ``register_autograd`` formula, an ``autograd.Function``'s ``backward``), into one
graph, and compiles that graph with the compiler it was enabled with.  Its entry point
is the context manager ``_enable(compiler_fn)``: the forward compiled inside it too, as
its own comment asks (``torch._dynamo.config.compiled_autograd`` enables it only
around a call of a compiled function, and a program's ``backward()`` runs after its
compiled function has returned, in its ``step``).  Which entry point this torch has
is read off the module (:func:`entry_point`), never off its version.

What compiled autograd documents it does not support (:data:`DECLINES`) is refused
by the contract, never a finding.
"""

from __future__ import annotations

import functools

from fuzzer.judge.observe import COMPILE, RUNTIME

#: What compiled autograd raises for what it documents it does not support, as
#: ``(type, stage, message prefix)`` (``contract.Asks.declines``), at either stage (the
#: backward is traced and compiled while ``backward()`` runs): a backward node with no
#: compiled form (``compiled_args nyi, see [Note: Compiled Autograd]``, from the C++
#: ``Node::compiled_args``), a view's replay function (``view_fn not supported by
#: compiled autograd``), higher-order gradients (``CompiledFunction``'s check in
#: ``compiled_autograd.py``), a tensor type fake tensors cannot stand for, and a
#: backward re-entered from within a compiled backward
DECLINES = frozenset((kind, stage, prefix) for stage in (COMPILE, RUNTIME) for kind, prefix in (
    ("NotImplementedError", "compiled_args nyi"),
    ("RuntimeError", "view_fn not supported by compiled autograd"),
    ("RuntimeError", "torch.compile does not currently support higher order gradients"),
    ("NotImplementedError", "Found tensor of type"),
    ("RuntimeError", "Re-entrant into Compiled Autograd"),
))


def entry_point():
    """This torch's context manager that enables compiled autograd with a compiler
    (``_enable``, or ``enable`` where it had that name), or None."""
    try:
        from torch._dynamo import compiled_autograd
    except ImportError:
        return None
    for name in ("_enable", "enable"):
        enable = getattr(compiled_autograd, name, None)
        if callable(enable):
            return enable
    return None


def unavailable() -> str | None:
    """Why this torch cannot run a program under compiled autograd (None: it can)."""
    if entry_point() is None:
        return "this torch has no torch._dynamo.compiled_autograd._enable (or enable)"
    return None


def _run_under(enable, compiler, fn, *inputs):
    with enable(compiler):
        return fn(*inputs)


def under_compiled_autograd(fn, backend: str):
    """``fn`` (a program's compiled function, through its ``step``) run under compiled
    autograd, its backward graph compiled by ``torch.compile`` with ``backend``."""
    import torch

    return functools.partial(_run_under, entry_point(), torch.compile(backend=backend), fn)
