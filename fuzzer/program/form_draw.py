"""How the generator, and a mutation, draw a new statement's form: a category by its
weight (``CATEGORY_WEIGHTS``), then one of its forms, each as likely (``FormDraw``)."""

from __future__ import annotations

import random
from dataclasses import dataclass

from fuzzer.program.custom_ops import EFFECTFUL, MUTATING, PURE
from fuzzer.program.form_record import (ATEN, CONTROL, INPLACE, INTEGER, INTEGER_SOURCE, MEMORY, OBJECT,
                                        SUBCLASS_SOURCE, SUBCLASS_USE, TRANSFORM, VIEW, Form)
from fuzzer.program.index_writes import INDEX_WRITE
from fuzzer.program.input_swaps import INPUT_SWAP

#: Relative weights of statement categories.
CATEGORY_WEIGHTS = {
    PURE: 4,
    MUTATING: 4,
    EFFECTFUL: 3,
    ATEN: 4,
    VIEW: 3,
    INPLACE: 3,
    # only drawn when a feature turns its forms on (graph breaks, integer forms, objects, subclasses, transforms,
    # input swaps, index writes, memory forms)
    CONTROL: 1,
    INTEGER: 8,
    INTEGER_SOURCE: 3,
    OBJECT: 8,
    SUBCLASS_USE: 10, SUBCLASS_SOURCE: 5,
    TRANSFORM: 4,  # the vmap and autocast forms
    INPUT_SWAP: 4,
    INDEX_WRITE: 3,
    MEMORY: 8,
}


@dataclass(frozen=True)
class FormDraw:
    """How a new statement's form is drawn, by the generator and by a mutation alike: a
    category by its weight, then one of its forms, each as likely.  Only categories
    with a weight and a form take part, in the order given."""

    by_category: dict[str, list[Form]]
    categories: tuple[str, ...]
    weights: tuple[float, ...]

    @classmethod
    def of(cls, by_category: dict[str, list[Form]], categories=tuple(CATEGORY_WEIGHTS),
           table: dict | None = None) -> FormDraw:
        """``categories`` of ``by_category`` weighted by ``table`` (``CATEGORY_WEIGHTS``)."""
        table = CATEGORY_WEIGHTS if table is None else table
        usable = tuple(c for c in categories if table.get(c) and by_category.get(c))
        return cls(by_category, usable, tuple(table[c] for c in usable))

    def __call__(self, rng: random.Random) -> Form:
        return rng.choice(self.by_category[rng.choices(self.categories, weights=self.weights)[0]])
