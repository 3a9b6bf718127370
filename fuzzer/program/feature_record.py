"""One feature of program space, as a record: its name, its weight, what it is, what it
brings or keeps out, why a torch may not run it and how a program shows it.

A feature is declared once, beside what it turns on: the module of its statement forms
(``aten_forms``, ``library_forms``, ``tensor_forms``, ``strided_forms``, ``int_forms``,
``width_forms``, each op family of ``fuzzer.program.families``), or ``mode_features``
for a feature of how a program runs rather than of its statements.  The registry
(``fuzzer.program.features``) reads the records in its draw order.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


def always_available() -> str | None:
    """Every torch dcefuzz supports runs the feature."""
    return None


def shown_by_forms(program) -> bool:
    """A program shows the feature by a statement of one of its forms only."""
    return False


@dataclass(frozen=True)
class Feature:
    """A region of program space, switched with ``--features``."""

    #: its name on the command line, in notes and in a program's list of features
    name: str
    #: the chance that a program has the feature when it is switched on
    weight: float
    #: what a program with it has (``dcefuzz run --help``, docs/features.md)
    doc: str
    #: the features a program with it has too (``func-grad`` takes gradients): a table
    #: without one of them (a target that cannot run it, ``features.without``) never
    #: draws this one either
    implies: tuple[str, ...] = ()
    #: the features a program with it never has: dropped where it is drawn
    excludes: tuple[str, ...] = ()
    #: why this torch cannot run it, or None; a feature this torch cannot run is never
    #: drawn, and its ops are not registered (``custom_ops.registrable``)
    unavailable: Callable[[], str | None] = always_available
    #: whether a program shows it besides a statement of one of its forms (its mode,
    #: its calls): the features of how a program runs say so here
    seen_in: Callable[..., bool] = shown_by_forms
