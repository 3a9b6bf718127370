"""Shrinking: reduce a finding to a 1-minimal case that still shows the same bug.

The compiler's own minifier shrinks FX graphs; this shrinks the user-level program,
keeping the custom-op declarations and the dynamic-shape setting that trigger the
bug, so the result is a repro a PyTorch developer can read in one glance.

A candidate is accepted only if it is a legal case (``Case.validate``), eager runs
cleanly and deterministically on it, and it shows a divergence of the same kind and
the same bug class (``contract.bug_class``) as the original: a step that slides to a
different bug (say, wrong output to compile error) is rejected.  Verdicts are cached
by the candidate's content hash.  Passes run to a fixpoint:

1. keep only the bindings that fail (fewest first);
2. delete statements, in chunks halving down to single statements (adaptive delta
   debugging); deleting a statement deletes what reads its result, since a program
   cannot use an undefined value.  Nothing is ever deleted implicitly: every
   deletion is tested, because dead calls are often the trigger;
3. drop returned values;
4. drop unused inputs;
5. replace an operand by an input or an earlier value of the same dims;
6. replace a custom op by a simpler op of the same declared kind;
7. simplify constants and attributes;
8. shrink sizes (bindings toward the symbols' minimums) and ranks (drop an input
   dim, merge two symbols).

The result is renumbered (values, sites, symbols) and confirmed after a fresh
compile like any finding.  An ``OracleBudget`` (``fuzzer.limits``) bounds oracle calls and seconds; when it
runs out, the best case so far is returned.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from fuzzer.internal import SHRINK, InternalError
from fuzzer.judge import contract
from fuzzer.judge.trial import judge_fresh
from fuzzer.limits import SHRINK, UNBOUNDED, OracleBudget
from fuzzer.program.ir import Case, Input, InvalidProgram, Stmt, check
from fuzzer.reduce import signature
from fuzzer.reduce.edits import (
    canonical_case,
    drop_unused_symbols,
    merge_symbols,
    remove_statements,
    simpler_stmt,
    unused,
    with_program,
    without_dim,
    without_input,
)
from fuzzer.reduce.order import SIMPLER, SIMPLEST_ATTRS, complexity, simpler_modes


@dataclass
class ShrinkResult:
    case: Case
    signature: str
    divergences: list
    original_statements: int
    statements: int
    oracle_calls: int
    seconds: float
    exhausted: bool
    confirmed: bool
    #: dcefuzz's own errors met judging candidates
    errors: list = dataclasses.field(default_factory=list)

    def record(self) -> dict:
        return {"original_statements": self.original_statements, "statements": self.statements,
                "oracle_calls": self.oracle_calls, "seconds": round(self.seconds, 2),
                "budget_exhausted": self.exhausted}


class BudgetExhausted(Exception):
    pass


def case_key(case: Case) -> str:
    return hashlib.sha256(json.dumps(case.to_json(), sort_keys=True).encode()).hexdigest()


# ---------------------------------------------------------------- shrinker

class Shrinker:
    """Reduce one finding; ``judge`` is injectable so tests can use a stand-in oracle."""

    def __init__(self, case: Case, kind: str, divergences: list, device: str = "cpu",
                 backend: str = "inductor", budget: OracleBudget | None = None,
                 judge: Callable[[Case], contract.Verdict] | None = None):
        self.kind = kind
        self.target = contract.bug_class(kind, divergences)
        self.budget = budget or SHRINK.budget
        self.judge = judge or (lambda c: judge_fresh(c, device, backend))
        self.best = case
        self.best_divs = list(divergences)
        self.cache: dict[str, list | None] = {case_key(case): list(divergences)}
        self.calls = 0
        self.start = time.perf_counter()
        self.exhausted = False
        #: dcefuzz's own errors while judging candidates (``fuzzer.internal``): such a
        #: candidate is rejected, never taken for the bug
        self.errors: list[InternalError] = []

    # -- the predicate ------------------------------------------------------
    def divergences_of(self, case: Case) -> list | None:
        """The target kind's divergences if ``case`` shows the same bug, else None."""
        key = case_key(case)
        if key in self.cache:
            return self.cache[key]
        try:
            case.validate()
        except InvalidProgram:
            self.cache[key] = None
            return None
        if self.calls >= self.budget.oracle_calls or time.perf_counter() - self.start >= self.budget.seconds:
            self.exhausted = True
            raise BudgetExhausted
        self.calls += 1
        try:
            verdict = self.judge(case)
        except Exception as exc:  # noqa: BLE001 - our error: the candidate says nothing of the bug
            self.errors.append(InternalError.of(SHRINK, exc))
            self.cache[key] = None
            return None
        divs = verdict.of_kind(self.kind) if verdict.status == contract.OK else []
        result = divs if divs and contract.bug_class(self.kind, divs) == self.target else None
        self.cache[key] = result
        return result

    def recheck(self, case: Case) -> list | None:
        """A fresh oracle call, past the cache and the budget (for confirmation)."""
        self.cache.pop(case_key(case), None)
        saved, self.budget = self.budget, UNBOUNDED
        try:
            return self.divergences_of(case)
        finally:
            self.budget = saved

    def consider(self, case: Case) -> bool:
        """Adopt ``case`` if it is strictly simpler and still shows the bug."""
        if complexity(case) >= complexity(self.best):
            return False
        divs = self.divergences_of(case)
        if divs is None:
            return False
        self.best, self.best_divs = case, divs
        return True

    # -- passes -------------------------------------------------------------
    def pass_bindings(self) -> bool:
        failing = sorted({d.binding for d in self.best_divs})
        bindings = self.best.bindings
        if len(bindings) == 1:
            return False
        for chosen in [[i] for i in failing] + [failing]:
            if len(chosen) < len(bindings) and self.consider(
                    dataclasses.replace(self.best, bindings=tuple(bindings[i] for i in chosen))):
                return True
        return False

    def pass_statements(self) -> bool:
        """Delete chunks of statements, from the end, halving the chunk down to one."""
        changed = False
        size = max(1, len(self.best.program.body) // 2)
        while True:
            progress = False
            hi = len(self.best.program.body)
            while hi > 0:
                lo = max(0, hi - size)
                # a removal only ever takes statements at or after lo with it
                if self.consider(remove_statements(self.best, set(range(lo, hi)))):
                    progress = changed = True
                hi = lo
            if size == 1 and not progress:
                return changed
            if size > 1:
                size //= 2

    def pass_outputs(self) -> bool:
        changed = False
        outs = self.best.program.outputs
        if outs and self.consider(with_program(self.best, outputs=())):
            return True
        for o in outs:
            current = self.best.program.outputs
            if o in current and self.consider(with_program(self.best, outputs=tuple(x for x in current if x != o))):
                changed = True
        return changed

    def pass_inputs(self) -> bool:
        changed = False
        for inp in self.best.program.inputs:
            p = self.best.program
            if any(inp.name in s.args for s in p.body) or inp.name in p.outputs:
                continue
            cand = drop_unused_symbols(with_program(self.best, inputs=tuple(i for i in p.inputs if i is not inp),
                                             mode=without_input(p.mode, inp.name)))
            changed |= self.consider(cand)
        return changed

    def _edits_of_statements(self) -> Iterator[Case]:
        p = self.best.program
        try:
            typing = check(p)
        except InvalidProgram:
            return
        defined = [i.name for i in p.inputs]
        for n, stmt in enumerate(p.body):
            # operands: an input or an earlier value (same dims first; the form's
            # typing rejects what does not fit, at no oracle cost)
            for k, arg in enumerate(stmt.args):
                earlier = defined[:defined.index(arg)]
                for cand in sorted(earlier, key=lambda v: typing.dims[v] != typing.dims[arg]):
                    yield self._replace_stmt(n, dataclasses.replace(
                        stmt, args=stmt.args[:k] + (cand,) + stmt.args[k + 1:]))
            # a simpler op of the same kind
            for simpler in SIMPLER.get(stmt.form, ()):
                new = simpler_stmt(stmt, simpler)
                if new.out is None and stmt.out is not None and not unused(p, stmt.out):
                    continue
                yield self._replace_stmt(n, new)
            # simpler constants and attributes
            for key, simplest in SIMPLEST_ATTRS.items():
                if key in stmt.attrs and stmt.attrs[key] != simplest:
                    yield self._replace_stmt(n, dataclasses.replace(stmt, attrs={**stmt.attrs, key: simplest}))
            if stmt.out is not None:
                defined.append(stmt.out)

    def _replace_stmt(self, n: int, stmt: Stmt) -> Case:
        body = list(self.best.program.body)
        body[n] = stmt
        return with_program(self.best, body=tuple(body))

    def _accept_first(self, edits: Callable[[], Iterator[Case]]) -> bool:
        """Take the first edit that keeps the bug, then regenerate; stop when none does."""
        changed = False
        while any(self.consider(cand) for cand in edits()):
            changed = True
        return changed

    def pass_rewrite(self) -> bool:
        return self._accept_first(self._edits_of_statements)

    def _size_edits(self) -> Iterator[Case]:
        case = self.best
        p = case.program
        # merge a symbol into another (fewer distinct sizes)
        for a in p.symbols:
            for b in p.symbols:
                if a < b:
                    yield merge_symbols(case, b, a)
        # drop a dim of an input (lower rank)
        for i, inp in enumerate(p.inputs):
            for k in range(len(inp.dims)):
                if len(inp.dims) > 1:
                    dims = inp.dims[:k] + inp.dims[k + 1:]
                    inputs = p.inputs[:i] + (Input(inp.name, dims, inp.dtype),) + p.inputs[i + 1:]
                    yield drop_unused_symbols(with_program(case, inputs=inputs, mode=without_dim(p.mode, inp.name, k)))
        # smaller sizes, and smaller minimums
        for bi, b in enumerate(case.bindings):
            for s, v in b.items():
                lo = p.sym_min.get(s, 0)
                for smaller in sorted({lo, v // 2, v - 1}):
                    if lo <= smaller < v:
                        nb = list(case.bindings)
                        nb[bi] = {**b, s: smaller}
                        yield dataclasses.replace(case, bindings=tuple(nb))

    def pass_sizes(self) -> bool:
        return self._accept_first(self._size_edits)

    def pass_mode(self) -> bool:
        """Simplify how the program runs: no gradients, dynamic=True, float32, no marks,
        contiguous inputs; each kept only if the bug needs it."""
        return self._accept_first(lambda: (with_program(self.best, mode=m) for m in simpler_modes(self.best.program.mode)))

    PASSES = ("pass_bindings", "pass_statements", "pass_outputs", "pass_inputs",
              "pass_mode", "pass_rewrite", "pass_statements", "pass_sizes")

    def run(self) -> Case:
        try:
            changed = True
            while changed:
                changed = False
                for name in self.PASSES:
                    changed |= getattr(self, name)()
        except BudgetExhausted:
            pass
        return self.best


def shrink(case: Case, kind: str, divergences: list, device: str = "cpu", backend: str = "inductor",
           budget: OracleBudget | None = None, judge=None, confirm: bool = True) -> ShrinkResult:
    """Shrink, renumber, and confirm the reduced case after a fresh compile."""
    start = time.perf_counter()
    shrinker = Shrinker(case, kind, divergences, device, backend, budget, judge)
    best = shrinker.run()
    divs = shrinker.best_divs
    confirmed = not confirm
    if confirm:
        # outside the budget: the renumbered case must show the bug from a fresh compile;
        # if renumbering lost it (it should not), the unrenumbered one must
        for candidate in (canonical_case(best), best):
            again = shrinker.recheck(candidate)
            if again is not None:
                best, divs, confirmed = candidate, again, True
                break
    return ShrinkResult(
        case=best, signature=signature.of(kind, best, divs), divergences=divs,
        original_statements=len(case.program.body), statements=len(best.program.body),
        oracle_calls=shrinker.calls, seconds=time.perf_counter() - start,
        exhausted=shrinker.exhausted, confirmed=confirmed, errors=list(shrinker.errors),
    )


def is_one_minimal(case: Case, kind: str, divergences: list, judge) -> tuple[bool, list[str]]:
    """Does removing any one statement (with what reads it) or returned value lose the bug?

    Returns (minimal, the removals that kept the bug).
    """
    s = Shrinker(case, kind, divergences, judge=judge, budget=UNBOUNDED)
    keeps = []
    for n in range(len(case.program.body)):
        if s.divergences_of(remove_statements(case, {n})) is not None:
            keeps.append(f"statement {n}")
    for o in case.program.outputs:
        if s.divergences_of(with_program(case, outputs=tuple(x for x in case.program.outputs if x != o))) is not None:
            keeps.append(f"output {o}")
    return not keeps, keeps
