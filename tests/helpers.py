"""Small builders for hand-written programs and stand-in 'compiled' functions."""

from __future__ import annotations

from fuzzer.program.ir import Case, Input, Program, Stmt


def prog(inputs: dict[str, tuple[str, ...]], body: list[tuple], outputs=(), sym_min=None) -> Program:
    """``body`` items: (form, args, out, attrs)."""
    symbols = sorted({d for dims in inputs.values() for d in dims if d.startswith("s")})
    return Program(
        symbols=tuple(symbols),
        sym_min=dict(sym_min or {s: 1 for s in symbols}),
        inputs=tuple(Input(n, tuple(d)) for n, d in inputs.items()),
        body=tuple(Stmt(f, tuple(a), o, dict(at)) for f, a, o, at in body),
        outputs=tuple(outputs),
    )


def case(program: Program, bindings=None, seed: int = 1234) -> Case:
    if bindings is None:
        bindings = [{s: n for s in program.symbols} for n in (4, 7, 2)]
    return Case(program=program, bindings=tuple(bindings), input_seed=seed)
