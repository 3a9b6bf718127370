"""Random program generation, deterministic in (seed, dcefuzz version).

The generator grows a program one statement at a time.  It keeps every value's
symbolic dims and storage root (via :func:`fuzzer.program.ir.check`'s rules, applied
incrementally through each form's ``infer``), so whatever it emits is legal for
every binding of the symbols.  Draws are biased toward what the contract is about:
custom ops of every kind, views of inputs with symbolic bounds, writes to inputs,
to views and to dead intermediates, and results left unused.
"""

from __future__ import annotations

import dataclasses
import hashlib
import random
from dataclasses import dataclass, field

from fuzzer import __version__
from fuzzer.limits import GEN, GenLimits
from fuzzer.program import features as feats
from fuzzer.program import (
    bindings,
    buffers,
    drawn_inputs,
    drawn_mode,
    follow_ups,
    forms,
    layouts,
    objects,
    sources,
    storage,
    strided_forms,
    windows,
)
from fuzzer.program.dtypes import SUBCLASS, is_exact, refused_by
from fuzzer.program.exact import ExactRules
from fuzzer.program.form_draw import FormDraw
from fuzzer.program.form_record import TRANSFORM, USED_BY, Form, Illegal
from fuzzer.program.func_grad import grad_rules
from fuzzer.program.grad import GradRules
from fuzzer.program.ir import Case, Input, Program, Stmt, check, result_dtype
from fuzzer.program.sizes import Dims

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
    dims: dict[str, sizes.Dims] = field(default_factory=dict)
    root: dict[str, str] = field(default_factory=dict)
    order: list[str] = field(default_factory=list)
    body: list[Stmt] = field(default_factory=list)
    next_value: int = 0
    next_site: int = 0
    max_rank: int = GEN.max_rank
    #: what autograd allows, when the program takes gradients
    grad: GradRules | None = None
    inputs: frozenset = frozenset()
    #: each value's fixed dtype (None: the program's own), and which values are exact
    dtypes: dict[str, str | None] = field(default_factory=dict)
    exact: ExactRules = field(default_factory=ExactRules)
    #: footprints, and whether a write may read a disjoint part of its storage (``features.writes_beside``)
    mem: storage.Tracker = field(default_factory=storage.Tracker)

    def typed(self, candidates, dtype: str | None) -> list[str]:
        return [v for v in candidates if self.dtypes.get(v) == dtype]

    def pick(self, candidates: list[str]) -> str:
        """Prefer recent values, so statements chain rather than all read inputs."""
        weights = [1 + i for i in range(len(candidates))]
        return self.rng.choices(candidates, weights=weights)[0]


@dataclass(frozen=True)
class OpSet:
    """Which custom ops a program may call: dcefuzz's own, a user's (``fuzzer.user``:
    their qualified names, and the modules that register them), or both."""

    builtin: bool = True
    user: tuple[str, ...] = ()
    #: (module, folder) of each user module, recorded in the program (``Program.imports``)
    imports: tuple[tuple[str, str], ...] = ()
    #: what the user ops' declaration check changed in how programs call them (the
    #: scalar values they fail on dropped, a backward that fails off), as
    #: ``fuzzer.user.library.adjustment`` records: every process that draws programs
    #: applies them after loading the modules
    adjusted: tuple = ()
    #: the user ops that refuse empty tensors: a program that may call one keeps every
    #: size at 1 or more
    nonempty: tuple[str, ...] = ()

    def admits(self, form: Form) -> bool:
        return form.custom is None or (form.custom in self.user if not form.site_traced else self.builtin)


BUILTIN = OpSet()


def _attrs_for(form: Form, st: _State, dims0: Dims) -> dict:
    """A new statement's attributes: the form's own (``Form.draw``), then ``no_grad``."""
    attrs = form.draw(st.rng, dims0, f"u{st.next_value}") if form.draw is not None else {}
    if st.grad is not None and st.rng.random() < GEN.no_grad_share:
        attrs["no_grad"] = True
    return attrs


