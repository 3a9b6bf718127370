"""Features: the regions of program space beyond float32 inference over one graph.

Each feature is drawn per program, independently, with its weight (the chance a
program has it), from a random stream of its own: with every feature off the
generator draws exactly the programs it drew before features existed.  A feature
turns on statement forms (``form_record.Form.feature``) and parts of the program's
:class:`~fuzzer.program.ir.Mode`; :func:`used_by` reads back which features a
program actually uses, so a reader, a grep or a report can tell.

Each feature is a :class:`~fuzzer.program.feature_record.Feature` declared beside what
it turns on (the modules of the form table, ``forms.MODULES``, the op families among
them, and ``mode_features``); this registry reads them in the draw order ``ORDER``:
the features named in ``FROZEN_ORDER``, then those of each op family of
``families.MODULES`` in registry order, so a family joins with its one registry line
and draws after every earlier feature.  (A feature outside the families is named at the
end of ``FROZEN_ORDER``: the programs without it draw as before, those with a family's
feature drawn after it may draw it on other seeds.)

``--features`` (``parse``) switches features by name: ``all``, ``none``, a list of
names (those on, at their weights), ``-name`` to drop one from all, and
``name=weight`` to set a weight.
"""

from __future__ import annotations

import random

from fuzzer import __version__
from fuzzer.program import (
    aten_forms,
    dtype_reads,
    families,
    forms,
    index_writes,
    input_swaps,
    int_forms,
    library_forms,
    matmul_forms,
    mode_features,
    offset_forms,
    scatter_forms,
    storage,
    strided_forms,
    strided_writes,
    tensor_forms,
    transposed_forms,
    width_forms,
)
from fuzzer.program.feature_record import Feature

#: the draw order of the features declared before the op families' features were read
#: from their registry: frozen, so every program of those features draws as before
FROZEN_ORDER: tuple[str, ...] = (
    "autograd", "graph-break", "dynamic-mode", "data-dependent", "signatures", "identical-calls", "dtypes",
    "strided", "aliased-inputs", "hops", "views", "indexing", "module-state", "tagged-ops", "schemas",
    "schema-alias", "op-calls", "hop-effects", "autograd-function", "strided-views", "layouts",
    "overlapping-inputs", "storage-swaps", "int-tensors", "dtype-views", "module-carry", "function-shapes",
    "func-grad", "index-writes", "dtype-reads", "input-swaps", "base-offsets", "transposed-writes", "matmuls",
    "view-scatters",
)


def draw_order(frozen: tuple[str, ...], family_modules) -> tuple[str, ...]:
    """``frozen``, then the features of the op families (``families.MODULES``) it does not
    name, in registry order: a family appended there draws after every earlier feature,
    without a line here."""
    later = tuple(f.name for module in family_modules for f in module.FEATURES if f.name not in frozen)
    return frozen + later


#: the features in the order each program draws them, from a stream of its own
ORDER: tuple[str, ...] = draw_order(FROZEN_ORDER, families.MODULES)

#: the modules that declare features: those of the form table, and the features of how
#: a program runs
DECLARING = forms.MODULES + (mode_features,)
_DECLARED: dict[str, Feature] = {f.name: f for module in DECLARING for f in module.FEATURES}
assert sorted(_DECLARED) == sorted(ORDER), "every feature is declared once and drawn in ORDER once"
assert sum(len(module.FEATURES) for module in DECLARING) == len(ORDER), "no feature is declared twice"
FEATURES: tuple[Feature, ...] = tuple(_DECLARED[name] for name in ORDER)
BY_NAME: dict[str, Feature] = {f.name: f for f in FEATURES}

# the features' names, as callers know them (each is declared in its module)
AUTOGRAD, DYNAMIC_MODE = mode_features.AUTOGRAD, mode_features.DYNAMIC_MODE
IDENTICAL_CALLS, DTYPES = mode_features.IDENTICAL_CALLS, mode_features.DTYPES
STRIDED, ALIASED = mode_features.STRIDED, mode_features.ALIASED
MODULE_STATE, LAYOUTS, OVERLAPPING = mode_features.MODULE_STATE, mode_features.LAYOUTS, mode_features.OVERLAPPING
FUNC_GRAD = mode_features.FUNC_GRAD
GRAPH_BREAK, DATA_DEPENDENT = aten_forms.GRAPH_BREAK, aten_forms.DATA_DEPENDENT
SIGNATURES, HOPS = library_forms.SIGNATURES, library_forms.HOPS
VIEWS, INDEXING = tensor_forms.VIEWS, tensor_forms.INDEXING
STRIDED_VIEWS, INT_TENSORS, DTYPE_VIEWS = strided_forms.STRIDED_VIEWS, int_forms.INT_TENSORS, width_forms.DTYPE_VIEWS
# (the families' features that code here and in the tests named before: a new family's
# callers read its module's FEATURE)
TAGGED_OPS, SCHEMAS = families.tagged.FEATURE, families.schemas.FEATURE
SCHEMA_ALIAS, OP_CALLS = families.schemas.ALIAS_FEATURE, families.calls.FEATURE
HOP_EFFECTS, AUTOGRAD_FUNCTION = families.control.FEATURE, families.function.FEATURE
FUNCTION_SHAPES, STORAGE_SWAPS, MODULE_CARRY = families.fnshapes.FEATURE, families.swaps.FEATURE, families.state.FEATURE
INDEX_WRITES, DTYPE_READS, INPUT_SWAPS = index_writes.INDEX_WRITES, dtype_reads.DTYPE_READS, input_swaps.INPUT_SWAPS
BASE_OFFSETS, TRANSPOSED_WRITES = offset_forms.BASE_OFFSETS, transposed_forms.TRANSPOSED_WRITES
MATMULS, VIEW_SCATTERS = matmul_forms.MATMULS, scatter_forms.VIEW_SCATTERS
#: the features a program with ``func-grad`` never has (``mode_features`` says why)
FUNC_GRAD_EXCLUDES: tuple[str, ...] = BY_NAME[FUNC_GRAD].excludes

