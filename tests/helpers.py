"""Small builders for hand-written programs and stand-in 'compiled' functions."""

from __future__ import annotations

from dataclasses import dataclass

from fuzzer.program.ir import Case, Input, Program, Stmt, check


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


def stays_while(rule):
    """A stand-in oracle: an effect-log divergence, on every binding, while ``rule(case)``
    holds (a pure rule of the program, no compile)."""
    from fuzzer.judge import contract

    def judge(c: Case) -> contract.Verdict:
        divs = [contract.Divergence(contract.EFFECT_LOG, b, "sequence", "reordered (..)", ("reordered",))
                for b in range(len(c.bindings))] if rule(c) else []
        return contract.Verdict(contract.OK, divs)
    return judge


@dataclass(frozen=True)
class PassRun:
    """What one run of a shrink pass did."""

    #: the simplest case at the end
    best: Case
    #: every candidate the pass offered, in order
    offered: list
    oracle_calls: int


def finding_of(case_: Case, kind: str, divergences):
    """A finding of ``kind`` on ``case_``, as a stand-in judge showed it (on the CPU,
    ``inductor`` named its backend): what a shrink starts from."""
    from fuzzer.judge.trial import Finding

    return Finding(kind, case_, list(divergences), "cpu", "inductor")


def run_pass(name: str, c: Case, judge) -> PassRun:
    """Run the shrink pass ``name`` once over ``c`` under ``judge`` (no budget)."""
    from fuzzer.judge import contract
    from fuzzer.limits import UNBOUNDED
    from fuzzer.reduce.passes.base import drive
    from fuzzer.reduce.passes.schedule import PASSES
    from fuzzer.reduce.shrinker import Shrinker

    shrinker = Shrinker(finding_of(c, contract.EFFECT_LOG, judge(c).divergences), judge=judge, budget=UNBOUNDED)
    offered: list[Case] = []

    def consider(candidate: Case) -> bool:
        offered.append(candidate)
        return shrinker.consider(candidate)

    drive(PASSES[name], consider, shrinker)
    return PassRun(shrinker.best, offered, shrinker.calls)


def is_one_minimal(case_: Case, kind: str, divergences: list, judge) -> tuple[bool, list[str]]:
    """Does removing any one statement (with what reads it) or returned value lose the
    bug?  (minimal, the removals that kept the bug): what a shrink's result is held to."""
    from fuzzer.limits import UNBOUNDED
    from fuzzer.reduce.edits import remove_statements, with_program
    from fuzzer.reduce.shrinker import Shrinker

    s = Shrinker(finding_of(case_, kind, divergences), judge=judge, budget=UNBOUNDED)
    keeps = [f"statement {n}" for n in range(len(case_.program.body))
             if s.divergences_of(remove_statements(case_, {n})) is not None]
    keeps += [f"output {o}" for o in case_.program.outputs
              if s.divergences_of(with_program(case_, outputs=tuple(x for x in case_.program.outputs if x != o)))
              is not None]
    return not keeps, keeps


def first_stage(case_: Case, kind: str, bug_class: str, device: str, stages=None):
    """(the first of ``stages`` that shows ``bug_class``, the compiles it took): the stage
    walk of a triage, alone."""
    from fuzzer.limits import OracleBudget
    from fuzzer.triage.probe import Probe
    from fuzzer.triage.stage import STAGES, walk

    stages = STAGES if stages is None else stages
    probe = Probe(case_, kind, bug_class, device, OracleBudget(oracle_calls=len(stages), seconds=float("inf")))
    return walk(probe, stages), probe.calls


def divergence_on(binding: int):
    """An effect-log divergence on ``binding`` (what a pass reads off the best case)."""
    from fuzzer.judge import contract

    return contract.Divergence(contract.EFFECT_LOG, binding, "sequence", "reordered (..)", ("reordered",))


@dataclass
class _Best:
    """The shrinker as a pass sees it (``passes.base.State``), with no rules of its own."""

    best: Case
    best_divs: list


