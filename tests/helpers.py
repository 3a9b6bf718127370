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
