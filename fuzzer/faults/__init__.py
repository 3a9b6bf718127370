"""The fault catalogue: injectable regressions of torch.compile's custom-op paths, and of
the memory writes beside them (``index_put_overlap``: an aten index write).

Each fault is a small monkeypatch of compiler internals that mimics a realistic
regression (see each module's docstring for why), applied only in the process
that calls :meth:`Fault.install` and removed by the undo it returns.  They exist
to measure the fuzzer: a planted bug of class X should be reported as the oracle
kind the catalogue names for it.

Every class has a plain variant and one (``*-dynamic``, ``dynamic_only=True``) that
misbehaves only when the affected values have symbolic sizes; under
``torch.compile(dynamic=True)`` inputs whose sizes are 0 or 1 are specialised and
stay static, which is how a program escapes the dynamic variants.

Importing this package patches nothing and never fails on an older or newer torch:
a fault whose internals are missing says so through :meth:`Fault.unavailable`.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from contextlib import contextmanager
from types import ModuleType

from fuzzer.faults._fault import BUG_CLASSES, Fault, FaultUnavailable

__all__ = ["BUG_CLASSES", "CATALOGUE", "TEST_ONLY", "Fault", "FaultUnavailable", "get", "planted", "suspended"]


def _modules(*names: str) -> tuple[ModuleType, ...]:
    """The fault modules of this package called ``names``, in that order."""
    return tuple(importlib.import_module(f"{__name__}.{name}") for name in names)


def _by_name(modules: tuple[ModuleType, ...]) -> dict[str, Fault]:
    return {f.name: f for module in modules for f in module.FAULTS}


#: The self-test's faults, in catalogue order: a new fault is a module whose ``FAULTS``
#: holds its :class:`Fault` records (``Fault.twins`` for a fault and its ``-dynamic``
#: twin), and its module's name on a line of its own at the end of this list.
CATALOGUE: dict[str, Fault] = _by_name(_modules(
    "effect_dropped",
    "mutation_lost",
    "effects_reordered",
    "dead_pure_kept",
    "compile_error",
    "cache_key",
    "scoped",
    "export_mutation_lost",
    "compiled_autograd",
    "layout_write_lost",
    "opaque_guard",
    "subclass_part_lost",
    "cast_dropped",
    "batch_dim_lost",
    "index_put_overlap",
    "view_offset_added",
))

#: Faults that kill or stall the compiling process (for testing the worker pool's
#: isolation), make Dynamo graph-break (for testing the untested rule) or break
#: dcefuzz's own judge (for testing that our errors are never findings); not part
#: of the self-test.
TEST_ONLY: dict[str, Fault] = _by_name(_modules("process", "graph_break", "internal_error"))


def get(name: str) -> Fault:
    """The fault called ``name``; KeyError listing the known names otherwise."""
    try:
        return CATALOGUE.get(name) or TEST_ONLY[name]
    except KeyError:
        known = ", ".join(sorted(CATALOGUE) + sorted(TEST_ONLY))
        raise KeyError(f"unknown fault {name!r}; known: {known}") from None


_active: list[tuple[Fault, list]] = []


@contextmanager
def planted(name: str | None) -> Iterator[Fault | None]:
    """Run the body with fault ``name`` installed (None: nothing planted)."""
    if name is None:
        yield None
        return
    fault = get(name)
    undo = [fault.install()]
    _active.append((fault, undo))
    try:
        yield fault
    finally:
        _active.pop()
        undo[0]()


@contextmanager
def suspended() -> Iterator[None]:
    """Run the body with the currently planted fault (if any) removed.

    This is how a finding made under a fault is attributed: if it still diverges
    with the fault lifted, torch itself has the bug.
    """
    if not _active:
        yield
        return
    fault, undo = _active[-1]
    undo[0]()
    try:
        yield
    finally:
        undo[0] = fault.install()
