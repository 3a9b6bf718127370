"""What a program is made of, as far as a report's sentences speak of it.

An issue is read by someone who checks every sentence against the program under it.
A sentence about custom ops under a program that calls none, about fresh outputs
under an op that returns the argument it writes, about an effect log under a program
with no effect, is false there, and one false sentence costs the rest their weight.
So every sentence of a report that speaks of what the program has is said only where
:class:`Makeup`, read off the program itself, says it has it.
"""

from __future__ import annotations

from dataclasses import dataclass

from fuzzer.program import custom_ops, forms
from fuzzer.program.ir import Program


@dataclass(frozen=True)
class Makeup:
    """What of a program a report's sentences may speak of."""

    #: dcefuzz's own custom ops it calls, in library order
    library_ops: tuple[str, ...] = ()
    #: a user's ops it calls (``fuzzer.user``): audited before any program called them
    user_ops: tuple[str, ...] = ()
    #: the library ops defined with ``custom_op``: they declare writes in ``mutates_args``
    by_custom_op: tuple[str, ...] = ()
    #: the library ops defined by a hand-written schema: they declare writes with ``(a!)``
    by_schema: tuple[str, ...] = ()
    #: the ops that declare ``mutates_args="unknown"`` (they may write any argument)
    writes_unknown: tuple[str, ...] = ()
    #: the custom ops whose result it calls is the argument they write (a tagged op,
    #: a schema's ``-> Tensor(a!)``)
    return_operand: tuple[str, ...] = ()
    #: the custom ops it calls that return fresh tensors
    return_fresh: tuple[str, ...] = ()
    #: the custom ops registered as ORDERED effects
    effectful: tuple[str, ...] = ()
    #: it takes gradients (``Mode.grad``)
    grad: bool = False

    @property
    def custom_ops(self) -> tuple[str, ...]:
        return self.library_ops + self.user_ops

    @classmethod
    def of(cls, program: Program) -> Makeup:
        library = tuple(program.custom_ops())
        ops = [custom_ops.BY_NAME[name] for name in library]
        custom_forms = [forms.form(s.form) for s in program.body]
        custom_forms = [f for f in custom_forms if f.is_custom or not f.site_traced]
        aliasing = {_op_name(f) for f in custom_forms if f.result_aliases}
        fresh = {op.name for op in ops if op.returns} | {_op_name(f) for f in custom_forms
                                                         if f.returns and not f.result_aliases and not f.site_traced}
        return cls(
            library_ops=library,
            user_ops=tuple(program.user_ops()),
            by_custom_op=tuple(op.name for op in ops if not op.by_schema),
            by_schema=tuple(op.name for op in ops if op.by_schema),
            writes_unknown=tuple(op.name for op in ops if op.writes_unknown),
            return_operand=tuple(sorted(aliasing)),
            return_fresh=tuple(sorted(fresh - aliasing)),
            effectful=tuple(sorted({op.name for op in ops if op.declaration == custom_ops.EFFECTFUL}
                                   | {_op_name(f) for f in custom_forms if f.is_effectful})),
            grad=program.mode.grad,
        )


def _op_name(form) -> str:
    """The op a custom statement form calls: a library op's name, a user's op's
    qualified name (its form's name)."""
    return form.custom if form.site_traced else form.name


def _names(ops) -> str:
    return ", ".join(f"`{op}`" for op in ops)


def _writes(makeup: Makeup) -> str:
    """How the library ops declare what they write: ``mutates_args``, a schema's ``(a!)``."""
    ways = [way for way, ops in (("`mutates_args`", makeup.by_custom_op),
                                 ("a hand-written schema's `(a!)`", makeup.by_schema)) if ops]
    said = "each declares exactly what it writes (" + ", or ".join(ways) + ")"
    if makeup.writes_unknown:
        one = len(makeup.writes_unknown) == 1
        said = (f"each declares what it writes ({' or '.join(ways)}; {_names(makeup.writes_unknown)} "
                f"{'declares' if one else 'declare'} `\"unknown\"`: {'it' if one else 'they'} may write any argument)")
    return said


def honesty(makeup: Makeup) -> str:
    """What the program's custom ops promise the compiler, which the bug is judged by
    ("" for a program that calls none): each clause only of ops the program calls."""
    sentences = []
    if makeup.library_ops:
        clauses = [_writes(makeup), "its fake impl gives its real outputs' metadata"]
        if makeup.return_fresh:
            one = len(makeup.return_fresh) == 1
            clauses.append(f"{_names(makeup.return_fresh)} {'returns' if one else 'return'} fresh tensors"
                           if makeup.return_operand else "its outputs are fresh tensors")
        if makeup.return_operand:
            one = len(makeup.return_operand) == 1
            clauses.append(f"{_names(makeup.return_operand)} {'returns' if one else 'return'} the argument "
                           f"{'it writes' if one else 'they write'}, as {'its' if one else 'their'} schema declares "
                           "(`Tensor(a!)`)")
        sentences.append(f"Its custom ops ({_names(makeup.library_ops)}) are honest: " + ", ".join(clauses) + ".")
    if makeup.user_ops:
        sentences.append(f"Its user ops ({_names(makeup.user_ops)}) passed dcefuzz's declaration audit "
                         "(`torch.library.opcheck`, and no write or alias they do not declare).")
    return " ".join(sentences)


def judged(makeup: Makeup) -> str:
    """What of its runs the full script judges, as far as the program has it."""
    parts = ["a float64 reference", "the inputs after the call"]
    if makeup.effectful:
        parts.append("the effect log")
    if makeup.grad:
        parts.append("the gradients")
    return ", ".join(parts)
