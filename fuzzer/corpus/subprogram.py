"""Sub-programs: whether one program holds another's statements, wired alike.

A held bug's example is a program that shows it, shrunk until no one-step cut still
does; a drawn program that holds those statements, reading one another as they do
there, under the example's mode, runs the example's calls in the example's order on the
example's data flow. That is more than resembling the bug (the same forms somewhere): it
is the bug's own program with more around it. What the relation leaves free is what the
shrinker frees: an example's input may be any tensor of the larger program (the shrinker
moves operands to inputs), its sizes, scalars and call sites (``Stmt.attrs``) any, since
a shrunk example keeps whichever of them it was drawn with.  The mode is not freed: a part
the example lacks (gradients, a mark, a dtype) takes the compile down another path,
where the same statements have shown other bugs (``head_pos`` alone is a held error in
Dynamo; with gradients, the same call met an error of Inductor's lowering no corpus held).
"""

from __future__ import annotations

from fuzzer.corpus.bugs import mode_words
from fuzzer.program.ir import Program, Stmt


def holds(program: Program, part: Program) -> bool:
    """Whether ``program`` holds ``part``: each statement of ``part``'s body, in order,
    is a statement of ``program``'s of the same form and arity, reading what the
    statement it stands for reads under one renaming (``part``'s inputs to distinct
    values or inputs of ``program``, each value to the value its statement makes), and
    ``program``'s mode says what ``part``'s says (``bugs.mode_words``, the same words).
    An empty ``part`` is held by nothing: it says nothing of a bug."""
    if not part.body or set(mode_words(part.mode)) != set(mode_words(program.mode)):
        return False
    return _placed(program.body, part.body, 0, 0, {})


def _placed(body: tuple[Stmt, ...], part: tuple[Stmt, ...], j: int, start: int, names: dict[str, str]) -> bool:
    """Whether ``part[j:]`` can be placed in ``body[start:]`` in order under a renaming
    extending ``names`` (a depth-first search; examples are a few statements long)."""
    if j == len(part):
        return True
    want = part[j]
    for n in range(start, len(body)):
        renamed = _renamed(want, body[n], names)
        if renamed is not None and _placed(body, part, j + 1, n + 1, renamed):
            return True
    return False


def _renamed(want: Stmt, stmt: Stmt, names: dict[str, str]) -> dict[str, str] | None:
    """``names`` extended so that ``stmt`` stands for ``want``; None where it cannot."""
    if stmt.form != want.form or len(stmt.args) != len(want.args) or (want.out is None) != (stmt.out is None):
        return None
    out = dict(names)
    taken = set(out.values())
    for a, b in zip(want.args, stmt.args):
        if a in out:
            if out[a] != b:
                return None
        elif b in taken:
            return None
        else:
            out[a] = b
            taken.add(b)
    if want.out is not None:
        if stmt.out in taken:
            return None
        out[want.out] = stmt.out
    return out