def propose(form: Form, st: _State, first: str | None = None) -> Stmt | None:
    """One attempt at a legal statement of ``form`` over the current values of ``st``
    (``first``: its first operand, where a caller chooses it; the generator draws it)."""
    if form.arity == 0:
        return Stmt(form.name, (), None, {})
    if form.once and any(s.form == form.name for s in st.body):
        return None
    if st.grad is not None and form.fixes_dtypes:
        return None
    if form.fits is not None:
        args = _operands(form, st, first)
        if args is None:
            return None
        first = args[0]
    else:
        exact = [v for v in st.typed(st.order, None) if not form.exact_operands or st.exact.is_exact(v, st.root)]
        typed = st.mem.operands(form, st.root, exact)
        if (first is None and not typed) or (first is not None and st.dtypes.get(first) is not None):
            return None
        first = st.pick(typed) if first is None else first
        args = [first]
    if form.arity == 2 and form.fits is None:
        want = st.dims[first]
        def fits(v: str) -> bool:
            d = st.dims[v]
            if form.broadcasts:
                ok = tuple(want[len(want) - len(d):]) == d and len(d) <= len(want)
            else:
                ok = d == want
            return (ok and (not form.mutates or st.mem.apart(st.root, v, first, st.sym_min))
                    and st.mem.swaps.takes(form, 1, v, [first], st.root, st.inputs))
        others = [v for v in exact if v != first and fits(v)]
        if not others:
            return None
        args.append(st.pick(st.mem.prefer(st.rng, st.root, first, others, form.mutates)))
    if storage.layout_refusal(form, first, st.root, st.mem.dense, st.mem.prints) is not None:
        return None
    try:
        attrs = _attrs_for(form, st, st.dims[st.root[first] if form.dense_root else first])
        if form.is_custom:
            attrs["site"] = st.next_site
        if form.sites == 2:
            attrs["site2"] = st.next_site + 1
        out_dims = form.infer([st.dims[a] for a in args], attrs, st.sym_min)
    except Illegal:
        return None
    if out_dims is not None and len(out_dims) > st.max_rank:
        return None
    out = f"v{st.next_value}" if out_dims is not None else None
    stmt = Stmt(form.name, tuple(args), out, attrs)
    try:
        st.exact.check(stmt, form, st.root, {a for a in args if is_exact(st.dtypes.get(a))})
        st.mem.swaps.check(stmt, form, st.root, st.inputs)
    except Illegal:
        return None
    return stmt if st.mem.writable(stmt, form, st.root, st.inputs) and _grad_admits(stmt, form, st) else None


def _operands(form: Form, st: _State, first: str | None = None) -> list[str] | None:
    """Operands for a form that says which fit (a user's op, an input's swap), picked one
    at a time: each must fit with those before it, a written operand shares storage with
    no other, and a swap takes what it may (``first``: the first one, chosen by a mutation)."""
    args: list[str] = []
    if first is not None:
        if not form.fits([st.dims[first]]) or st.dtypes.get(first) != form.operand_dtype(0):
            return None
        args.append(first)
    for k in range(len(args), form.arity):
        def ok(v: str) -> bool:
            if st.dtypes.get(v) != form.operand_dtype(k) or not form.fits([st.dims[a] for a in args] + [st.dims[v]]):
                return False
            if (form.exact_result or form.exact_operands) and not st.exact.is_exact(v, st.root):
                return False  # it makes a fixed dtype, or rounds (``fuzzer.program.exact``)
            return all(st.mem.apart(st.root, v, a, st.sym_min) for j, a in enumerate(args) if j in form.mutates
                       or k in form.mutates) and st.mem.swaps.takes(form, k, v, args, st.root, st.inputs)
        candidates = [v for v in st.order if ok(v)]
        if not candidates:
            return None
        args.append(st.pick(candidates))
    return args


def _grad_admits(stmt: Stmt, form: Form, st: _State) -> bool:
    """Autograd allows the statement (always, when the program takes no gradients);
    when it does, the statement is recorded as committed."""
    if st.grad is None:
        return True
    try:
        st.grad.admit(stmt, form, st.root, st.inputs)
    except Illegal:
        return False
    return True


def _repeat(stmt: Stmt, st: _State) -> Stmt | None:
    """The identical call of a custom statement just committed: the same operands and
    site, a new result."""
    form = forms.form(stmt.form)
    if "size" in stmt.attrs or form.once:  # a size from data is one symbol per call
        return None
    out = f"v{st.next_value}" if stmt.out is not None else None
    again = Stmt(stmt.form, stmt.args, out, dict(stmt.attrs))
    return again if _grad_admits(again, form, st) else None


