"""Shrink a saved corpus entry again, and put the reduced entry in its place.

``dcefuzz shrink ENTRY`` uses this after a shrink budget ran out, or for a crash or
timeout entry a campaign saved unshrunk.  The entry is first replayed (its bug class
must still show), on the device it was found on unless the caller names another.
"""

from __future__ import annotations

import dataclasses
import os

from fuzzer import faults
from fuzzer.corpus import store
from fuzzer.corpus.entry import Entry
from fuzzer.isolation.deaths import probe
from fuzzer.judge import contract, kinds
from fuzzer.judge.execute import intra_op_threads
from fuzzer.judge.trial import Finding
from fuzzer.limits import OracleBudget, PoolLimits
from fuzzer.reduce.casualty import shrink_casualty
from fuzzer.reduce.shrinker import shrink


def _reshrink_casualty(entry: Entry, path, device: str, budget: OracleBudget):
    """``reshrink`` for crash and timeout entries: candidates die in child processes."""
    limits = PoolLimits()
    moved = dataclasses.replace(entry, device=device)
    death = probe(moved.case, device, entry.backend, entry.fault, limits)
    if (death.kind != entry.kind or not death.after_eager
            or contract.bug_class(death.kind, [death.divergence()]) != entry.bug_class):
        return None
    budget = OracleBudget(oracle_calls=min(budget.oracle_calls, limits.casualty_shrink.oracle_calls),
                    seconds=min(budget.seconds, limits.casualty_shrink.seconds))
    smaller = shrink_casualty(moved, limits, budget)
    if smaller is None:
        return path, entry.statements, entry.statements
    new = moved.reduced(smaller.case, smaller.divergences, smaller.shrink, notes=entry.detail[1:])
    return put_in_place(entry, path, new), entry.statements, new.statements


def put_in_place(entry: Entry, path, new: Entry):
    """Save ``new`` (the reduced ``entry``, saved at ``path``) and retire the old files.

    Written before the old files go, so a crash leaves one or both.  An unchanged id
    is the same entry: ``save`` adds the hits already there, so ``new`` brings none.
    An entry of another target is another entry: the old one stays.
    """
    if new.id == entry.id:
        new.hits = 0
    new_path, _ = store.save(new, os.path.dirname(os.path.abspath(path)))
    if new.id != entry.id and new.target == entry.target:
        store.remove(path)
    return new_path


def reshrink(entry: Entry, path, device: str, budget: OracleBudget, target: str | None = None):
    """Shrink a saved entry again and replace it; None if it no longer reproduces.
    Through ``target`` where given (the entry's own otherwise): shrunk through another,
    it is saved beside the entry as that target's (``put_in_place``).

    Returns (new path, statements before, statements after).
    """
    if entry.kind in contract.PROCESS_KINDS:
        return _reshrink_casualty(entry, path, device, budget)
    kind = kinds.of(entry.kind)
    through = dataclasses.replace(entry, target=target or entry.target)
    judge = kind.oracle(through, device, entry.backend, entry.fault)
    with faults.planted(None if kind.fault_in_sides else entry.fault), intra_op_threads(entry.threads):
        verdict = judge(entry.case)
        divs = verdict.of_kind(entry.kind) if verdict.status == contract.OK else []
        if not divs or contract.bug_class(entry.kind, divs) != entry.bug_class:
            return None
        result = shrink(Finding(entry.kind, entry.case, divs, device, entry.backend), budget, judge=judge)
    if not result.confirmed:
        return None
    before = entry.statements
    origin = dataclasses.replace(entry.origin, device=device, target=through.target, torch_version=None)
    new = Entry.build(entry.kind, result.case, result.divergences, origin,
                      shrink={**result.record(), "original_statements": (entry.shrink or {}).get(
                          "original_statements", before)})
    return put_in_place(entry, path, new), before, new.statements
