"""Op families: the parts of the custom-op API the first library did not speak.

The first library (``fuzzer.program.op_snippets`` and the custom forms of
``fuzzer.program.forms``) is the API of ``custom_op`` with ``mutates_args``, fresh
results and ORDERED effects.  Each module here adds one family the way libraries
write it now, as two things:

* ``OPS``: its ops, each a :class:`~fuzzer.program.op_record.CustomOp` snippet
  (the module imports nothing of the program package at its top but ``op_record``,
  since the library is read while ``custom_ops`` is being imported);
* ``forms(kit)``: the statement forms that call them, each under the family's
  feature (``FEATURE``, which ``fuzzer.program.features`` lists), built with ``kit``
  (``fuzzer.program.form``) when ``forms`` builds its table.

A family is listed in ``MODULES`` once; the library's order is the first library's
ops, then each family's, in this order, so adding one leaves every earlier
program's text as it was.
"""

from __future__ import annotations

import importlib

#: the family modules, in library order
MODULES: tuple[str, ...] = ("control", "function")


def _modules():
    return [importlib.import_module(f"{__name__}.{name}") for name in MODULES]


def ops() -> tuple:
    """Every family's ops, in library order."""
    return tuple(op for module in _modules() for op in module.OPS)


def forms(kit) -> tuple:
    """Every family's statement forms, built with ``kit`` (``fuzzer.program.form``, which
    ``forms`` hands in: a family imports nothing of the program package that imports the
    library, so that the library can list the families' ops)."""
    return tuple(f for module in _modules() for f in module.forms(kit))
