"""Random program generation, deterministic in (seed, dcefuzz version).

The generator grows a program one statement at a time.  It keeps every value's
symbolic dims and storage root (via :func:`fuzzer.program.ir.check`'s rules, applied
incrementally through each form's ``infer``), so whatever it emits is legal for
every binding of the symbols.  Draws are biased toward what the contract is about:
custom ops of every kind, views of inputs with symbolic bounds, writes to inputs,
to views and to dead intermediates, and results left unused.
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass, field

from fuzzer import __version__
from fuzzer.limits import GEN, GenLimits
from fuzzer.program import forms
from fuzzer.program.custom_ops import EFFECTFUL, MUTATING, PURE
from fuzzer.program.ir import Case, Input, Program, Stmt, check
from fuzzer.program.sizes import Dims

#: Relative weights of statement categories.
CATEGORY_WEIGHTS = {
    PURE: 4,
    MUTATING: 4,
    EFFECTFUL: 3,
    forms.ATEN: 4,
    forms.VIEW: 3,
    forms.INPLACE: 3,
}

PRIMES = (3, 5, 7, 11, 13)


def derive_seed(*parts) -> int:
    """A 63-bit seed from any parts: stable across processes and platforms."""
    text = ":".join(str(p) for p in parts)
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big") >> 1


def program_seed(campaign_seed: int, index: int) -> int:
    """Seed of program ``index`` of a campaign: a pure function of both."""
    return derive_seed("program", campaign_seed, index)


@dataclass
class _State:
    rng: random.Random
    sym_min: dict[str, int]
    dims: dict[str, Dims] = field(default_factory=dict)
    root: dict[str, str] = field(default_factory=dict)
    order: list[str] = field(default_factory=list)
    body: list[Stmt] = field(default_factory=list)
    next_value: int = 0
    next_site: int = 0
    max_rank: int = GEN.max_rank

    def pick(self, candidates: list[str]) -> str:
        """Prefer recent values, so statements chain rather than all read inputs."""
        weights = [1 + i for i in range(len(candidates))]
        return self.rng.choices(candidates, weights=weights)[0]


def _attrs_for(form: forms.Form, st: _State, dims0: Dims) -> dict:
    attrs: dict = {}
    if form.name in ("sum", "head", "narrow"):
        if not dims0:
            raise forms.Illegal("needs rank >= 1")
        attrs["dim"] = st.rng.randrange(len(dims0))
    if form.name in ("scale", "mul_"):
        attrs["c"] = st.rng.choice(forms.CONSTANTS)
    if form.name == "unary":
        attrs["fn"] = st.rng.choice(forms.UNARY_FUNCTIONS)
    return attrs


def _propose(form: forms.Form, st: _State) -> Stmt | None:
    """One attempt at a legal statement of ``form`` over the current values."""
    first = st.pick(st.order)
    args = [first]
    if form.arity == 2:
        want = st.dims[first]
        def fits(v: str) -> bool:
            d = st.dims[v]
            if form.name in ("add", "mul", "add_", "copy_"):
                ok = tuple(want[len(want) - len(d):]) == d and len(d) <= len(want)
            else:
                ok = d == want
            # a written operand never shares storage with the other operand
            return ok and (not form.mutates or st.root[v] != st.root[first])
        others = [v for v in st.order if v != first and fits(v)]
        if not others:
            return None
        args.append(st.pick(others))
    try:
        attrs = _attrs_for(form, st, st.dims[first])
        if form.is_custom:
            attrs["site"] = st.next_site
        out_dims = form.infer([st.dims[a] for a in args], attrs, st.sym_min)
    except forms.Illegal:
        return None
    if out_dims is not None and len(out_dims) > st.max_rank:
        return None
    out = None
    if out_dims is not None:
        out = f"v{st.next_value}"
    return Stmt(form.name, tuple(args), out, attrs)


def _commit(stmt: Stmt, st: _State) -> None:
    form = forms.form(stmt.form)
    st.body.append(stmt)
    if form.is_custom:
        st.next_site += 1
    if stmt.out is not None:
        st.next_value += 1
        st.dims[stmt.out] = form.infer([st.dims[a] for a in stmt.args], stmt.attrs, st.sym_min)
        st.root[stmt.out] = st.root[stmt.args[0]] if form.is_view else stmt.out
        st.order.append(stmt.out)


def _forms_by_category() -> dict[str, list[forms.Form]]:
    table: dict[str, list[forms.Form]] = {}
    for f in forms.FORMS.values():
        table.setdefault(f.category, []).append(f)
    return table


_BY_CATEGORY = _forms_by_category()


def generate(seed: int, weights: dict | None = None, limits: GenLimits = GEN) -> Case:
    """The case for ``seed``: same seed and version, same program, bindings, inputs.

    ``weights`` (of statement categories, default ``CATEGORY_WEIGHTS``) and ``limits``
    let another mode draw its own kind of program (``fuzzer.cache``: smaller ones,
    without effects), deterministically too.
    """
    rng = random.Random(f"dcefuzz-{__version__}-{seed}")
    n_symbols = rng.randint(1, limits.max_symbols)
    symbols = tuple(f"s{i}" for i in range(n_symbols))
    sym_min = {s: rng.choice(limits.symbol_minimums) for s in symbols}
    st = _State(rng=rng, sym_min=sym_min, max_rank=limits.max_rank)

    inputs: list[Input] = []
    n_inputs = rng.randint(1, limits.max_inputs)
    unused = list(symbols)
    shapes_drawn: list[list[str]] = []
    for _ in range(n_inputs):
        rank = rng.randint(1, limits.max_rank)
        # use every symbol once before reusing, so each one is readable from a shape
        shapes_drawn.append([unused.pop(0) if unused else rng.choice(symbols) for _ in range(rank)])
    shapes_drawn.extend([s] for s in unused)
    for i, dims in enumerate(shapes_drawn):
        inp = Input(f"x{i}", tuple(dims))
        inputs.append(inp)
        st.dims[inp.name] = inp.dims
        st.root[inp.name] = inp.name
        st.order.append(inp.name)

    target = rng.randint(limits.min_statements, limits.max_statements)
    table = CATEGORY_WEIGHTS if weights is None else weights
    categories = [c for c in CATEGORY_WEIGHTS if table.get(c)]
    weights = [table[c] for c in categories]
    attempts = 0
    while len(st.body) < target and attempts < target * limits.attempts_per_statement:
        attempts += 1
        category = rng.choices(categories, weights=weights)[0]
        form = rng.choice(_BY_CATEGORY[category])
        stmt = _propose(form, st)
        if stmt is not None:
            _commit(stmt, st)

    produced = [s.out for s in st.body if s.out is not None]
    n_out = min(len(produced), rng.randint(0, limits.max_outputs))
    outputs = tuple(sorted(rng.sample(produced, n_out), key=produced.index))
    program = Program(symbols=symbols, sym_min=sym_min, inputs=tuple(inputs),
                      body=tuple(st.body), outputs=outputs)
    check(program)
    return Case(program=program, bindings=_bindings(rng, symbols, sym_min, limits),
                input_seed=derive_seed("inputs", seed))


def _bindings(rng: random.Random, symbols, sym_min, limits: GenLimits = GEN) -> tuple[dict, ...]:
    """Typical sizes first (that compile is the dynamic one), then edges and primes."""
    def draw(pool):
        return {s: max(sym_min[s], rng.choice(pool)) for s in symbols}

    out = [
        draw(limits.typical_sizes),
        draw(PRIMES),
        draw((0, 1, 2)),
        {s: sym_min[s] for s in symbols},
    ]
    unique: list[dict] = []
    for b in out:
        if b not in unique:
            unique.append(b)
    for _ in range(limits.binding_draws):
        if len(unique) >= limits.min_bindings:
            break
        b = draw(PRIMES + limits.typical_sizes)
        if b not in unique:
            unique.append(b)
    return tuple(unique)
