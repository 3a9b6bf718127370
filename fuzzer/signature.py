"""Signatures: when are two findings the same bug?

A signature names the bug, not the program, so one compiler bug that fires in many
random programs lands as one corpus entry with a hit count.  It holds:

* the kind (``effect-log``, ``wrong-mutation``, ...);
* for errors, the stage and the exception type plus its first message line with
  numbers, symbols and value names normalised away;
* for effect-log, the shape of the change (missing / extra / duplicated /
  reordered / data) and the effectful ops involved;
* for wrong-mutation, the forms that write the diverging input's storage;
* for wrong-output, the categories of work in the program (custom-op kinds,
  views, in-place aten ops);
* for missed-dce, the pure ops whose dead call sites ran.

Two findings are the same when their signatures are equal strings.
"""

from __future__ import annotations

import re

from fuzzer import ops, oracle
from fuzzer.oracle import Divergence
from fuzzer.program import Case, check

_NUMBER = re.compile(r"\b\d+(\.\d+)?\b")
_NAMES = re.compile(r"\b([svux]|buf|arg|primals_|tangents_)\d+\b")


def normalise_message(line: str) -> str:
    line = _NAMES.sub(lambda m: m.group(1) + "#", line)
    line = _NUMBER.sub("#", line)
    return re.sub(r"\s+", " ", line).strip()[:200]


def _effect_pattern(divs: list[Divergence]) -> str:
    words = set()
    ops_seen = set()
    for d in divs:
        if d.where == "sequence":
            words |= {w for w in ("missing", "extra", "duplicated", "reordered") if d.detail.startswith(w)
                      or f"; {w}" in d.detail}
        else:
            words.add("data")
        ops_seen |= set(re.findall(r"\b(e_\w+)@", d.detail + d.where))
    return ",".join(sorted(words)) + "|" + ",".join(sorted(ops_seen))


def _writers_of(case: Case, input_names: set[str]) -> str:
    typing = check(case.program)
    forms = set()
    for stmt in case.program.body:
        form = ops.form(stmt.form)
        if any(typing.root[stmt.args[w]] in input_names for w in form.mutates):
            forms.add(form.name)
    return ",".join(sorted(forms))


def _categories(case: Case) -> str:
    cats = {ops.kind_of(s.form) for s in case.program.body} - {ops.ATEN}
    return ",".join(sorted(cats))


def of(kind: str, case: Case, divs: list[Divergence]) -> str:
    if kind in (oracle.COMPILE_ERROR, oracle.RUNTIME_ERROR):
        return f"{kind}|{normalise_message(divs[0].detail)}"
    if kind == oracle.EFFECT_LOG:
        return f"{kind}|{_effect_pattern(divs)}"
    if kind == oracle.WRONG_MUTATION:
        names = {d.where.split()[-1] for d in divs}
        return f"{kind}|{_writers_of(case, names)}"
    if kind == oracle.MISSED_DCE:
        names = sorted(set(re.findall(r"\b(p_\w+)@", " ".join(d.detail for d in divs))))
        return f"{kind}|{','.join(names)}"
    return f"{kind}|{_categories(case)}"
