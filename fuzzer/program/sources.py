"""Op sources: where the custom ops a program calls come from, each behind one small
interface.

dcefuzz's own ops (``fuzzer.program.custom_ops``) are one source; a user's library
(``--ops``) is another.  What the rest of the pipeline needs of a source is small:
make the ops a program names callable in this process before its body is read
(``load``), give the generator inputs shaped for them (``input_shapes``), and write
what a repro script or a brief needs so that the ops exist there too (``script``).
The stages that need it (reading a program, generating one, rendering its repro)
ask every source here and never name one.

dcefuzz's own source is here; others are registered through the entry point group
:data:`GROUP` (a package's ``pyproject.toml``), found without importing the package
that defines them.  ``register`` adds one by hand (tests).
"""

from __future__ import annotations

from typing import Protocol

from fuzzer.program import custom_ops, forms

#: the entry point group op sources are registered in
GROUP = "dcefuzz.op_sources"


class OpSource(Protocol):
    """Where some of a program's custom ops come from."""

    name: str

    def load(self, imports: tuple) -> None:
        """Make the ops of a program's ``imports`` (``Program.imports``) callable here,
        their statement forms registered; raise ``ValueError`` when it cannot."""

    def input_shapes(self, seed: int, ops, symbols: tuple[str, ...]) -> list[tuple[list[str], str | None]]:
        """Extra inputs, as (dims over ``symbols``, fixed dtype or None), that program
        ``seed`` gets so its ops (``ops``: the generator's ``OpSet``) have operands that
        fit them."""

    def names(self, program) -> dict[str, object]:
        """The names the program's own code uses of this source's, beyond ``torch``, with
        what they are bound to: the code runs in a namespace of them (``codegen.build``)."""

    def script(self, program, brief: bool = False, traced: bool = True) -> str:
        """What a repro script (``brief``: a brief repro) needs, before the program, for
        the program's ops of this source to exist there ("" when it calls none);
        ``traced=False``: a brief whose bug needs no call trace, so ops that record
        their calls for the fuzzer may be written without that (a source whose ops
        record nothing ignores it)."""


class Builtin:
    """dcefuzz's own ops: registered once per process (``custom_ops.install``), carried
    into scripts as the very snippets the fuzzer registered."""

    name = "dcefuzz"

    def load(self, imports: tuple) -> None:
        custom_ops.install()

    def input_shapes(self, seed: int, ops, symbols: tuple[str, ...]) -> list[tuple[list[str], str | None]]:
        return []

    def names(self, program) -> dict[str, object]:
        """The opaque classes its step makes objects of, and those its statements make
        value objects of in the program's text, as the library registered them."""
        made = [forms.form(stmt.form).makes_object for stmt in program.body]
        wanted = [cls for _, cls, _ in program.mode.objects] + [cls for cls in made if cls is not None]
        return {cls: getattr(custom_ops.install(), cls) for cls in wanted}

    def script(self, program, brief: bool = False, traced: bool = True) -> str:
        names, holding = program.custom_ops(), bool(program.mode.objects)
        if brief:
            return custom_ops.brief_source(names, grad=program.mode.grad, traced=traced, holding=holding)
        # the header (the trace, the effect registration) always: other sources' text uses it
        return custom_ops.source_for(names, holding=holding)


BUILTIN = Builtin()
_SOURCES: dict[str, OpSource] = {BUILTIN.name: BUILTIN}
_loaded = False


def register(source: OpSource) -> OpSource:
    _SOURCES[source.name] = source
    return source


def all_sources() -> list[OpSource]:
    """Every source, dcefuzz's own first (the others' script text builds on its header)."""
    global _loaded
    if not _loaded:
        _loaded = True
        from importlib.metadata import entry_points

        for point in sorted(entry_points(group=GROUP), key=lambda p: p.name):
            if point.name not in _SOURCES:
                register(point.load())
    return [BUILTIN] + [s for name, s in sorted(_SOURCES.items()) if s is not BUILTIN]


def load(imports: tuple) -> None:
    """Make every op a program with ``imports`` calls callable here."""
    for source in all_sources():
        source.load(imports)


def input_shapes(seed: int, ops, symbols: tuple[str, ...]) -> list[tuple[list[str], str | None]]:
    return [shaped for source in all_sources() for shaped in source.input_shapes(seed, ops, symbols)]


def names(program) -> dict[str, object]:
    """The names ``program``'s code uses beyond ``torch``, every source's."""
    return {name: bound for source in all_sources() for name, bound in source.names(program).items()}


def script(program, brief: bool = False, traced: bool = True) -> str:
    """What a script needs for every op ``program`` calls, source after source."""
    return "\n\n".join(text for text in (s.script(program, brief, traced) for s in all_sources()) if text.strip())


def imports_for(body, modules: tuple, kept: tuple = ()) -> tuple:
    """The modules a program with ``body`` must import, after those it ``kept``: every
    one of ``modules`` (a source's, e.g. a user's library) once it calls an op that is
    not dcefuzz's own (such forms are registered only by importing them), none
    otherwise.  A generated program and a mutant that brings a user's op in both take
    them from here, so a fresh process can read either."""
    calls_user = any(not forms.form(s.form).site_traced for s in body)
    return kept + tuple(i for i in (modules if calls_user else ()) if i not in kept)