def offered_by(shrink_pass, c: Case, take, divergences=()) -> tuple[list, Case]:
    """(every candidate ``shrink_pass`` offers over ``c``, the case it ends on) where
    ``take(candidate)`` alone says which are taken: what a pass proposes, apart from the
    oracle and the shrinker's rules."""
    from fuzzer.reduce.passes.base import drive

    state = _Best(c, list(divergences))
    offered: list[Case] = []

    def consider(candidate: Case) -> bool:
        offered.append(candidate)
        if take(candidate):
            state.best = candidate
            return True
        return False

    drive(shrink_pass, consider, state)
    return offered, state.best


def one_statement(form: str, operands: list, attrs: dict, sym_min=None, binding=None) -> Case:
    """A case of one statement of ``form`` over inputs ``x0``.. of ``operands`` ((dims,
    fixed dtype or None) each), returning its result where it has one."""
    from fuzzer.program import forms

    inputs = tuple(Input(f"x{k}", tuple(dims), dtype) for k, (dims, dtype) in enumerate(operands))
    out = "v0" if forms.form(form).returns else None
    symbols = sorted({d for i in inputs for d in i.dims if d.startswith("s")})
    program = Program(symbols=tuple(symbols), sym_min=dict(sym_min or {s: 1 for s in symbols}), inputs=inputs,
                      body=(Stmt(form, tuple(i.name for i in inputs), out, dict(attrs)),),
                      outputs=(out,) if out else ())
    return Case(program=program, bindings=(binding or {s: 5 for s in symbols},), input_seed=7)


def eager_agrees_with_typing(c: Case) -> None:
    """Run ``c`` eagerly and assert that what its statement left is what the IR typed:
    the result's shape and dtype, its storage shared with its operand's where the IR
    says it aliases, and only the operands the form writes written."""
    import torch

    from fuzzer.judge import execute
    from fuzzer.program import codegen, forms, sizes
    from fuzzer.program.ir import check

    typing, stmt = check(c.program), c.program.body[0]
    form = forms.form(stmt.form)
    binding = c.bindings[0]
    inputs = execute.make_inputs(c, 0, "cpu")
    before = [x.clone() for x in inputs]
    outs = codegen.build(c.program)(*inputs)
    if stmt.out is not None:
        out = outs[0]
        assert tuple(out.shape) == sizes.concrete(typing.dims[stmt.out], binding), (stmt.form, out.shape)
        want = typing.dtypes[stmt.out] or c.program.mode.dtype
        assert out.dtype == getattr(torch, want), (stmt.form, out.dtype, want)
        shares = out.untyped_storage().data_ptr() == inputs[0].untyped_storage().data_ptr()
        assert shares == (typing.root[stmt.out] == typing.root[stmt.args[0]]), (stmt.form, "aliasing")
    for k, (x, old) in enumerate(zip(inputs, before)):
        if k not in form.mutates:
            assert torch.equal(x, old), (stmt.form, f"operand {k} written")


def family_holds_its_word(module, seeds: int = 60) -> None:
    """What a family module (``fuzzer.program.families``) declares holds: each of its ops
    is registered as it is declared (a write in its schema where it says mutating, an
    ORDERED effect where effectful), each of its forms is registered, of one feature the
    family declares (and the feature registry holds), and calls only the library's ops;
    and a program drawn with that feature on uses its forms, legal and running eagerly on
    every binding."""
    import torch

    from fuzzer.faults._patching import op_effect
    from fuzzer.judge import execute
    from fuzzer.program import custom_ops, features, forms
    from fuzzer.program.generate import generate

    custom_ops.install()
    for op in module.OPS:
        overload = getattr(torch.ops.dcefuzz, op.name).default
        assert overload._schema.is_mutable == (op.declaration == custom_ops.MUTATING), op.name
        assert (op_effect(overload) is not None) == (op.declaration == custom_ops.EFFECTFUL), op.name
    names = {f.name for f in module.FORMS}
    (feature,) = {f.feature for f in module.FORMS} - {None} or {None}
    assert feature in {f.name for f in module.FEATURES}, feature
    for f in module.FORMS:
        assert forms.form(f.name) is f and set(f.ops) <= set(custom_ops.BY_NAME), f.name
    for declared in module.FEATURES:
        assert features.BY_NAME[declared.name] is declared, declared.name
    for seed in range(seeds):
        c = generate(seed, features={feature: 1.0})
        if names & {s.form for s in c.program.body}:
            c.validate()
            assert all(run.eager.failure is None for run in execute.run_eager(c, "cpu")), seed
            return
    raise AssertionError(f"no program of {seeds} drawn with {feature} uses a form of {module.__name__}")


