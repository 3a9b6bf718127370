"""Op families: the parts of the custom-op API the first library did not speak.

The first library (``fuzzer.program.op_snippets`` and the custom forms of
``fuzzer.program.forms``) is the API of ``custom_op`` with ``mutates_args``, fresh
results and ORDERED effects.  Each module here adds one family the way libraries
write it now, as two things:

* ``OPS``: its ops, each a :class:`~fuzzer.program.op_record.CustomOp` snippet
  (the module imports nothing of the program package at its top but ``op_record``,
  since the library is read while ``custom_ops`` is being imported);
* ``forms(kit)``: the statement forms that call them, each under the family's feature
  (``fuzzer.program.features``), built when ``forms`` builds its table with the
  builders ``kit`` hands in (the module ``fuzzer.program.form_record``: ``custom_form``,
  ``op_text``, the typing rules), so that no family imports a module that imports
  the library, which would make the program stage's modules a cycle;
* ``FEATURE`` and ``unavailable()`` (where a family has one feature and a torch may
  lack it): the family's feature, and why this torch cannot
  run it (or None), which ``features.unavailable`` answers with and by which the
  library leaves the family's ops unregistered.

A family is listed in ``MODULES`` once; the library's order is the first library's
ops, then each family's, in this order, so adding one leaves every earlier
program's text as it was.
"""

from __future__ import annotations

import importlib

#: the family modules, in library order
MODULES: tuple[str, ...] = ("tagged", "schemas", "calls", "control", "function", "swaps", "state", "fnshapes")


def _modules():
    return [importlib.import_module(f"{__name__}.{name}") for name in MODULES]


def ops() -> tuple:
    """Every family's ops, in library order."""
    return tuple(op for module in _modules() for op in module.OPS)


def unavailable(feature: str) -> str | None:
    """Why this torch cannot run the family of ``feature`` (None: it can, or no family
    has that feature)."""
    for module in _modules():
        if getattr(module, "FEATURE", None) == feature and hasattr(module, "unavailable"):
            return module.unavailable()
    return None


def forms(kit) -> tuple:
    """Every family's statement forms, built with ``kit`` (``fuzzer.program.form_record``)."""
    return tuple(f for module in _modules() for f in module.forms(kit))