def _own_dtype(stmt: Stmt, st: _State) -> bool:
    """Whether a transform's ``stmt`` made a value of a dtype of its own (an autocast rule's):
    only a transform may read it, and it is returned, its dtype showing the cast compiled code kept."""
    return forms.form(stmt.form).drawn_as == TRANSFORM and stmt.out is not None and st.dtypes.get(stmt.out) is not None


def _commit(stmt: Stmt, st: _State) -> None:
    form = forms.form(stmt.form)
    st.body.append(stmt)
    if form.is_custom and st.next_site in stmt.sites:
        st.next_site += len(stmt.sites)
    st.exact.record(stmt, form, st.root)
    st.mem.swaps.record(stmt, form, st.root)
    if stmt.out is not None:
        st.next_value += 1
        st.dims[stmt.out] = form.infer([st.dims[a] for a in stmt.args], stmt.attrs, st.sym_min)
        st.root[stmt.out] = st.root[stmt.args[0]] if form.aliases_operand else stmt.out
        st.dtypes[stmt.out] = result_dtype(form, stmt, st.dtypes)
        st.mem.add_result(stmt, form, st.dims[stmt.out], st.root)
        st.order.append(stmt.out)
        if form.consumes:  # a swapped value is used no more, nor the views of its old storage but to read them
            st.order = [v for v in st.order if st.mem.swaps.usable(v, st.root)]
    unreadable = len(st.mem.late.unreadable)
    st.mem.late.record(stmt, form, st.root, st.inputs)
    if len(st.mem.late.unreadable) > unreadable:  # a window written through its as_strided: its storage's other inputs unread
        st.order = [v for v in st.order if v not in st.mem.late.unreadable]


def forms_by_category(on: frozenset = frozenset(), ops: OpSet = BUILTIN) -> dict[str, list[Form]]:
    """The forms a program with features ``on`` and custom ops ``ops`` may draw, by category."""
    table: dict[str, list[Form]] = {}
    for f in forms.FORMS.values():
        if (f.feature is None or f.feature in on) and ops.admits(f):
            table.setdefault(f.drawn_as or f.category, []).append(f)
    return {category: _users_share(listed, ops) for category, listed in table.items()}


def _users_share(listed: list[Form], ops: OpSet) -> list[Form]:
    """``listed`` with a user's forms (``--ops``) repeated until they take about
    ``GenLimits.user_form_share`` of the category's draws (a form is drawn by its place
    in the list): one op among dozens of dcefuzz's own would be drawn in few programs."""
    users = [f for f in listed if f.custom in ops.user]
    others = len(listed) - len(users)
    if not users or not others:
        return listed
    share = GEN.user_form_share
    times = max(1, round(share * others / ((1 - share) * len(users))))
    return [f for f in listed if f.custom not in ops.user] + users * times


# ------------------------------------------------------------------ part of a program

def draft_at(program: Program, k: int, rng: random.Random, limits: GenLimits = GEN) -> _State:
    """The generator's state after the first ``k`` statements of ``program``, as a
    statement drawn there sees it (``propose``; the tests of what a form is offered):
    every value defined by then with its dims and storage root, what autograd allows, and
    value names and call sites past every one the program uses, so nothing new clashes
    with the statements that follow."""
    prefix = Program(program.symbols, program.sym_min, program.inputs, program.body[:k], (), program.mode,
                     program.imports)
    typing = check(prefix)
    st = _State(rng=rng, sym_min=dict(program.sym_min), max_rank=limits.max_rank,
                grad=grad_rules(program.mode.func_grad) if program.mode.grad else None)
    st.dims, st.root, st.dtypes = dict(typing.dims), dict(typing.root), dict(typing.dtypes)
    st.mem = feats.tracker(program.features(), typing.prints, typing.dense, typing.late)
    for stmt in prefix.body:
        st.exact.record(stmt, forms.form(stmt.form), st.root)
        st.mem.swaps.record(stmt, forms.form(stmt.form), st.root)
    st.order = [v for v in [i.name for i in program.inputs] + [s.out for s in prefix.body if s.out is not None]
                if st.mem.swaps.usable(v, st.root) and v not in {p for _, p in program.mode.pairs}
                and v not in st.mem.late.unreadable]
    st.inputs = frozenset(i.name for i in program.inputs)
    for name in st.inputs if st.grad is not None else ():
        st.grad.add_input(name)
    for stmt in prefix.body if st.grad is not None else ():
        st.grad.admit(stmt, forms.form(stmt.form), st.root, st.inputs)
    numbers = [int(n[1:]) for s in program.body for n in (s.out, s.data_size)
               if isinstance(n, str) and n[1:].isdigit()]
    st.next_value = 1 + max(numbers, default=-1)
    st.next_site = 1 + max((x for s in program.body for x in s.sites), default=-1)
    return st


