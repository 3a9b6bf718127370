"""A cache trial: one program, one declaration variant, one pair; confirmed on a
second pair before it is believed.

The package's side of ``fuzzer.cache.pair``: it draws the variant, builds the two
sides' jobs from the case, starts them as ``python -m fuzzer.cache`` and turns the
stale-cache verdict into the trial's status.  A pair whose new side no cache served
(``pair.CACHE_MISS``) says nothing, nor does one whose warm run was not wholly compiled
(a graph break): either is ``untested``, never clean.  A side that dies or hangs
is ``invalid`` for the pair: whatever killed it, the old side's declaration may be
the cause, and the old side is never judged.
"""

from __future__ import annotations

import dataclasses
import random
import sys
import time

from fuzzer.cache import pair
from fuzzer.cache.variants import Variant, draw
from fuzzer.judge import contract
from fuzzer.judge.contract import STALE_CACHE, Verdict, bug_class
from fuzzer.judge.trial import CLEAN, FINDING, FLAKY, UNTESTED, Finding, TrialResult
from fuzzer.limits import CACHE
from fuzzer.program import codegen
from fuzzer.program.custom_ops import EFFECTFUL, PURE
from fuzzer.program.form_draw import CATEGORY_WEIGHTS
from fuzzer.program.form_record import ATEN, VIEW
from fuzzer.program.generate import derive_seed, generate
from fuzzer.program.ir import Case

#: every on-disk cache a pair shares (triage turns them on one at a time)
ALL_CACHES = tuple(pair.CACHES)
#: the command that runs one side in a fresh process
SIDE_COMMAND = [sys.executable, "-m", "fuzzer.cache"]


#: cache pairs draw no effectful op of their own: torch 2.13 never caches a graph
#: holding an effect (the FX graph cache bypasses ``with_effects``), so such a pair
#: tests nothing; effects enter through the variants (``effect-added``)
CACHE_WEIGHTS = {c: (0 if c == EFFECTFUL else w) for c, w in CATEGORY_WEIGHTS.items()}
#: and a share of them write nothing, so that gradients can be taken (the
#: ``backward-changed`` variant): an input that requires grad cannot be written in
#: place, and the mutating ops have no backward
GRAD_WEIGHTS = {c: (w if c in (PURE, ATEN, VIEW) else 0) for c, w in CATEGORY_WEIGHTS.items()}


def cache_case(program_seed: int) -> Case:
    """The case of program ``program_seed`` in cache mode: drawn for pairs (a share of
    them for gradients), cut to ``CACHE.bindings`` bindings."""
    grads = random.Random(derive_seed("cache-program", program_seed)).random() < CACHE.grad_share
    case = generate(program_seed, GRAD_WEIGHTS if grads else CACHE_WEIGHTS, CACHE.generation)
    return dataclasses.replace(case, bindings=case.bindings[:CACHE.bindings])


def variant_for(case: Case, program_seed: int) -> Variant | None:
    """The variant program ``program_seed`` is paired with: a function of both."""
    return draw(case.program, random.Random(derive_seed("variant", program_seed)))


def spec_of(case: Case, backend: str) -> dict:
    """What a side needs to draw the case's inputs (the repro driver's keys)."""
    return {"input_seed": case.input_seed, "bindings": [dict(b) for b in case.bindings],
            "input_dims": [list(i.dims) for i in case.program.inputs], "backend": backend}


def jobs_of(case: Case, variant: Variant, device: str, backend: str, caches=ALL_CACHES,
            fault: str | None = None, threads: int | None = None) -> dict:
    names = case.program.custom_ops()
    sides = pair.Sides(variant.library(names, pair.OLD), variant.library(names, pair.NEW), variant.config_old,
                       variant.config_new, variant.grad, variant.twice)
    jobs = pair.pair_jobs(sides, codegen.source(case.program), spec_of(case, backend), device, list(caches))
    for job in jobs.values():
        job.update(fault=fault, threads=threads)
    return jobs


def judge_pair(case: Case, variant: Variant, device: str, backend: str = "inductor", caches=ALL_CACHES,
               fault: str | None = None, threads: int | None = None,
               timeout: float = CACHE.side_seconds) -> Verdict:
    """Run one pair of ``case`` and ``variant``; the stale-cache verdict (a side that
    failed: ``invalid``)."""
    try:
        record = pair.run_pair(jobs_of(case, variant, device, backend, caches, fault, threads),
                               SIDE_COMMAND, timeout)
    except pair.SideFailed as exc:
        return Verdict(contract.INVALID, reason=str(exc))
    return pair.judge_pair([i.name for i in case.program.inputs], list(case.bindings), record, variant.label)


def run_cache_trial(case: Case, variant: Variant, device: str, backend: str = "inductor",
                    confirm: bool = True, fault: str | None = None, threads: int | None = None) -> TrialResult:
    """Judge one pair; confirm a stale-cache finding on a second pair."""
    start = time.perf_counter()
    verdict = judge_pair(case, variant, device, backend, fault=fault, threads=threads)

    def done(status: str, findings=(), flaky=()) -> TrialResult:
        return TrialResult(status, verdict, list(findings), list(flaky), time.perf_counter() - start)

    if verdict.status != contract.OK:
        return done(verdict.status)
    found = verdict.of_kind(STALE_CACHE)
    if not found:
        # a cache miss, or a warm run not wholly compiled: never clean
        return done(UNTESTED if verdict.untested else CLEAN)
    again = judge_pair(case, variant, device, backend, fault=fault, threads=threads) if confirm else verdict
    if again.status == contract.OK and bug_class(STALE_CACHE, again.of_kind(STALE_CACHE)) == bug_class(
            STALE_CACHE, found):
        return done(FINDING, [Finding(STALE_CACHE, case, found, device, backend, variant=variant.to_json())])
    return done(FLAKY, flaky=[STALE_CACHE])