def klass(text: str):
    """A bug class as a test writes it (``kind|symptoms``): the record its text reads as."""
    from fuzzer.judge.identity import BugClass

    return BugClass.parse(text)


def key(text: str):
    """A bug key as a test writes it (``family @ blame``): the record its text reads as."""
    from fuzzer.triage.key import BugKey

    family, _, blame = text.rpartition(" @ ")
    return BugKey(klass(family), blame)


def run_views(program: Program, binding: dict):
    """The program's typing, and its views of roots run eagerly where every root holds its
    own flat indices: the inputs, and each fresh result laid out row-major
    (``Form.dense_result``), which is a root of its own."""
    import torch

    from fuzzer.program import forms, sizes
    t = check(program)
    env = dict(binding)

    def indices(dims):
        shape = sizes.concrete(dims, binding)
        return torch.arange(int(torch.tensor(shape).prod()), dtype=torch.float64).reshape(shape)

    for inp in program.inputs:
        env[inp.name] = indices(inp.dims)
    views = {i.name for i in program.inputs}
    for stmt in program.body:
        form = forms.form(stmt.form)
        if form.dense_result:
            env[stmt.out] = indices(t.dims[stmt.out])
            views.add(stmt.out)
        elif form.is_view and stmt.args[0] in views and not sizes.has_unbacked("".join(t.dims[stmt.out])):
            text = form.render(list(stmt.args), stmt.attrs, [t.dims[a] for a in stmt.args])
            env[stmt.out] = eval(text, {"torch": torch}, env)  # noqa: S307 - our own forms
            views.add(stmt.out)
    return t, {v: env[v] for v in views}


def footprint_indices(print_, root_shape, binding):
    """The root element (its flat index) at every index of a view, by its footprint."""
    import torch

    from fuzzer.program import sizes
    shape = [sizes.evaluate(d, binding) for d in print_.dims]
    flat = torch.zeros(shape, dtype=torch.int64)
    for j in range(len(root_shape)):
        terms = [str(print_.base[j].const)] + [f"{c} * ({a})" for a, c in print_.base[j].terms]
        index = torch.full(shape, sizes.evaluate(" + ".join(terms), binding), dtype=torch.int64)
        for i, moves in enumerate(print_.moves):
            for jj, c in moves:
                if jj == j:
                    index = index + c * torch.arange(shape[i]).reshape([-1 if k == i else 1 for k in range(len(shape))])
        flat = flat + index * int(torch.tensor(root_shape[j + 1:], dtype=torch.int64).prod())
    return flat


def feature_runs_eagerly(feature: str, count: int = 20, seeds: int = 1000) -> None:
    """The first ``count`` programs drawn with ``feature`` certain that call one of its
    forms run eagerly on every binding: eager raising would make a program ``invalid``,
    a generator defect."""
    from fuzzer.judge.execute import run_eager
    from fuzzer.program import features, forms
    from fuzzer.program.generate import generate

    ran = 0
    for seed in range(seeds):
        c = generate(seed, features=features.ALL | {feature: 1.0})
        if not any(forms.form(s.form).feature == feature for s in c.program.body):
            continue
        for runs in run_eager(c, "cpu"):
            assert runs.eager.failure is None, (seed, runs.eager.failure)
        ran += 1
        if ran == count:
            return
    raise AssertionError(f"only {ran} of {seeds} programs call a form of {feature}")


def never_drawn_when_off(feature: str, seeds: int = 80) -> None:
    """No form of ``feature`` is drawn in ``seeds`` programs with every other feature at its
    weight and ``feature``'s at 0: a feature switched off is off."""
    from fuzzer.program import features, forms
    from fuzzer.program.generate import generate

    off = features.ALL | {feature: 0.0}
    drawn = [(seed, s.form) for seed in range(seeds) for s in generate(seed, features=off).program.body
             if forms.form(s.form).feature == feature]
    assert not drawn, drawn
