"""The oracle contract: what torch.compile must preserve, and what it may change.

This module is the contract.  ``docs/contract.md`` states it in prose; each clause
below is one function, and each has hand-written tests in ``tests/test_oracle.py``.

MUST MATCH (a difference is a finding), per binding:

1. ``wrong-output``   returned values: count, shape, dtype, and values judged by
   :func:`fuzzer.compare.tensor_difference` against an fp64 eager reference
   (flagged only when compiled error clearly exceeds eager's; NaN/inf aware).
2. ``wrong-mutation`` the final contents of every program input, same judgement.
3. ``effect-log``     the exact sequence of (op, call site) events of ORDERED
   effectful ops: nothing missing, extra, duplicated or reordered; and the tensor
   each event saw, same judgement as values.
4. ``compile-error`` / ``runtime-error``: eager returns and compiled raises.

If eager raises, the program is *invalid* (a generator defect, never a finding).
If eager run twice disagrees with itself, the case is *nondeterministic* (skipped).
(Both are checked for every binding whose compiled run differs from eager at all:
a bit-identical compiled run cannot break a clause.)

ALLOWED TO DIFFER (never a finding): whether and how often a pure op runs, the
order of non-effectful work, writes to intermediates never read again, strides,
recompilations, and the call counts of mutating ops (only their visible writes
are judged).

PROCESS, seen from outside the process (``fuzzer.isolate``): ``crash`` (the
process running the compiled program died: a signal, or past the memory cap) and
``timeout`` (it outlived the time limit), once its eager runs had finished.

PERFORMANCE, reported apart: ``missed-dce``, a call site of a pure custom op whose
result is dead in the program (:func:`fuzzer.program.dead_pure_sites`) that the
compiled code executed.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from fuzzer import compare
from fuzzer.execute import COMPILE, BindingRuns, Run
from fuzzer.program import Case, dead_pure_sites

WRONG_OUTPUT = "wrong-output"
WRONG_MUTATION = "wrong-mutation"
EFFECT_LOG = "effect-log"
COMPILE_ERROR = "compile-error"
RUNTIME_ERROR = "runtime-error"
MISSED_DCE = "missed-dce"
CRASH = "crash"
TIMEOUT = "timeout"

#: Correctness kinds, most severe first: a case's finding takes the first present.
CORRECTNESS_KINDS = (COMPILE_ERROR, RUNTIME_ERROR, EFFECT_LOG, WRONG_MUTATION, WRONG_OUTPUT)
PERFORMANCE_KINDS = (MISSED_DCE,)
KINDS = CORRECTNESS_KINDS + PERFORMANCE_KINDS
#: Deaths of the compiling process: no verdict of this module can report them.
PROCESS_KINDS = (CRASH, TIMEOUT)

OK = "ok"
INVALID = "invalid"
NONDETERMINISTIC = "nondeterministic"


@dataclass(frozen=True)
class Divergence:
    """One broken clause on one binding."""

    kind: str
    binding: int
    where: str
    detail: str

    def line(self) -> str:
        return f"[{self.kind}] binding {self.binding}, {self.where}: {self.detail}"


@dataclass
class Verdict:
    status: str
    divergences: list[Divergence] = field(default_factory=list)
    reason: str = ""

    def of_kind(self, kind: str) -> list[Divergence]:
        return [d for d in self.divergences if d.kind == kind]

    def kinds(self) -> list[str]:
        present = {d.kind for d in self.divergences}
        return [k for k in KINDS if k in present]

    @property
    def correctness_kind(self) -> str | None:
        return next((k for k in self.kinds() if k in CORRECTNESS_KINDS), None)


# ------------------------------------------------------------------ clauses

def check_outcome(i: int, eager: Run, compiled: Run) -> list[Divergence]:
    """Clause 4: eager returned, so compiled must return too."""
    if compiled.failure is None:
        return []
    f = compiled.failure
    kind = COMPILE_ERROR if f.stage == COMPILE else RUNTIME_ERROR
    return [Divergence(kind, i, f.stage, f.line())]


def check_outputs(i: int, eager: Run, ref: Run, compiled: Run) -> list[Divergence]:
    """Clause 1: returned values."""
    if len(compiled.outputs) != len(eager.outputs):
        return [Divergence(WRONG_OUTPUT, i, "outputs",
                           f"{len(compiled.outputs)} values returned, eager returned {len(eager.outputs)}")]
    out = []
    for k, (r, e, c) in enumerate(zip(ref.outputs, eager.outputs, compiled.outputs)):
        why = compare.tensor_difference(r, e, c)
        if why:
            out.append(Divergence(WRONG_OUTPUT, i, f"output {k}", why))
    return out


def check_inputs(i: int, names, eager: Run, ref: Run, compiled: Run) -> list[Divergence]:
    """Clause 2: final contents of every program input."""
    out = []
    for name, r, e, c in zip(names, ref.inputs_after, eager.inputs_after, compiled.inputs_after):
        why = compare.tensor_difference(r, e, c)
        if why:
            out.append(Divergence(WRONG_MUTATION, i, f"input {name}", why))
    return out


def _describe_sequence_change(expected: list, got: list) -> str:
    missing = [ev for ev in expected if ev not in got]
    extra = [ev for ev in got if ev not in expected]
    dup = sorted({ev for ev in got if got.count(ev) > expected.count(ev) and ev in expected})
    parts = []
    if missing:
        parts.append("missing " + ", ".join(f"{op}@{site}" for op, site in missing))
    if extra:
        parts.append("extra " + ", ".join(f"{op}@{site}" for op, site in extra))
    if dup:
        parts.append("duplicated " + ", ".join(f"{op}@{site}" for op, site in dup))
    if not parts:
        parts.append("reordered")
    return "; ".join(parts) + (f" (eager {_seq(expected)}, compiled {_seq(got)})")


def _seq(events) -> str:
    return "[" + ", ".join(f"{op}@{site}" for op, site in events) + "]"


def check_effects(i: int, eager: Run, ref: Run, compiled: Run) -> list[Divergence]:
    """Clause 3: the ORDERED effect log, event by event."""
    expected = [(op, site) for op, site, _ in eager.effects]
    got = [(op, site) for op, site, _ in compiled.effects]
    if expected != got:
        return [Divergence(EFFECT_LOG, i, "sequence", _describe_sequence_change(expected, got))]
    out = []
    for n, (r, e, c) in enumerate(zip(ref.effects, eager.effects, compiled.effects)):
        for k, (rt, et, ct) in enumerate(zip(r[2], e[2], c[2])):
            why = compare.tensor_difference(rt, et, ct)
            if why:
                out.append(Divergence(EFFECT_LOG, i, f"event {n} ({e[0]}@{e[1]}) input {k}",
                                      f"saw different data: {why}"))
    return out


def check_dead_calls(i: int, dead_sites: set[int], compiled: Run) -> list[Divergence]:
    """Performance: dead pure call sites the compiled code still ran."""
    ran = sorted({site for op, site in compiled.calls if site in dead_sites})
    if not ran:
        return []
    names = {site: op for op, site in compiled.calls}
    return [Divergence(MISSED_DCE, i, "calls",
                       "dead pure call sites executed: " + ", ".join(f"{names[s]}@{s}" for s in ran))]


# ------------------------------------------------------------------ verdict

def _eager_is_deterministic(a: Run, b: Run) -> bool:
    pairs = list(zip(a.outputs, b.outputs)) + list(zip(a.inputs_after, b.inputs_after))
    pairs += [(x, y) for ea, eb in zip(a.effects, b.effects) for x, y in zip(ea[2], eb[2])]
    same_events = [(o, s) for o, s, _ in a.effects] == [(o, s) for o, s, _ in b.effects]
    return same_events and len(a.outputs) == len(b.outputs) and all(
        compare.bitwise_equal(x, y) for x, y in pairs)


def _identical(a: Run, b: Run) -> bool:
    """Bit-identical records: nothing any clause could flag."""
    if b.failure is not None or len(a.outputs) != len(b.outputs):
        return False
    if [(o, s) for o, s, _ in a.effects] != [(o, s) for o, s, _ in b.effects]:
        return False
    pairs = list(zip(a.outputs, b.outputs)) + list(zip(a.inputs_after, b.inputs_after))
    pairs += [(x, y) for ea, eb in zip(a.effects, b.effects) for x, y in zip(ea[2], eb[2])]
    return all(compare.bitwise_equal(x, y) for x, y in pairs)


def judge(case: Case, runs: list[BindingRuns]) -> Verdict:
    """Apply every clause to every binding.

    A compiled run bit-identical to eager breaks no clause, so only the call trace
    (missed-dce) is looked at; any other run first gets its determinism check and
    float64 reference (``BindingRuns.complete``).
    """
    for i, br in enumerate(runs):
        if br.eager.failure is not None:
            return Verdict(INVALID, reason=f"eager raised on binding {i}: {br.eager.failure.line()}")
    dead = dead_pure_sites(case.program)
    names = [inp.name for inp in case.program.inputs]
    divergences: list[Divergence] = []
    for i, br in enumerate(runs):
        c = br.compiled
        if c is None:
            continue
        if not _identical(br.eager, c):
            br.complete()
            for run in (br.eager_again, br.reference):
                if run.failure is not None:
                    return Verdict(INVALID, reason=f"eager raised on binding {i}: {run.failure.line()}")
            if not _eager_is_deterministic(br.eager, br.eager_again):
                return Verdict(NONDETERMINISTIC, reason=f"eager disagrees with itself on binding {i}")
            failed = check_outcome(i, br.eager, c)
            divergences += failed
            if failed:
                continue
            divergences += check_outputs(i, br.eager, br.reference, c)
            divergences += check_inputs(i, names, br.eager, br.reference, c)
            divergences += check_effects(i, br.eager, br.reference, c)
        divergences += check_dead_calls(i, dead, c)
    return Verdict(OK, divergences)
