"""One trial: execute a case, judge it, and confirm what diverged before believing it.

Confirmation is what keeps the corpus honest.  A divergence counts as a finding
only if (a) eager agreed with itself (checked by the contract), and (b) the same
*bug* recurs after a fresh compile: the same kind with the same bug class
(``contract.bug_class``), from ``torch._dynamo.reset()`` and with the on-disk
compile caches off, so a cached artifact cannot confirm itself.  Otherwise it is
counted as flaky and never saved.

Every kind a case shows is reported, each confirmed on its own: a compile error on
a late binding does not hide an effect-log divergence on an early one.

The confirmation replays the case only up to the binding on which each reported
kind first appeared (``confirmation_case``).  Bindings run in order through one
compiled function, so what happened on binding ``j`` depends only on bindings
``0..j``: the shorter replay repeats the same experiment, without the later
bindings' runs and the recompiles they trigger (about two compiles a program).

A case with no finding whose compiled runs were not wholly compiled is
``untested``, with the reasons Dynamo gave, and never counted clean.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field
from typing import Literal, TypedDict

from fuzzer.judge import contract, targets
from fuzzer.judge.contract import Divergence, Verdict, bug_class
from fuzzer.judge.execute import compile_fn, execute, fresh_compile_state, run_checks
from fuzzer.judge.identity import TextEnum
from fuzzer.judge.observe import PRECISION_ELIDED, BindingRuns, Gap, caches_off
from fuzzer.program import features, forms, objects, swap_forms
from fuzzer.program.families import subclass
from fuzzer.program.ir import Case, InvalidProgram, Program, check
from fuzzer.program.liveness import dead_site_causes

class Outcome(TextEnum):
    """What one trial came to, beside the contract's own statuses (invalid,
    nondeterministic): a confirmed finding, clean, flaky (not seen again on a fresh
    compile) or untested (not wholly compiled)."""

    FINDING = "finding"
    CLEAN = "clean"
    FLAKY = "flaky"
    UNTESTED = "untested"


FINDING, CLEAN, FLAKY, UNTESTED = Outcome.FINDING, Outcome.CLEAN, Outcome.FLAKY, Outcome.UNTESTED


#: the kinds of a cache pair's declaration variant (``fuzzer.cache.variants.KINDS``)
VariantKind = Literal["mutates-fixed", "mutates-narrowed", "mutates-widened", "effect-added", "effect-removed",
                      "fake-changed", "backward-changed", "eager-changed", "config-changed"]


class _VariantRecord(TypedDict):
    kind: VariantKind
    op: str
    detail: str
    old: str
    new: str
    grad: bool
    config_old: dict[str, object]
    config_new: dict[str, object]


class VariantRecord(_VariantRecord, total=False):
    """A stale-cache finding's declaration variant as its entry keeps it (``Entry.variant``,
    ``Finding.variant``; ``fuzzer.cache.variants.Variant``, whose fields these are)."""

    #: the new side takes the gradients twice (absent: it does not)
    twice: bool


@dataclass
class Finding:
    """A confirmed divergence of one kind on one case."""

    kind: str
    case: Case
    divergences: list[Divergence]
    device: str
    backend: str
    #: a stale-cache finding's declaration variant (``fuzzer.cache.variants``, as JSON)
    variant: VariantRecord | None = None
    #: the target it was found through (``fuzzer.judge.targets``)
    target: str = targets.DEFAULT

    @property
    def is_performance(self) -> bool:
        return self.kind in contract.PERFORMANCE_KINDS


@dataclass
class TrialResult:
    status: str  # clean | finding | flaky | untested | invalid | nondeterministic
    verdict: Verdict
    findings: list[Finding] = field(default_factory=list)
    flaky_kinds: list[str] = field(default_factory=list)
    seconds: float = 0.0
    #: dynamo recompilations of the program over its bindings (first judgement only)
    recompiles: int = 0
    #: what the program reached that the contract treats apart (``reached``), as counts
    reached: dict = field(default_factory=dict)

    @property
    def untested(self) -> Gap | None:
        """The first way the case was not wholly compiled or judged, when it is untested."""
        return self.verdict.untested[0] if self.status == UNTESTED else None

    @property
    def untested_reason(self) -> str | None:
        """The first reason the case was not wholly compiled, when it is untested."""
        return None if self.untested is None else self.untested.reason


def asks_of(program: Program, target: str = targets.DEFAULT) -> contract.Asks:
    """What ``program`` asks of the compiler that the verdict reads: its marks' kinds
    and the dims marked unbacked, the higher-order ops its forms mean to have compiled,
    the limits torch documents for them that its forms go beyond (``Form.limit``),
    whether its state carries over from call to call, the events its ops' backwards log
    (``Form.backward_logs``, where it takes gradients), whether it holds a tensor subclass
    (``families.subclass``); and what ``target`` documents it declines (``Target.declines``)."""
    used = [forms.form(s.form) for s in program.body]
    names = [i.name for i in program.inputs]
    logs = frozenset((op, stmt.site) for stmt in program.body for op in forms.form(stmt.form).backward_logs)
    return contract.Asks(marks=frozenset(how for _, _, how in program.mode.marks),
                         hops=frozenset(f.hop for f in used if f.hop),
                         limits=frozenset(f.limit for f in used if f.limit), declines=targets.get(target).declines,
                         carry=program.mode.carry,
                         unbacked=frozenset((names.index(name), dim) for name, dim, how in program.mode.marks
                                            if how == "unbacked"),
                         backward_logs=logs if program.mode.grad else frozenset(),
                         states=objects.states(program.mode.objects),
                         subclass=subclass.FEATURE in program.features(),
                         swaps=(features.INPUT_SWAPS in program.features()
                                or swap_forms.swaps_graph_input(program, forms.form)),
                         set_aliases=(features.INPUT_SWAPS in program.features()
                                      or any(s.form in swap_forms.SET_ALIASES for s in program.body)),
                         lone_strided=writes_lone_strided(program))


def writes_lone_strided(program: Program) -> bool:
    """Whether an aten form writes through an ``as_strided`` of a window or alias input
    (``strided_writes.LateStrided.lone``; STRIDED CHAIN LIMITS)."""
    if not (program.mode.windows or program.mode.aliases):
        return False
    try:
        lone = check(program).late.lone
    except InvalidProgram:
        return False
    return any(not form.is_custom and any(stmt.args[w] in lone for w in form.mutates)
               for stmt in program.body for form in (forms.form(stmt.form),))


def judge_case(case: Case, runs: list[BindingRuns], device: str, target: str = targets.DEFAULT) -> Verdict:
    """The contract applied to ``case``'s runs through ``target`` on ``device``, once the
    check runs it asks for (``contract.needs_checks``) are made: most bindings need none.
    Dead calls are judged only where the target judges them (``Target.judges_dce``)."""
    asks = asks_of(case.program, target)
    run_checks(case, device, runs, contract.needs_checks(runs, asks))
    names = [inp.name for inp in case.program.inputs]
    dead = dead_site_causes(case.program) if targets.get(target).judges_dce else {}
    return contract.judge_runs(names, dead, runs, asks)


def confirmation_case(case: Case, verdict: Verdict, kinds: list[str]) -> Case:
    """``case`` cut after the last binding the confirmation needs.

    Each reported kind must recur; it first appeared on some binding, and that
    binding's outcome is fixed by the bindings before it, so the replay stops at
    the latest of those first appearances.
    """
    last = max(min(d.binding for d in verdict.of_kind(kind)) for kind in kinds)
    return dataclasses.replace(case, bindings=case.bindings[:last + 1])


def judge_fresh(case: Case, device: str, backend: str = "inductor", cached: bool = False,
                dynamic: bool = True, target: str = targets.DEFAULT) -> Verdict:
    """Execute and judge ``case`` through ``target`` from an empty dynamo cache and, unless
    ``cached``, without the on-disk compile caches (``dynamic=False``: compiled with
    static shapes)."""
    fresh_compile_state()
    compiled = None if dynamic else compile_fn(case, backend, dynamic=False)
    if cached:
        return judge_case(case, execute(case, device, backend=backend, compiled=compiled, target=target), device,
                          target)
    with caches_off():
        return judge_case(case, execute(case, device, backend=backend, compiled=compiled, target=target), device,
                          target)


def _recompiles(verdict_runs: list[BindingRuns]) -> int:
    frames = sum(br.compiled.coverage.frames for br in verdict_runs
                 if br.compiled is not None and br.compiled.coverage is not None)
    return max(0, frames - 1)


#: the counts ``reached`` keeps of a program's first judgement
LOW_PRECISION_SIZES = "low-precision sizes from data"
DIVERGED_BINDINGS = "bindings whose reference diverged"
HOPS_ASKED = "hops asked"
HOPS_COMPILED = "hops compiled"
#: bindings whose compiled run logged events a backward ran on zeros for (allowed:
#: ``contract.zero_gradient_events``)
ZERO_BACKWARD = "backward events on zeros"


def reached(case: Case, runs: list[BindingRuns], verdict: Verdict) -> dict[str, int]:
    """What a program reached that the contract judges apart, so a campaign can say how
    much of it there was: a low-precision program with sizes from data, the bindings
    whose float64 reference took another path, the bindings whose compiled run logged
    events a backward ran on zeros for, and whether the higher-order ops it asked for
    were compiled."""
    program = case.program
    out = {}
    if program.mode.dtype != "float32" and features.needs_capture(program):
        out[LOW_PRECISION_SIZES] = 1
    if verdict.diverged:
        out[DIVERGED_BINDINGS] = len(verdict.diverged)
    if verdict.zero_backward:
        out[ZERO_BACKWARD] = len(verdict.zero_backward)
    asked = asks_of(program).hops
    if asked:
        out[HOPS_ASKED] = 1
        seen = {h for br in runs if br.compiled is not None and br.compiled.coverage is not None
                for h in (br.compiled.coverage.hops or ())}
        if asked <= seen:
            out[HOPS_COMPILED] = 1
    return out


def run_trial(case: Case, device: str, backend: str = "inductor", confirm: bool = True,
              target: str = targets.DEFAULT) -> TrialResult:
    """Judge ``case`` (the on-disk caches may serve this first compile) and confirm
    each kind it shows on a fresh, uncached compile.

    ``target``: the pipeline compiled and run (``fuzzer.judge.targets``)."""
    start = time.perf_counter()
    fresh_compile_state()
    runs = execute(case, device, backend=backend, target=target)
    verdict = judge_case(case, runs, device, target)
    recompiles = _recompiles(runs)

    def done(status: str, findings=(), flaky=()) -> TrialResult:
        return TrialResult(status, verdict, list(findings), list(flaky), time.perf_counter() - start,
                           recompiles, reached(case, runs, verdict))

    if verdict.status != contract.OK:
        return done(verdict.status)
    kinds = verdict.kinds()
    if not kinds:
        return done(UNTESTED if verdict.untested else CLEAN)
    last = confirmation_case(case, verdict, kinds)
    again = judge_fresh(last, device, backend, target=target) if confirm else verdict
    findings, flaky = [], []
    for kind in kinds:
        seen = [d for d in verdict.of_kind(kind) if d.binding < len(last.bindings)]
        if again.status == contract.OK and bug_class(kind, again.of_kind(kind)) == bug_class(kind, seen):
            findings.append(Finding(kind, case, verdict.of_kind(kind), device, backend, target=target))
        else:
            flaky.append(kind)
    elided = _elided(last, findings, device, backend, target) if confirm else []
    if elided and len(elided) == len(findings):
        verdict.untested.insert(0, Gap(PRECISION_ELIDED, f"{', '.join(f.kind for f in elided)}: gone with "
                                    "emulate_precision_casts", ",".join(f.kind for f in elided)))
        return done(UNTESTED)
    findings = [f for f in findings if all(f is not e for e in elided)]
    if findings:
        return done(FINDING, findings, flaky)
    return done(FLAKY, findings, flaky)


def _elided(case: Case, findings: list[Finding], device: str, backend: str, target: str) -> list[Finding]:
    """PRECISION ELISION (``contract.elision_asked``): the findings of a low-precision
    program that the same fresh compile with eager's casts emulated no longer shows."""
    asked = [f for f in findings if contract.elision_asked(case.program.mode.dtype, backend, f.kind)]
    if not asked:
        return []
    from torch._inductor import config as inductor_config

    with inductor_config.patch(emulate_precision_casts=True):
        emulated = judge_fresh(case, device, backend, target=target)
    if emulated.status != contract.OK:
        return []
    return [f for f in asked if bug_class(f.kind, emulated.of_kind(f.kind))
            != bug_class(f.kind, [d for d in f.divergences if d.binding < len(case.bindings)])]