def generate(seed: int, weights: dict | None = None, limits: GenLimits = GEN,
             features: dict[str, float] = feats.NONE, ops: OpSet = BUILTIN) -> Case:
    """The case for ``seed``: same seed, version and features, same program, bindings
    and inputs.

    ``weights`` (of statement categories, default ``form_draw.CATEGORY_WEIGHTS``) and ``limits``
    let another mode draw its own kind of program (``fuzzer.cache``: smaller ones,
    without effects), deterministically too.  ``features`` (name -> weight, see
    ``fuzzer.program.features``) says which features the program may have, and
    ``ops`` which custom ops it may call.  One stream of draws makes it all, in this
    order: the symbols, the inputs (``drawn_inputs``), the body (:func:`_draw_body`),
    the outputs (:func:`_program_of`), the bindings.
    """
    on = feats.draw(seed, features)
    by_category = forms_by_category(on, ops)
    rng = random.Random(f"dcefuzz-{__version__}-{seed}")
    n_symbols = rng.randint(1, limits.max_symbols)
    symbols = tuple(f"s{i}" for i in range(n_symbols))
    sym_min = {s: rng.choice(limits.symbol_minimums) for s in symbols}
    if ops.nonempty:
        sym_min = {s: max(1, m) for s, m in sym_min.items()}
    st = _State(rng=rng, sym_min=sym_min, max_rank=limits.max_rank,
                grad=grad_rules(feats.FUNC_GRAD in on) if feats.AUTOGRAD in on else None,
                mem=feats.tracker(on))
    heads = drawn_inputs.draw(seed, rng, symbols, sym_min, on, sources.input_shapes(seed, ops, symbols), limits,
                              st.grad is not None)
    inputs = _add_inputs(st, heads)
    _draw_body(st, on, by_category, weights, limits, heads.state)
    program = _program_of(seed, st, on, ops, heads, inputs, limits)
    drawn = bindings.draw(rng, heads.symbols, program.sym_min, limits)
    return Case(program=program, bindings=drawn if heads.state is None else buffers.pinned(drawn, heads.state),
                input_seed=derive_seed("inputs", seed))


def _draw_body(st: _State, on: frozenset, by_category: dict, weights: dict | None, limits: GenLimits,
               state) -> None:
    """The body, statement by statement into ``st``: a form drawn, a legal statement of it
    proposed and committed, followed by the statement it asks for (an identical call, a
    use of an integer, a subclass or a cast made, a read of what it wrote or swapped, a
    view's complement), between the writes of a carried state."""
    rng = st.rng
    target = rng.randint(limits.min_statements, limits.max_statements)
    draw_form = FormDraw.of(by_category, table=weights)
    _write_state(state, buffers.STATE_WRITES[0], st)
    attempts = 0
    while len(st.body) < target and attempts < target * limits.attempts_per_statement:
        attempts += 1
        form = draw_form(rng)
        stmt = propose(form, st)
        if stmt is not None:
            _commit(stmt, st)
            again = None
            if (feats.IDENTICAL_CALLS in on and form.is_custom and len(st.body) < target
                    and rng.random() < limits.identical_call_share):
                again = _repeat(stmt, st)
            elif form.drawn_as in USED_BY and len(st.body) < target:  # a use of what it made
                again = follow_ups.use(stmt, st, by_category.get(USED_BY[form.drawn_as], ()), propose)
            elif _own_dtype(stmt, st) and len(st.body) < target and rng.random() < limits.transform_use_share:
                again = follow_ups.use(stmt, st, by_category.get(TRANSFORM, ()), propose)
            elif form.then and len(st.body) < target:  # a read of what it wrote or swapped
                again = follow_ups.then(stmt, form, st, on, propose)
            elif form.follow is not None and len(st.body) < target:  # what real code does next with it
                again = follow_ups.follow(stmt, form, st, propose)
            elif form.is_view and len(st.body) < target:  # its complement, for a write beside it
                again = strided_forms.companion(stmt, f"v{st.next_value}", rng, st.mem.overlap_rule)
                again = again if again is not None and _grad_admits(again, form, st) else None
            if again is not None:
                _commit(again, st)
    _write_state(state, buffers.STATE_WRITES[1], st)


