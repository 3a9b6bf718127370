"""A user's library as an op source (``fuzzer.program.sources``): its modules loaded by
path for a program that imports them, inputs shaped for its ops' signatures, and, in
a repro script, its modules imported and its ORDERED ops logged.

Registered as the op source ``user`` through this package's entry points.
"""

from __future__ import annotations

import random

from fuzzer import __version__
from fuzzer.limits import GEN
from fuzzer.program import forms
from fuzzer.user import library, tracing, values



class UserLibraries:
    """The modules ``--ops`` named, as a program records them (``Program.imports``)."""

    name = "user"

    def load(self, imports: tuple) -> None:
        if imports:
            library.ensure(imports)

    def input_shapes(self, seed: int, ops, symbols: tuple[str, ...]) -> list[tuple[list[str], str | None]]:
        """Inputs shaped for the tensor arguments of one of the user's ops with a
        signature, its letters mapped onto the program's symbols, and of the dtypes it
        takes, from a stream of their own (a program without user ops is drawn as it
        always was).  Random inputs rarely fit ``(m,n),(n,p)->(m,p)``, nor are they
        a quantiser's int8 codes; these are."""
        shaped = [f for f in (forms.FORMS.get(q) for q in ops.user) if f is not None and f.arity]
        rng = random.Random(f"dcefuzz-user-{__version__}-{seed}")
        if not shaped or rng.random() >= (GEN.user_shapes_share if ops.builtin else 1.0):
            return []
        form = rng.choice(shaped)
        gufunc = library.op(form.custom).gufunc
        dtypes = [form.operand_dtype(k) for k in range(form.arity)]
        if gufunc.same_shape:
            rank = rng.randint(1, GEN.max_rank)
            dims = [rng.choice(symbols) for _ in range(rank)]
            return [(list(dims), dtype) for dtype in dtypes]
        letters = {x: rng.choice(symbols) for x in gufunc.letters}
        return [([x if x.isdigit() else letters[x] for x in core], dtype) for core, dtype in zip(gufunc.inputs, dtypes)]

    def names(self, program) -> dict[str, object]:
        """The names its value objects are written with (their ``__fx_repr__``)."""
        return values.names_in(values.texts_in(program)) if program.imports else {}

    def script(self, program, brief: bool = False, traced: bool = True) -> str:
        # a user's ops take no site and record nothing themselves: only their effects are
        # logged, at the dispatcher, and a bug that needs no trace reads no log
        return tracing.script_source(program, brief)


SOURCE = UserLibraries()