#: no feature: the programs of float32 inference over one graph, as before
NONE: dict[str, float] = {}
ALL: dict[str, float] = {f.name: f.weight for f in FEATURES}


class FeatureError(ValueError):
    """A ``--features`` value that names no feature or has a bad weight."""


def parse(text: str) -> dict[str, float]:
    """Feature weights from a ``--features`` value (see the module docstring)."""
    text = text.strip()
    if text in ("", "none"):
        return dict(NONE)
    table: dict[str, float] = {}
    parts = [p.strip() for p in text.split(",") if p.strip()]
    if parts[0] == "all" or all(p.startswith("-") for p in parts):
        table = dict(ALL)
        parts = [p for p in parts if p != "all"]
    for part in parts:
        if part.startswith("-"):
            _known(part[1:])
            table.pop(part[1:], None)
            continue
        name, _, weight = part.partition("=")
        _known(name)
        try:
            value = float(weight) if weight else BY_NAME[name].weight
        except ValueError:
            raise FeatureError(f"weight of {name} is not a number: {weight!r}") from None
        if not 0.0 <= value <= 1.0:
            raise FeatureError(f"weight of {name} must be within [0, 1], got {value}")
        table[name] = value
    return table


def _known(name: str) -> None:
    if name not in BY_NAME:
        raise FeatureError(f"unknown feature {name!r}; features: {', '.join(BY_NAME)}")


def describe(table: dict[str, float]) -> str:
    """A one-line summary of a weight table, for progress lines and notes."""
    if not table:
        return "none"
    return ", ".join(f"{n}={w:g}" for n, w in table.items())


def unavailable(name: str) -> str | None:
    """Why this torch cannot run feature ``name`` (its ``Feature.unavailable``), or None."""
    return BY_NAME[name].unavailable()


def draw(seed: int, table: dict[str, float]) -> frozenset[str]:
    """The features program ``seed`` has: each on with its weight, from a stream of its
    own (so the program's other draws are those of a program without features), with
    what each one on implies and without what it excludes."""
    if not table:
        return frozenset()
    rng = random.Random(f"dcefuzz-features-{__version__}-{seed}")
    on = frozenset(f.name for f in FEATURES if rng.random() < table.get(f.name, 0.0) and f.unavailable() is None)
    for feature in FEATURES:
        if feature.name in on:
            on = (on | set(feature.implies)) - set(feature.excludes)
    return on


def without(table: dict[str, float], excluded) -> dict[str, float]:
    """``table`` less the features ``excluded`` and every feature that implies one of
    them (``Feature.implies``): :func:`draw` turns on what a drawn feature implies, so a
    table that kept ``func-grad`` would draw ``autograd`` back for a target that cannot
    run it.  The draws of every other feature stay as they were (:func:`draw` reads its
    stream whatever the weights)."""
    excluded = set(excluded)
    return {name: weight for name, weight in table.items()
            if name not in excluded and not excluded & set(BY_NAME[name].implies)}


def used_by(program) -> list[str]:
    """The features a program uses, read off its statements' forms and, for the others
    (``Feature.seen_in``), its mode and calls."""
    used = {forms.form(s.form).feature for s in program.body} - {None}
    used |= {f.name for f in FEATURES if f.seen_in(program)}
    return [f.name for f in FEATURES if f.name in used]


def writes_beside(on) -> bool:
    """Whether the generator may write a value beside a disjoint part of its own storage
    (``storage.Tracker``): with strided views, inputs that overlap, offsets into the base
    and transposed writes."""
    return bool({STRIDED_VIEWS, OVERLAPPING, BASE_OFFSETS, TRANSPOSED_WRITES} & set(on))


def tracker(on, prints=None, dense=None, late=None) -> storage.Tracker:
    """What the generator keeps of storage for a program with features ``on``
    (``storage.Tracker``): whether a write may read a disjoint part of its own storage
    (:func:`writes_beside`), whether the views of a storage swapped away from are read
    after the swap (``input-swaps``), and the values no aten form writes and inputs no
    statement reads (``late``, a ``strided_writes.LateStrided`` taken as a copy)."""
    return storage.Tracker(writes_beside(on), dict(prints or {}), set(dense or ()),
                           storage.Swaps(old_views=INPUT_SWAPS in set(on)),
                           late.copy() if late is not None else strided_writes.LateStrided())


def needs_capture(program) -> bool:
    """Whether Dynamo must capture data-dependent sizes (``.item()``, ``masked_select``,
    ``nonzero``) rather than break the graph there."""
    return any(forms.form(s.form).feature == DATA_DEPENDENT or "size" in s.attrs for s in program.body)
