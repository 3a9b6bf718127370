"""What the shrinker (``fuzzer.reduce``) may make of a statement of a form: the part of
the form record (``fuzzer.program.form_record.Form.shrink``) the shrinker reads, a record
of its own.  ``form_record`` exports it beside the form record, where the forms' modules
read it."""

from __future__ import annotations

from dataclasses import dataclass

#: how complicated a form reads where it says nothing of it (``Shrink.complexity``)
DEFAULT_COMPLEXITY = 2


@dataclass(frozen=True)
class Shrink:
    """What the shrinker (``fuzzer.reduce``) may make of a statement of a form: the
    simpler forms it may become and how complicated the form reads.  A form without
    ``simpler`` forms has no shrink path of its own: the shrinker only removes or
    bypasses its statements.  Each simpler form ranks no higher (``complexity``), so a
    rewrite moves down the shrinker's order (``fuzzer.reduce.order.complexity``)."""

    #: simpler forms of the same declared kind, tried in order (arity may drop: extra
    #: operands are discarded); a form that wraps a call (a branch, a loop, an
    #: ``autograd.Function``) toward the bare call
    simpler: tuple[str, ...] = ()
    #: how complicated the form reads: the forms others shrink to rank lowest
    complexity: int = DEFAULT_COMPLEXITY
    #: the attributes a statement rewritten into this form starts with, beside its sites
    #: (``mul_`` and ``scale``: the simplest constant), as (name, value) pairs
    start: tuple[tuple[str, object], ...] = ()
    #: a statement of it may become its operand 0, later reads of its result reading that
    #: operand (a tensor subclass toward the plain tensor it wraps: ``reduce.passes.plain``)
    to_operand: bool = False
    #: the attributes a statement rewritten into this form keeps from the one it was, where
    #: it has them (a vmap's loop: its dims)
    keeps: tuple[str, ...] = ()
