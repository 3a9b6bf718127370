"""A user's own custom ops, fuzzed beside dcefuzz's (``--ops``).

``library`` finds and loads the ops a module registers, ``declared`` reads what each
declares, ``gufunc`` its shapes, ``form`` makes it a statement form, ``tracing``
logs its effects, ``audit`` checks its declaration and ``selection`` chooses the
ops a campaign calls; ``source`` is the op source (``fuzzer.program.sources``) the
rest of the pipeline finds them through.  ``declare`` is the decorator a library may
use instead of ``DCEFUZZ_SIGNATURES``.
"""

from fuzzer.user.library import declare

__all__ = ["declare"]
