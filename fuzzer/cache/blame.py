"""The culprit of a stale-cache finding: which on-disk cache served the stale code.

The pair is run again with the FX graph cache alone.  If it shows the bug, its key
missed the declaration's change.  If not, the AOTAutograd cache is to blame (the
pair with both caches showed it): on torch 2.13 the AOTAutograd cache works
only on top of the FX graph cache (with the FX graph cache off it is bypassed), and
an AOTAutograd hit loads the FX graph it stored by the key it stored, without
looking again.  So the blamed cache is the FX graph cache when it shows the bug
alone, else the AOTAutograd cache when both together show it: the outer key missed
the change while the inner one, recomputed, would have caught it.

The culprit's stage is ``cache``, its subsystem the blamed cache, its pass the
variant's label (``mutates-fixed``: what changed) and its switches the probe's outcome (``"fx_graph only": "gone"``), so bugs group by the
variant's label (part of the bug class) and the cache
(``fuzzer.corpus.bugs``).
"""

from __future__ import annotations

import time

import torch

from fuzzer.cache import trial
from fuzzer.cache.variants import Variant
from fuzzer.judge import contract
from fuzzer.limits import TRIAGE, OracleBudget
from fuzzer.program.ir import Case
from fuzzer.triage.culprit import Culprit
from fuzzer.triage.family import family
from fuzzer.triage.probe import Outcome

STAGE = "cache"
#: the cache probed first: the innermost, whose key is recomputed on every compile
INNER = "fx_graph"
OUTER = "aot_autograd"


def subsystem(name: str) -> str:
    return f"{name}_cache"


def probe_label(name: str) -> str:
    return f"{name} only"


def localise(case: Case, variant: Variant, bug_class: contract.BugClass, device: str,
             budget: OracleBudget = TRIAGE.budget, backend: str = "inductor", fault: str | None = None,
             threads: int | None = None) -> Culprit:
    """Run the pair with each cache alone, within ``budget``; the cache to blame."""
    start = time.perf_counter()
    results: dict[str, str] = {}
    exhausted = budget.oracle_calls < 1 or budget.seconds <= 0
    if not exhausted:
        verdict = trial.judge_pair(case, variant, device, backend, caches=(INNER,), fault=fault,
                                   threads=threads)
        seen = contract.bug_class(contract.STALE_CACHE, verdict.of_kind(contract.STALE_CACHE))
        if verdict.status != contract.OK:
            outcome = Outcome.CHANGED
        elif seen and family(seen) == family(bug_class):
            outcome = Outcome.STAYS
        else:
            outcome = Outcome.GONE
        results[probe_label(INNER)] = outcome.value
    blamed = {Outcome.STAYS.value: INNER, Outcome.GONE.value: OUTER}.get(results.get(probe_label(INNER)))
    return Culprit(stage=STAGE if blamed else None, subsystem=subsystem(blamed) if blamed else None,
                   pass_name=variant.label,
                   switches=results, kind=contract.STALE_CACHE, oracle_calls=len(results),
                   seconds=time.perf_counter() - start, budget_exhausted=exhausted,
                   torch_version=torch.__version__)
