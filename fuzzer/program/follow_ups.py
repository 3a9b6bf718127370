"""The statement the generator tries right after one, where the one just made asks for
it, as real code uses what it just made: an integer, a mask or a tensor subclass read
at once (:func:`use`), a tensor just written read elsewhere or written again from its other
positions, and the views of a storage just swapped away from read (:func:`then`, the
forms ``Form.then`` names); and what real code does next with a result just made, a
write through a view of it or a read of it (:func:`follow`, the forms ``Form.follow``
names).

Each proposes through the generator's own ``propose`` (``generate.propose``), so what it
offers is held to every rule a drawn statement is; none draws from the stream of a
program whose forms ask for nothing.
"""

from __future__ import annotations

from fuzzer.program import forms


def use(stmt, st, users, propose):
    """A statement of one of ``users`` (``form_record.USED_BY``: the integer forms, those taking
    a tensor subclass; or the transforms) that may read the integer, mask, tensor subclass or
    value of a dtype of its own ``stmt`` just made: each form that takes its dtype tried once,
    in random order."""
    fitting = [f for f in users if st.dtypes[stmt.out] in f.operand_dtypes]
    return next((s for f in st.rng.sample(fitting, k=len(fitting)) if (s := propose(f, st)) is not None), None)


def firsts(stmt, form, st) -> list[str]:
    """The operands a follow-up of ``stmt`` may start from: its operand 0 (the tensor it
    wrote or read), or, for a swap (``Form.consumes``), the views made before of the
    storage it swapped away from that the generator may still read."""
    if not form.consumes:
        return [stmt.args[0]]
    left = {st.root[stmt.args[k]] for k in form.consumes}
    return [v for v in st.order if st.root[v] in left and st.mem.swaps.usable(v, st.root)]


def then(stmt, form, st, on, propose):
    """A statement of one of the forms ``form.then`` names that the program's features
    ``on`` allow, over one of :func:`firsts`: each tried once, in random order, the first
    legal one kept (None: none is)."""
    starts = firsts(stmt, form, st)
    names = [n for n in form.then if forms.form(n).feature in (None, *on)]
    if not starts or not names:
        return None
    first = st.pick(starts)
    return next((s for n in st.rng.sample(names, k=len(names)) if (s := propose(forms.form(n), st, first)) is not None),
                None)


def follow(stmt, form, st, propose):
    """A statement on ``stmt``'s result of the first of the forms ``form.follow(rng)``
    names, in its order, that is legal there (None: none is)."""
    return next((s for name in form.follow(st.rng) if (s := propose(forms.form(name), st, stmt.out)) is not None),
                None)
