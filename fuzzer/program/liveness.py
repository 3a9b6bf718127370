"""The program-level liveness used by the ``missed-dce`` report.

It over-approximates liveness (any write to a storage something live reads counts),
so it never calls a needed call dead.
"""

from __future__ import annotations

from fuzzer.program import forms
from fuzzer.program.custom_ops import PURE
from fuzzer.program.ir import Program, Typing, check


def live_statements(program: Program, typing: Typing | None = None) -> set[int]:
    """Indices of statements whose work can reach an output, an input or an effect."""
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
            if (form.is_effectful or writes & live_roots
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
    """Call sites of pure custom ops whose results nothing live ever reads."""
    live = live_statements(program)
    dead = {site for n, s in enumerate(program.body)
            if n not in live and forms.category_of(s.form) == PURE and forms.form(s.form).site_traced
            for site in s.sites}
    # an identical call repeats its site: the site runs if any of its calls is live
    return dead - {site for n, s in enumerate(program.body) if n in live for site in s.sites}
