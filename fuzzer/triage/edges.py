"""The edge Inductor means to keep between consecutive ORDERED effects, kept: the patch
of torch that triage throws to tell the dropped edge (``fuzzer.triage.causes``).

``with_effects``'s lowering (``torch._inductor.lowering.with_effects``, 2.11 to 2.14.1)
records, for each operation an effectful call lowers to, a dependency on the previous
effectful one in ``V.graph.additional_star_deps``, keyed by the *buffer* name the new
operation's ``get_name()`` gives; ``Scheduler.compute_dependencies`` looks the table
up by each scheduler node's name, which is the *operation*'s (``op2`` where the key
is ``buf2``).  So the edge is never added, and any scheduling that moves an effectful
kernel (the peak-memory reordering, fusion) may run it before the one it follows
(pytorch/pytorch#189209 keys the edge by the operation's name).  :func:`kept` reads the
table under both names for the length of a compile, which is what that change means
the table to say; a reordering of effects gone with it is this cause, whatever
scheduling exploited it.  Detected, not assumed: a torch without the table or the
method (:func:`available`) has no such probe.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator


def _scheduler():
    try:
        from torch._inductor import scheduler
    except ImportError:
        return None
    return scheduler.Scheduler if hasattr(scheduler.Scheduler, "compute_dependencies") else None


def available() -> bool:
    """Whether this torch's Inductor has the table and the method the probe reads."""
    from torch._inductor import graph

    return _scheduler() is not None and "additional_star_deps" in graph.GraphLowering.__init__.__code__.co_names


@contextlib.contextmanager
def kept() -> Iterator[None]:
    """Compile with each effect edge found under its operation's name as well as its
    buffer's (``Scheduler.compute_dependencies`` patched for the duration)."""
    from torch._inductor.virtualized import V

    scheduler = _scheduler()
    original = scheduler.compute_dependencies

    def compute_dependencies(self) -> None:
        table = V.graph.additional_star_deps
        for name in list(table):
            if name in self.name_to_buf:
                table[self.name_to_buf[name].defining_op_name()].update(table[name])
        return original(self)

    scheduler.compute_dependencies = compute_dependencies
    try:
        yield
    finally:
        scheduler.compute_dependencies = original
