"""The program-level liveness used by the ``missed-dce`` report.

It over-approximates liveness (any write to a storage something live reads counts),
so it never calls a needed call dead.

A dead pure call the compiler keeps is kept for a reason the call's neighbourhood
shows (:func:`dead_site_causes`), and the reasons are different bugs: a call that
binds a size from data (or feeds one that does) is kept with the unbacked symbol it
defines; one in or feeding a ``torch.cond`` is kept with the conditional; any other
is kept by nothing the program asks.
"""

from __future__ import annotations

from fuzzer.program import forms
from fuzzer.program.custom_ops import PURE
from fuzzer.program.form_record import COND
from fuzzer.program.ir import Program, Typing, check


def live_statements(program: Program, typing: Typing | None = None) -> set[int]:
    """Indices of statements whose work can reach an output, an input or an effect, and
    of every nested form (``Form.nested``) with what it reads."""
    typing = typing or check(program)
    root = typing.root
    inputs = {i.name for i in program.inputs}
    live_values = set(program.outputs)
    live_roots = {root[v] for v in live_values} | inputs
    live: set[int] = set()
    changed = True
    while changed:
        changed = False
        for n, stmt in enumerate(program.body):
            if n in live:
                continue
            form = forms.form(stmt.form)
            writes = {root[stmt.args[w]] for w in form.mutates}
            # a nested form (a branch, a loop body, an autograd.Function) is live: whether
            # the compiler may drop the op it wraps is not the program's to say
            if (form.is_effectful or form.nested or writes & live_roots
                    or (stmt.out is not None and stmt.out in live_values)):
                live.add(n)
                changed = True
                for a in stmt.args:
                    live_values.add(a)
                    live_roots.add(root[a])
                if stmt.out is not None:
                    live_roots.add(root[stmt.out])
        # a value read by a live statement makes earlier writes to its storage live
    return live


def dead_pure_sites(program: Program) -> set[int]:
    """Call sites of pure custom ops whose results nothing live ever reads; not those
    of a nested form (``Form.nested``: a call in a branch, a loop body, an
    ``autograd.Function``), whose deadness is the enclosing function's business."""
    live = live_statements(program)
    dead = {site for n, s in enumerate(program.body)
            if n not in live and forms.category_of(s.form) == PURE and forms.form(s.form).site_traced
            and not forms.form(s.form).nested
            for site in s.sites}
    # an identical call repeats its site: the site runs if any of its calls is live
    return dead - {site for n, s in enumerate(program.body) if n in live for site in s.sites}


#: why a dead pure call may be kept: it binds (or feeds a call that binds) a size from
#: data; it is in (or feeds) a ``torch.cond``; neither
SIZES_FROM_DATA, IN_COND, PLAIN = "sizes-from-data", "cond", "plain"


def _own_cause(stmt) -> str | None:
    form = forms.form(stmt.form)
    if "size" in stmt.attrs:
        return SIZES_FROM_DATA
    if form.hop == COND or form.branches:
        return IN_COND
    return None


def dead_site_causes(program: Program) -> dict[int, str]:
    """Each dead pure call site (:func:`dead_pure_sites`) with why the compiler may keep
    it: its own statement's cause, or that of a statement its value reaches (the
    first of SIZES_FROM_DATA, IN_COND found, else PLAIN).  An identical call repeats
    its site, and the compiler runs the site once for both where CSE merges them, so
    the causes of every call of the site count."""
    dead = dead_pure_sites(program)
    body = program.body
    found: dict[int, set] = {}
    for n, stmt in enumerate(body):
        for site in stmt.sites:
            if site not in dead:
                continue
            why = found.setdefault(site, set())
            why.add(_own_cause(stmt))
            reached = {stmt.out} if stmt.out is not None else set()
            for later in body[n + 1:]:
                if reached & set(later.args):
                    why.add(_own_cause(later))
                    if later.out is not None:
                        reached.add(later.out)
    return {site: next((c for c in (SIZES_FROM_DATA, IN_COND) if c in why), PLAIN)
            for site, why in found.items()}
