"""The cache-pair trial kind: a program compiled in two fresh processes that share the
on-disk compile caches, the second after one op's declaration changed
(``fuzzer.cache.trial``); its findings are ``stale-cache`` ones, shrunk and confirmed
on new pairs, their scripts, briefs, culprits and issues this package's own.

Registered as the trial kind ``cache-pair`` (``fuzzer.judge.kinds``) through this
package's entry points (``dcefuzz run --cache-pairs``).
"""

from __future__ import annotations

from fuzzer.cache import blame, issue, scripts, trial
from fuzzer.cache.variants import Variant
from fuzzer.judge import contract
from fuzzer.judge.contract import STALE_CACHE, Verdict
from fuzzer.judge.observe import Gap
from fuzzer.judge.trial import UNTESTED, TrialResult
from fuzzer.limits import CACHE

#: the kind's name, as ``--cache-pairs`` asks for it
NAME = "cache-pair"


class CachePairs:
    """Two processes, one cache folder, the old declaration then the new one."""

    name = NAME
    findings = (STALE_CACHE,)
    # a pair's sides plant the campaign's fault themselves
    fault_in_sides = True

    def case(self, program_seed: int, config):
        return trial.cache_case(program_seed)

    def trial(self, program_seed: int, config):
        case = self.case(program_seed, config)
        variant = trial.variant_for(case, program_seed)
        if variant is None:
            return TrialResult(UNTESTED, Verdict(contract.OK, untested=[Gap("no-variant", "no variant applies")]))
        return trial.run_cache_trial(case, variant, config.device, config.backend, fault=config.fault,
                                     threads=config.side_threads)

    def oracle(self, found, device: str, backend: str, fault: str | None = None, threads: int | None = None):
        variant = Variant.from_json(found.variant)
        return lambda case: trial.judge_pair(case, variant, device, backend, fault=fault, threads=threads)

    def shrink_budget(self, config):
        return CACHE.shrink

    def script(self, entry) -> str:
        return scripts.script(entry)

    def brief(self, entry) -> str:
        return scripts.brief(entry)

    def culprit(self, entry, device: str, budget, fault: str | None = None, threads: int | None = None,
                key_only: bool = False):  # a pair's probes are its variant's, each needed for its key
        return blame.localise(entry.case, Variant.from_json(entry.variant), entry.bug_class, device, budget,
                              entry.backend, fault, threads)

    def issue(self, bug, entry):
        return issue.issue(bug, entry)


KIND = CachePairs()