def _program_of(seed: int, st: _State, on: frozenset, ops: OpSet, heads: drawn_inputs.DrawnInputs,
                inputs: list[Input], limits: GenLimits) -> Program:
    """The program of the body drawn over ``heads`` and ``inputs``: its outputs drawn, its
    mode, a module's buffers, sizes taken to 0 where the body allows; checked."""
    rng = st.rng
    produced = [s.out for s in st.body if s.out is not None and s.out not in st.mem.swaps.swapped]
    n_out = min(len(produced), rng.randint(0, limits.max_outputs))
    returned = set(rng.sample(produced, n_out)) | {s.out for s in st.body if _own_dtype(s, st)}
    outputs = tuple(sorted(returned, key=produced.index))
    swaps = forms.mark_substitutes(st.body)  # the marks eager cannot run the body with
    dense, written = layouts.held(st.body, st.root, forms.form)  # kept contiguous; written
    paired = {n for pair in heads.pairs for n in pair}  # handed over as a library's value is, as itself
    refused = drawn_mode.Refused(swaps or {}, refused_by(st.body))
    mode = drawn_mode.draw(seed, on, [i for i in inputs if i.name not in paired], tuple(heads.aliases), refused, dense,
                           written, heads.windows)
    program = Program(symbols=heads.symbols, sym_min=st.sym_min, inputs=tuple(inputs), body=tuple(st.body),
                      outputs=outputs, mode=objects.hold(dataclasses.replace(mode, pairs=heads.pairs), st.body, inputs, seed),
                      imports=sources.imports_for(st.body, ops.imports))
    if heads.state is not None:
        program = buffers.carried(program, heads.state)
    elif feats.MODULE_STATE in on:
        program = buffers.as_module(program, seed)
    program = objects.on_module(program, seed)
    if feats.LAYOUTS in on and not ops.nonempty and heads.state is None:  # empty wherever the body allows
        program = bindings.emptied(program, check)
    check(program)
    return program


def _write_state(state, name: str, st: _State) -> None:
    """A write of a carried state (``buffers.STATE_WRITES``), where the program has one."""
    stmt = None if state is None else propose(forms.form(name), st, first=state.name)
    if stmt is not None:
        _commit(stmt, st)


def _add_inputs(st: _State, heads: drawn_inputs.DrawnInputs) -> list[Input]:
    """The inputs ``x0, x1, ...`` of ``heads``, entered in ``st`` as values statements may read (an
    alias's or a window's root is its base; a pair is of its kind, its partner none: ``pairs``)."""
    inputs: list[Input] = []
    for i, (dims, dtype) in enumerate(zip(heads.shapes, heads.dtypes)):
        inp = Input(f"x{i}", tuple(dims), dtype)
        inputs.append(inp)
        st.dims[inp.name], st.root[inp.name], st.dtypes[inp.name] = inp.dims, inp.name, dtype
        st.mem.add_input(inp.name, inp.dims, dense=dtype is None)
        st.order.append(inp.name)
        if st.grad is not None:
            st.grad.add_input(inp.name)
    st.inputs = frozenset(i.name for i in inputs)
    for name, base in heads.aliases:
        st.root[name] = base
    windows.enter(heads.windows, st.root, st.mem.prints, st.dims)
    st.dtypes.update({name: SUBCLASS for name, _ in heads.pairs})
    st.order = [v for v in st.order if v not in {partner for _, partner in heads.pairs}]
    return inputs
