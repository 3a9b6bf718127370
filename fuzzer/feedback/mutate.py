"""Mutations: a new case from one in the pool, by a small edit of its IR.

A mutation keeps most of what made its parent reach something rare and changes one
thing: a statement more, less or different, a view written through, a size, a
binding or a mark, the program's mode, or another program spliced in.  Every
mutant is checked by the IR (``Case.validate``) and discarded at once when it breaks
a rule, so a mutant is as legal as a generated program; a mutation that finds
nothing to change returns None.  Each one draws from the ``random.Random`` it is
given and nothing else, so a mutant is a pure function of its parent, its donor and
the seed of that rng.

Statements are grown with the generator's own drafts (``generate.draft_at``): a new
statement sees exactly the values, dims and storage roots a generated one would at
that point, and takes value names and call sites past any the program uses.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable
from dataclasses import dataclass

from fuzzer.limits import FEEDBACK, GEN, GenLimits
from fuzzer.program import forms, generate, sizes, sources
from fuzzer.program.attrs import SITE_KEYS
from fuzzer.program.custom_ops import MUTATING
from fuzzer.program.form_draw import CATEGORY_WEIGHTS, FormDraw
from fuzzer.program.form_record import INPLACE, VIEW, Illegal
from fuzzer.program.generate import BUILTIN, OpSet
from fuzzer.program.ir import DTYPES, MARKS, Case, Input, InvalidProgram, Mode, Program, Stmt
from fuzzer.reduce.edits import remove_statements



@dataclass(frozen=True)
class Context:
    """What a mutation may draw on beyond its parent."""

    #: the features the campaign has on: a mutant may bring in their forms and modes
    on: frozenset = frozenset()
    ops: OpSet = BUILTIN
    #: another case of the pool, for a splice
    donor: Case | None = None
    limits: GenLimits = GEN


def _with(case: Case, **changes) -> Case:
    return dataclasses.replace(case, program=dataclasses.replace(case.program, **changes))


def _grow(case: Case, rng: random.Random, ctx: Context, categories: tuple[str, ...],
          first: Callable | None = None, keep: Callable | None = None) -> tuple[Case, int, Stmt] | None:
    """Insert one statement of a form from ``categories`` at a random point; ``first``
    picks its first operand from the draft (None: the generator's draw); ``keep``: only
    the forms it accepts."""
    program = case.program
    k = rng.randrange(len(program.body) + 1)
    draft = generate.draft_at(program, k, rng, ctx.limits)
    table = generate.forms_by_category(ctx.on | frozenset(program.features()), ctx.ops)
    if keep is not None:
        table = {c: [f for f in fs if keep(f)] for c, fs in table.items()}
    draw_form = FormDraw.of(table, categories)
    if not draw_form.categories:
        return None
    for _ in range(FEEDBACK.attempts):
        form = draw_form(rng)
        operand = first(draft) if first is not None else None
        stmt = generate.propose(form, draft, operand)
        if stmt is not None:
            return _with(case, body=program.body[:k] + (stmt,) + program.body[k:]), k, stmt
    return None


def _live(case: Case, stmt: Stmt, rng: random.Random, share: float = 0.5) -> Case:
    """Return the new statement's value with chance ``share`` (else it is dead: a
    chance for dead-code elimination)."""
    if stmt.out is None or rng.random() >= share or len(case.program.outputs) >= FEEDBACK.max_outputs:
        return case
    return _with(case, outputs=case.program.outputs + (stmt.out,))


def insert(case: Case, rng: random.Random, ctx: Context) -> Case | None:
    """A new statement of any category, anywhere."""
    grown = _grow(case, rng, ctx, tuple(CATEGORY_WEIGHTS))
    return None if grown is None else _live(grown[0], grown[2], rng)


def delete(case: Case, rng: random.Random, ctx: Context) -> Case | None:
    """One statement less, with whatever reads what it defined."""
    body = case.program.body
    if len(body) < 2:
        return None
    return remove_statements(case, {rng.randrange(len(body))})


def swap(case: Case, rng: random.Random, ctx: Context) -> Case | None:
    """A statement's form swapped for another of the same typing: the same operands,
    a result of the same dims (or none, where it had none)."""
    program = case.program
    if not program.body:
        return None
    k = rng.randrange(len(program.body))
    old = program.body[k]
    draft = generate.draft_at(program, k, rng, ctx.limits)
    dims = [draft.dims[a] for a in old.args]
    want = forms.form(old.form).infer(dims, old.attrs, program.sym_min)
    on = ctx.on | frozenset(program.features())
    others = [f for fs in generate.forms_by_category(on, ctx.ops).values() for f in fs
              if f.name != old.form and f.arity == len(old.args) and f.sites == 1]
    rng.shuffle(others)
    for form in others[:FEEDBACK.attempts * 2]:
        draft.next_site = max(draft.next_site, 1 + max((x for s in program.body for x in s.sites), default=-1))
        stmt = generate.propose(form, draft, old.args[0] if old.args else None)
        if stmt is None or stmt.args != old.args:
            continue
        try:
            out = form.infer(dims, stmt.attrs, program.sym_min)
        except Illegal:
            continue
        if out != want:
            continue
        new = Stmt(stmt.form, stmt.args, old.out, dict(stmt.attrs))
        return _with(case, body=program.body[:k] + (new,) + program.body[k + 1:])
    return None


def write(case: Case, rng: random.Random, ctx: Context) -> Case | None:
    """An in-place write (an aten one or a mutating custom op) to a value, anywhere: a
    call that writes (not a mutating op's call that writes nothing, ``s_opt_none``)."""
    grown = _grow(case, rng, ctx, (INPLACE, MUTATING), keep=lambda f: bool(f.mutates))
    return None if grown is None else grown[0]


def view_write(case: Case, rng: random.Random, ctx: Context) -> Case | None:
    """A view of a value, and a write through it right after: the write must reach the
    base (and everything else that views it)."""
    grown = _grow(case, rng, ctx, (VIEW,))
    if grown is None:
        return None
    viewed, k, view = grown
    if view.out is None:
        return None
    draft = generate.draft_at(viewed.program, k + 1, rng, ctx.limits)
    table = generate.forms_by_category(ctx.on | frozenset(viewed.program.features()), ctx.ops)
    writers = [f for c in (INPLACE, MUTATING) for f in table.get(c, ()) if 0 in f.mutates]
    rng.shuffle(writers)
    for form in writers[:FEEDBACK.attempts]:
        stmt = generate.propose(form, draft, view.out)
        if stmt is not None:
            body = viewed.program.body
            return _with(viewed, body=body[:k + 1] + (stmt,) + body[k + 1:])
    return None


def resize(case: Case, rng: random.Random, ctx: Context) -> Case | None:
    """A size, a binding or a symbol's least size changed: one symbol's value in one
    binding, a binding moved first (the first binding is the one compiled dynamically),
    a new binding, or a symbol allowed to be smaller or made larger."""
    program, bindings = case.program, list(case.bindings)
    choice = rng.randrange(4)
    sym = rng.choice(program.symbols)
    if choice == 0:
        i = rng.randrange(len(bindings))
        value = max(program.sym_min[sym], rng.choice(FEEDBACK.sizes))
        bindings[i] = {**bindings[i], sym: value}
    elif choice == 1 and len(bindings) > 1:
        bindings.insert(0, bindings.pop(rng.randrange(1, len(bindings))))
    elif choice == 2:
        bindings.append({s: max(program.sym_min[s], rng.choice(FEEDBACK.sizes)) for s in program.symbols})
    else:
        low = rng.choice(tuple(m for m in (0, 1, 2) if m != program.sym_min[sym]))
        sym_min = {**program.sym_min, sym: low}
        bindings = [{**b, sym: max(b[sym], low)} for b in bindings]
        case = _with(case, sym_min=sym_min)
    unique = []
    for b in bindings:
        if b not in unique:
            unique.append(b)
    return dataclasses.replace(case, bindings=tuple(unique))


def _allowed_marks(program: Program) -> tuple[str, ...]:
    # the marks an eager run of the body cannot take (a scan's, a torch.cond's;
    # see ``forms.mark_substitutes``)
    swaps = forms.mark_substitutes(program.body)
    return tuple(m for m in MARKS if m not in swaps)


def remark(case: Case, rng: random.Random, ctx: Context) -> Case | None:
    """A mark added to an input dim, changed, or taken away; or the dynamic mode flipped."""
    program, mode = case.program, case.program.mode
    dims = [(i.name, k) for i in program.inputs for k in range(len(i.dims))]
    marked = {(n, k): how for n, k, how in mode.marks}
    roll = rng.randrange(3)
    if roll == 0 or not dims:
        new = dataclasses.replace(mode, dynamic="auto" if mode.dynamic == "true" else "true")
    elif roll == 1 and marked:
        gone = rng.choice(sorted(marked))
        new = dataclasses.replace(mode, marks=tuple(m for m in mode.marks if (m[0], m[1]) != gone))
    else:
        n, k = rng.choice(dims)
        how = rng.choice(_allowed_marks(program))
        kept = tuple(m for m in mode.marks if (m[0], m[1]) != (n, k))
        new = dataclasses.replace(mode, marks=kept + ((n, k, how),))
    return _with(case, mode=new)


def _strip_no_grad(body: tuple[Stmt, ...]) -> tuple[Stmt, ...]:
    return tuple(Stmt(s.form, s.args, s.out, {k: v for k, v in s.attrs.items() if k != "no_grad"})
                 for s in body)


def remode(case: Case, rng: random.Random, ctx: Context) -> Case | None:
    """The program's mode toggled: its dtype, gradients taken or not, an input strided
    or not, or a graph break asked for between two statements."""
    program, mode = case.program, case.program.mode
    roll = rng.randrange(4)
    if roll == 0:
        return _with(case, mode=dataclasses.replace(mode, dtype=rng.choice([d for d in DTYPES if d != mode.dtype])))
    if roll == 1:
        if mode.grad:
            return _with(case, mode=dataclasses.replace(mode, grad=False), body=_strip_no_grad(program.body))
        return _with(case, mode=dataclasses.replace(mode, grad=True))
    if roll == 2:
        own = [i.name for i in program.inputs if i.name not in dict(mode.aliases)]
        name = rng.choice(own)
        strided = tuple(n for n in mode.strided if n != name) if name in mode.strided else mode.strided + (name,)
        return _with(case, mode=dataclasses.replace(mode, strided=strided))
    k = rng.randrange(len(program.body) + 1)
    gb = Stmt("graph_break", (), None, {})
    return _with(case, body=program.body[:k] + (gb,) + program.body[k:])


def _renamed(donor: Program, prefix_values: int, prefix_sites: int, symbols: dict, inputs: dict) -> tuple:
    """The donor's body with its values and sites moved past the parent's, its inputs
    and symbols renamed as given."""
    def value(name: str) -> str:
        if name in inputs:
            return inputs[name]
        return f"{name[0]}{int(name[1:]) + prefix_values}"

    body = []
    for s in donor.body:
        attrs = dict(s.attrs)
        for key in SITE_KEYS:
            if key in attrs:
                attrs[key] += prefix_sites
        if isinstance(attrs.get("size"), str):
            attrs["size"] = value(attrs["size"])
        if isinstance(attrs.get("base"), list):  # an as_strided's root dims (``strided_forms.BOX_KEYS``)
            attrs["base"] = [sizes.rename(d, symbols) for d in attrs["base"]]
        body.append(Stmt(s.form, tuple(value(a) for a in s.args), None if s.out is None else value(s.out), attrs))
    return tuple(body), value


def _next_number(names) -> int:
    """One past the largest number in names like ``s2`` or ``x3``."""
    return 1 + max((int(n[1:]) for n in names if n[1:].isdigit()), default=-1)


def splice(case: Case, rng: random.Random, ctx: Context) -> Case | None:
    """Another pool program's statements put into this one at a random point: over
    inputs of their own, or (half the time) over this program's sizes and, where an
    input has the same dims, its very inputs."""
    donor = ctx.donor
    if donor is None:
        return None
    a, b = case.program, donor.program
    if a.mode.grad != b.mode.grad and any("no_grad" in s.attrs for s in b.body):
        return None
    share = rng.random() < 0.5
    if share:
        symbols = {s: a.symbols[i % len(a.symbols)] for i, s in enumerate(b.symbols)}
    else:
        first = _next_number(a.symbols)
        symbols = {s: f"s{first + i}" for i, s in enumerate(b.symbols)}
    inputs, new_inputs = _donor_inputs(a, b, symbols, share)
    values = _next_number([n for s in a.body for n in (s.out, s.data_size) if isinstance(n, str)])
    sites = [x for s in a.body for x in s.sites]
    body, value = _renamed(b, values, 1 + max(sites, default=-1), symbols, inputs)
    k = rng.randrange(len(a.body) + 1)
    all_symbols = tuple(dict.fromkeys(a.symbols + tuple(symbols.values())))
    sym_min = dict(a.sym_min)
    for old, new in symbols.items():
        sym_min[new] = max(sym_min.get(new, 0), b.sym_min[old])
    mode = _spliced_mode(a, b, body, {i.name: inputs[i.name] for i in b.inputs})
    program = Program(all_symbols, sym_min, a.inputs + tuple(new_inputs), a.body[:k] + body + a.body[k:],
                      a.outputs + tuple(value(o) for o in b.outputs), mode, tuple(dict.fromkeys(a.imports + b.imports)))
    return Case(program, _spliced_bindings(case, donor, symbols, sym_min), case.input_seed)


def _donor_inputs(a: Program, b: Program, symbols: dict[str, str], share: bool) -> tuple[dict[str, str], list[Input]]:
    """(the donor ``b``'s input names as the splice calls them, the inputs it adds to
    ``a``): with ``share``, an input of ``a`` of the same dims and dtype stands for one of
    the donor's (not the base of an alias); the rest are new, numbered after ``a``'s."""
    first_input = _next_number([i.name for i in a.inputs])
    taken = {(i.dims, i.dtype): i.name for i in a.inputs}
    inputs, new_inputs = {}, []
    for inp in b.inputs:
        d = tuple(sizes.rename(dim, symbols) for dim in inp.dims)
        if share and (d, inp.dtype) in taken and inp.name not in dict(b.mode.aliases).values():
            inputs[inp.name] = taken[(d, inp.dtype)]
        else:
            inputs[inp.name] = f"x{first_input + len(new_inputs)}"
            new_inputs.append(Input(inputs[inp.name], d, inp.dtype))
    return inputs, new_inputs


def _spliced_mode(a: Program, b: Program, body: tuple[Stmt, ...], renamed: dict[str, str]) -> Mode:
    """``a``'s mode with the donor ``b``'s marks, strided inputs and aliases of the inputs
    it adds (``renamed``: the donor's input names as the splice calls them); an unbacked
    mark made dynamic where the spliced body is one eager traces."""
    own = {x.name for x in a.inputs}
    marks = a.mode.marks + tuple((renamed[n], d, how) for n, d, how in b.mode.marks if renamed[n] not in own)
    if forms.eager_traces(a.body + body):
        marks = tuple((n, d, "dynamic" if how == "unbacked" else how) for n, d, how in marks)
    return dataclasses.replace(
        a.mode, marks=marks,
        strided=a.mode.strided + tuple(renamed[n] for n in b.mode.strided if renamed[n] not in own),
        aliases=a.mode.aliases + tuple((renamed[n], renamed[m]) for n, m in b.mode.aliases if renamed[n] not in own))


def _spliced_bindings(case: Case, donor: Case, symbols: dict[str, str], sym_min: dict[str, int]) -> tuple:
    """The bindings of the spliced case: call by call, this case's with the donor's sizes
    of the symbols it adds (at least their minimum), each distinct binding once."""
    bindings = []
    for i in range(max(len(case.bindings), len(donor.bindings))):
        mine = dict(case.bindings[min(i, len(case.bindings) - 1)])
        theirs = donor.bindings[min(i, len(donor.bindings) - 1)]
        for old, new in symbols.items():
            mine.setdefault(new, theirs[old])
            mine[new] = max(mine[new], sym_min[new])
        bindings.append(mine)
    unique = []
    for binding in bindings:
        if binding not in unique:
            unique.append(binding)
    return tuple(unique)


@dataclass(frozen=True)
class Mutation:
    name: str
    apply: Callable[[Case, random.Random, Context], Case | None]
    #: whether it needs a second case of the pool
    needs_donor: bool = False

    @property
    def doc(self) -> str:
        return (self.apply.__doc__ or "").strip().splitlines()[0]


MUTATIONS: dict[str, Mutation] = {m.name: m for m in (
    Mutation("insert", insert),
    Mutation("delete", delete),
    Mutation("swap", swap),
    Mutation("write", write),
    Mutation("view-write", view_write),
    Mutation("resize", resize),
    Mutation("remark", remark),
    Mutation("remode", remode),
    Mutation("splice", splice, needs_donor=True),
)}


def within_limits(case: Case) -> bool:
    p = case.program
    return (len(p.body) <= FEEDBACK.max_statements and len(p.inputs) <= FEEDBACK.max_inputs
            and len(p.symbols) <= FEEDBACK.max_symbols and len(p.outputs) <= FEEDBACK.max_outputs)


def mutate(name: str, case: Case, rng: random.Random, ctx: Context) -> Case | None:
    """The mutant of ``case`` by mutation ``name``, or None when it has nothing to
    change or its result breaks a rule of the IR (discarded at once)."""
    try:
        mutant = MUTATIONS[name].apply(case, rng, ctx)
    except (InvalidProgram, Illegal):
        return None
    if mutant is None or mutant == case or not within_limits(mutant):
        return None
    program = mutant.program
    imports = sources.imports_for(program.body, ctx.ops.imports, program.imports)
    if imports != program.imports:  # it brought a user's op in: a fresh process must load its module
        mutant = _with(mutant, imports=imports)
    try:
        mutant.validate()
    except InvalidProgram:
        return None
    return mutant
