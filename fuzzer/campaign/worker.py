"""A campaign worker: one warm process that runs trials for the parent.

Workers are children of the one protocol in ``fuzzer.isolation.child`` and stay alive across many programs, so torch's import and the first, cold compile are
paid once per worker, not once per program.  The parent sends program indices; the
worker generates, runs, judges, confirms and shrinks, and sends back finished corpus
entries.  It never writes the corpus itself: the parent deduplicates and saves, so a
worker that dies mid-program loses nothing that was already reported.

Messages (``fuzzer.campaign.messages``), on top of the child protocol's "ready" and "stop":

    parent -> worker   Run(index, seed, seconds_left, held)
    worker -> parent   Tried(index, Report)      the trial's findings, unshrunk
                       Candidate(index, case)    a shrink candidate it is about to run (JSON)
                       Triaging(index, Report)   the program's entries, shrunk, before triage
                       Done(index, Report)       the program's entries, shrunk and triaged

A worker that has findings to shrink first reports them as the trial confirmed them
(``Tried``), then announces each candidate before the shrinker's oracle runs it.  A
candidate may be what kills or hangs the worker: the parent then saves the findings
from ``Tried`` and blames the death on the candidate, not on the program (which the
trial just ran without dying).  Each candidate starts a new program time limit:
shrinking a finding legitimately takes longer than running a program, and the shrink
budget (checked between candidates) bounds the whole.  ``seconds_left`` is the time
the campaign has left (None: no time budget); the shrink budget is cut to it, since the
parent kills a worker still holding a program at the campaign's deadline.

Triage (``fuzzer.triage``) compiles the shrunk findings again with Inductor's switches
thrown and torch's bisector at work: configurations the user does not run.  A worker
that dies there has not found a new bug of the program; the parent saves the shrunk
entries it reported with ``Triaging``, untriaged, and counts no casualty.
"""

from __future__ import annotations

import dataclasses
import gc
import time

from fuzzer.campaign.messages import Candidate, Done, Report, Run, Tried, Triaging
from fuzzer.isolation.process import rss_kb


def freeze_heap() -> None:
    """Take what the process holds now out of the garbage collector's full passes.

    A warm worker holds about half a million long-lived objects (torch, Inductor,
    the registered ops) and, since its memory stays flat, the collector's rule for a
    full collection (a quarter of the long-lived objects are new) fires every ten
    programs or so; each full pass walks all of them, about 0.35 s on a 2-core
    machine, some 3% of a campaign.  ``gc.freeze`` moves them to a generation that
    is never walked.  Frozen objects are never collected either, so this runs right
    after a reset (``fresh_compile_state``) and a full collection, when nothing of a
    program is left alive.
    """
    from fuzzer.judge.execute import fresh_compile_state

    fresh_compile_state()
    gc.collect()
    gc.freeze()


class Worker:
    """The worker's work, run by ``fuzzer.isolation.child.serve`` in a spawned process.

    The child protocol bounds torch's intra-op threads (``limits.threads``) and
    Inductor's kernel-compile pool, so that N workers share the machine's cores
    instead of each assuming it has all of them.
    """

    def __init__(self, config, limits):
        self.config, self.limits = config, limits
        self.ran = 0

    def load(self) -> None:
        from fuzzer.campaign import session  # noqa: F401 - loaded before "ready"
        from fuzzer.judge import trial  # noqa: F401
        from fuzzer.program import generate  # noqa: F401

        if self.config.ops.imports:  # a user's ops (--ops): registered before the first program
            from fuzzer.user import library

            library.ensure(self.config.ops.imports)
            library.apply(self.config.ops.adjusted)

    def __call__(self, message: Run, send) -> None:
        from fuzzer.internal import INTERNAL_ERROR, WORKER, InternalError

        index = message.index
        end = None if message.seconds_left is None else time.monotonic() + message.seconds_left
        try:
            report = _program(send, index, message.seed, self.config, end, message.held)
        except Exception as exc:  # noqa: BLE001 - our error: reported, never a crash of the program
            report = Report(INTERNAL_ERROR, 0.0, errors=[InternalError.of(WORKER, exc).to_json()], rss_kb=rss_kb())
        send(Done(index, report))
        self.ran += 1
        if self.ran == self.limits.freeze_after_programs:
            freeze_heap()


def _program(send, index: int, pseed: int, config, end: float | None, held: dict | None = None) -> Report:
    """Run, judge, confirm (and shrink and triage, until ``end`` at most) one program;
    nothing of it outlives the call.  ``held``: the corpus's bugs (``Examples.held``), whose
    findings are not shrunk in full where that can be told
    cheaply (``session.counted_only``)."""
    from fuzzer.campaign.entries import counted_only, masked_entries, oracle_of, shrunk_entry, triaged
    from fuzzer.campaign.hints import hints_for

    start = time.perf_counter()
    result, report = _tried(pseed, config, start)
    if result is None or not ((config.shrink or config.triage) and result.findings):
        return report
    send(Tried(index, report))

    def judge_with(oracle):
        def judge(case):
            send(Candidate(index, case.to_json()))
            return oracle(case)
        return judge

    def left() -> float | None:
        return None if end is None else end - time.monotonic()

    errors: list = []
    settled = [counted_only(f, pseed, config, held or {}, left(), errors, judge_with(oracle_of(f, config)))
               for f in result.findings]
    entries = [shrunk_entry(f, pseed, config, judge_with(oracle_of(f, config)), left(), errors,
                            hints_for(f, held or {}))
               for f, done in zip(result.findings, settled) if done is None]
    if config.triage:
        send(Triaging(index, dataclasses.replace(report, entries=[e.to_json() for e in entries])))
        entries = [triaged(e, config, left(), errors) for e in entries]
    entries += [e for e in settled if e is not None]
    # another bug the program holds, which a found one masks (an aot_eager divergence
    # behind an Inductor error): found on its stage, as a finding of its own
    entries += masked_entries(entries, pseed, config, held or {}, left, errors,
                              lambda f: judge_with(oracle_of(f, config)))
    return dataclasses.replace(report, entries=[e.to_json() for e in entries],
                               seconds=time.perf_counter() - start, rss_kb=rss_kb(),
                               errors=[e.to_json() for e in errors])


def _tried(pseed: int, config, start: float):
    """(the trial of program ``pseed``, its report):
    (None, the report of dcefuzz's own error) where our code failed."""
    from fuzzer.campaign.entries import found_entry, trial_of
    from fuzzer.internal import INTERNAL_ERROR, TRIAL, InternalError

    try:
        result = trial_of(pseed, config)
    except Exception as exc:  # noqa: BLE001 - dcefuzz's own error, never a finding
        return None, Report(INTERNAL_ERROR, time.perf_counter() - start, rss_kb=rss_kb(),
                            errors=[InternalError.of(TRIAL, exc).to_json()])
    tried = time.perf_counter() - start
    return result, Report(result.status, tried,
                          [found_entry(f, pseed, config).to_json() for f in result.findings],
                          list(result.flaky_kinds), rss_kb(), result.recompiles,
                          None if result.untested is None else result.untested.to_json(),
                          reached=dict(result.reached), trial_seconds=tried)
