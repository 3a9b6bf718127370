"""Op families: the parts of the custom-op API the first library did not speak.

The first library (``fuzzer.program.op_snippets`` and the custom forms of
``fuzzer.program.library_forms``) is the API of ``custom_op`` with ``mutates_args``,
fresh results and ORDERED effects.  Each module here adds one family the way libraries
write it now, and carries all of it:

* ``OPS``: its ops, each a :class:`~fuzzer.program.op_record.CustomOp` snippet;
* ``FORMS``: the statement forms that call them (or the first library's ops), each
  under the family's feature, built with ``fuzzer.program.form_record``'s builders
  from the op records themselves;
* ``FEATURE`` and ``unavailable()`` (where a family has one feature and a torch may
  lack it): the family's feature, and why this torch cannot run it (or None), which
  ``features.unavailable`` answers with and by which the library leaves the family's
  ops unregistered.

A family imports the record modules, ``op_snippets`` and ``sizes``, never the library
(``custom_ops``) or the form table: those read the families.

``MODULES`` lists each family once; the library's order is the first library's ops,
then each family's, in this order, so a new family goes at the end and every earlier
program's text stays as it was.
"""

from __future__ import annotations

from fuzzer.program.families import calls, control, fnshapes, function, schemas, state, swaps, tagged

#: the family modules, in library order: a new family goes at the end
MODULES = (tagged, schemas, calls, control, function, swaps, state, fnshapes)

#: every family's ops, in library order
OPS: tuple = tuple(op for module in MODULES for op in module.OPS)
#: every family's statement forms, in library order
FORMS: tuple = tuple(form for module in MODULES for form in module.FORMS)


def unavailable(feature: str) -> str | None:
    """Why this torch cannot run the family of ``feature`` (None: it can, or no family
    has that feature)."""
    for module in MODULES:
        if getattr(module, "FEATURE", None) == feature and hasattr(module, "unavailable"):
            return module.unavailable()
    return None
