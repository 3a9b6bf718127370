"""Op families: the parts of the custom-op API the first library did not speak.

The first library (``fuzzer.program.op_snippets`` and the custom forms of
``fuzzer.program.library_forms``) is the API of ``custom_op`` with ``mutates_args``,
fresh results and ORDERED effects.  Each module here adds one family the way libraries
write it now, and carries all of it:

* ``OPS``: its ops, each a :class:`~fuzzer.program.op_record.CustomOp` snippet;
* ``FORMS``: the statement forms that call them (or the first library's ops), each
  under the family's feature, built with ``fuzzer.program.form_record``'s builders
  from the op records themselves;
* ``FEATURES``: the :class:`~fuzzer.program.feature_record.Feature` records of the
  family's features (its ``FEATURE``, and any other), each with why this torch cannot
  run it (``Feature.unavailable``), by which the library leaves the family's ops
  unregistered; the feature registry (``fuzzer.program.features``) reads them here.

A family imports the record modules, ``op_snippets`` and ``sizes``, never the library
(``custom_ops``), the form table or the feature registry: those read the families.

``MODULES`` lists each family once, by its module's name: the registry line a new
family adds its name to, at the end.  The library's order is the first library's ops,
then each family's, in this order, and the feature registry
(``fuzzer.program.features``) draws a new family's features after every earlier
feature, so every earlier program's text and draws stay as they were.
"""

from __future__ import annotations

import importlib
from types import ModuleType


def _modules(*names: str) -> tuple[ModuleType, ...]:
    """The family modules of this package called ``names``, in that order."""
    return tuple(importlib.import_module(f"{__name__}.{name}") for name in names)


#: the family modules, in library order: a new family goes at the end
MODULES = _modules("tagged", "schemas", "calls", "control", "function", "swaps", "state", "fnshapes", "layout_tags")

#: every family's ops, in library order
OPS: tuple = tuple(op for module in MODULES for op in module.OPS)
#: every family's statement forms, in library order
FORMS: tuple = tuple(form for module in MODULES for form in module.FORMS)
#: every family's features
FEATURES: tuple = tuple(feature for module in MODULES for feature in module.FEATURES)


def unavailable(feature: str) -> str | None:
    """Why this torch cannot run family feature ``feature`` (None: it can, or no family
    declares it), read off the family's record without the feature registry, which the
    library (``custom_ops.registrable``) may not import: the registry reads the forms,
    which read the library."""
    for declared in FEATURES:
        if declared.name == feature:
            return declared.unavailable()
    return None
