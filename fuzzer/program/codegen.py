"""Lower a program to a plain, readable Python function.

The same text is what ``torch.compile`` traces and what a repro script shows, so it
is written for a reader: one statement per line, sizes read once at the top from the
inputs' shapes (``s0 = x0.shape[0]``) and used by name, custom ops called through
``torch.ops.dcefuzz`` so the line reads the same inside and outside the fuzzer.
"""

from __future__ import annotations

import linecache

from fuzzer.program import forms
from fuzzer.program.ir import Program, check

FUNCTION_NAME = "program"


def source(program: Program, name: str = FUNCTION_NAME) -> str:
    typing = check(program)
    params = ", ".join(i.name for i in program.inputs)
    lines = [f"def {name}({params}):"]
    for sym in program.symbols:
        for inp in program.inputs:
            if sym in inp.dims:
                lines.append(f"    {sym} = {inp.name}.shape[{inp.dims.index(sym)}]")
                break
    for stmt in program.body:
        form = forms.form(stmt.form)
        expr = form.render(list(stmt.args), stmt.attrs, [typing.dims[a] for a in stmt.args])
        lines.append(f"    {stmt.out} = {expr}" if stmt.out is not None else f"    {expr}")
    outs = "".join(f"{o}, " for o in program.outputs)
    lines.append(f"    return ({outs.rstrip(', ')}{',' if len(program.outputs) == 1 else ''})")
    return "\n".join(lines) + "\n"


def build(program: Program, name: str = FUNCTION_NAME):
    """Compile the lowered text into a function object (each call: a new code object).

    A fresh code object per program matters: dynamo caches compiled graphs per code
    object, so reusing one would make programs share a cache and its recompile limit.
    """
    import torch

    text = source(program, name)
    filename = f"<dcefuzz {program.digest()[:12]}>"
    # Let tracebacks and dynamo's messages quote the generated lines.
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    namespace = {"torch": torch}
    exec(compile(text, filename, "exec"), namespace)
    return namespace[name]
