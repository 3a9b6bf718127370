"""Named limits: every size, count, chance and tolerance the pipeline uses, in one place.

Each group is a frozen dataclass so a limit is read as ``GEN.max_rank`` rather than
a bare number in the middle of the code, and so tests can build variants.  The
command line's defaults (``--shrink-budget``, ``--triage-budget``, ``--memory-cap``)
are read from here too.

Two kinds stay out.  What a repro script carries as text (``fuzzer.render.repro``'s
``CARRIED``: ``judge.numeric``'s tolerances, ``render.driver``'s polls and exit
statuses): a script imports nothing of dcefuzz, so those limits stay in the module the
script carries.  And ``fuzzer.internal``'s, a module of this one's layer, which
imports none of it.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass


@dataclass(frozen=True)
class OracleBudget:
    """Oracle calls and seconds one piece of work (a finding's shrink, its triage) may
    spend; when either is spent, the work stops with what it has."""

    oracle_calls: int
    seconds: float

    def within(self, seconds_left: float | None) -> OracleBudget:
        """This budget, cut to the time a campaign has left (None: no cut)."""
        if seconds_left is None or seconds_left >= self.seconds:
            return self
        return dataclasses.replace(self, seconds=max(0.0, seconds_left))


#: a budget that never runs out: for work bounded by its own passes (a shrinker's
#: confirmation, the 1-minimality check)
UNBOUNDED: OracleBudget = OracleBudget(oracle_calls=10**9, seconds=float("inf"))


@dataclass(frozen=True)
class GenLimits:
    max_symbols: int = 3
    max_inputs: int = 3
    max_rank: int = 3
    min_statements: int = 3
    max_statements: int = 12
    max_outputs: int = 3
    #: each symbol's least admissible size; 0 lets a binding use empty tensors.
    symbol_minimums: tuple[int, ...] = (0, 1, 1, 2)
    typical_sizes: tuple[int, ...] = (4, 6, 8, 9)
    min_bindings: int = 3
    binding_draws: int = 20
    attempts_per_statement: int = 8
    #: sizes a binding draws besides the typical ones: small primes, which no power of
    #: two divides, so a kernel's tiling meets a ragged edge
    primes: tuple[int, ...] = (3, 5, 7, 11, 13)
    #: chance a statement of a program that takes gradients runs under ``no_grad``
    no_grad_share: float = 0.2
    #: the share of a category's draws that go to a user's ops (``--ops``) beside
    #: dcefuzz's own forms of that category: however many families there are, most
    #: programs call a user's op
    user_form_share: float = 0.5
    #: chance a custom call (feature ``identical-calls``) is followed by the same call again
    identical_call_share: float = 0.3
    #: chance each symbolic dim of a mode's inputs gets a mark (``mark_dynamic`` and kin)
    mark_share: float = 0.4
    #: chance a transform's value of a dtype of its own (an autocast rule's bfloat16) is
    #: followed by a transform that takes that dtype (a write of it in a region): drawn
    #: on their own, the second would rarely meet the first
    transform_use_share: float = 0.5
    #: chance each input of a strided mode is given as a strided view
    strided_share: float = 0.6
    #: chance that a program with user ops gets inputs shaped for one of them (the first
    #: op with a signature other than one shape for all)
    user_shapes_share: float = 0.6


@dataclass(frozen=True)
class ShrinkLimits:
    #: oracle calls and seconds one finding's shrink may spend (``--shrink-budget``):
    #: enough for the statement halvings and the passes after them on a program of 12
    #: statements; when spent, the smallest case so far is kept
    budget: OracleBudget = OracleBudget(oracle_calls=150, seconds=120.0)


@dataclass(frozen=True)
class CampaignLimits:
    #: seconds between progress lines.
    progress_every_s: float = 10.0
    #: ``dcefuzz stats`` reads worker memory only after this many seconds of a campaign
    stats_warm_up_seconds: float = 60.0
    #: the plot's smoothed rate averages over at least this many seconds (and ~1/20 of
    #: the run)
    smooth_min_seconds: float = 60.0
    #: with ``--avoid-held``, draws of an index (its own and its redraws) while each
    #: holds a held bug's example (``fuzzer.campaign.avoidance``)
    avoid_draws: int = 8
    #: with ``--avoid-held``, the share of indices whose first draw runs whatever it
    #: holds: a new bug in a held one's company is slowed, never hidden for good
    avoid_explore: float = 0.1


@dataclass(frozen=True)
class PoolLimits:
    #: seconds a worker may spend on one program before it is killed
    program_seconds: float = 120.0
    #: seconds a new worker may take to import torch and report ready
    start_seconds: float = 300.0
    #: resident memory (MiB) above which a worker is killed (``--memory-cap``)
    memory_mb: int = 6144
    #: programs after which a worker is replaced by a fresh one
    recycle_after: int = 500
    #: a worker is replaced when its memory exceeds this factor of its warm reading
    #: (torch keeps a little per compiled program that no reset releases)
    recycle_growth: float = 1.1
    #: programs after which a worker's memory is read as its warm baseline (its
    #: first programs import lazily loaded modules and load the first kernels)
    recycle_baseline_programs: int = 20
    #: seconds between checks of the workers while waiting for reports
    poll_seconds: float = 0.25
    #: torch intra-op threads per worker (workers, not threads, use the cores)
    threads: int = 1
    #: programs after which a worker freezes the objects it holds (``gc.freeze``):
    #: by then torch's lazily imported modules are loaded
    freeze_after_programs: int = 1
    #: workers that may die before reporting ready before the campaign gives up
    max_failed_starts: int = 3
    #: oracle calls and seconds for shrinking one crash or timeout finding (each
    #: candidate that kills its process costs a process start, so fewer than usual)
    casualty_shrink: OracleBudget = OracleBudget(oracle_calls=60, seconds=300.0)
    #: time limit of one candidate while shrinking a timeout (the campaign's limit
    #: would make each hanging candidate cost minutes); the result is confirmed
    #: under the campaign's limit
    casualty_candidate_seconds: float = 30.0
    #: casualties waiting to be shrunk; more stay saved unshrunk (``dcefuzz shrink``)
    casualty_queue: int = 8
    #: fresh processes a casualty nothing smaller of died like is run in, at most, to see
    #: it die so again before it stays a finding (``reduce.casualty.dies_again``, which
    #: stops at the first that does): a worker that died on a program may have been
    #: corrupted by the ones before it, while a corrupted heap of the program's own kills
    #: only some processes (each start and compile costs 5 to 40 s): a case that kills
    #: one process in two is withdrawn once in 16, where two tries withdrew it once in 4
    casualty_confirmations: int = 4
    #: seconds past the end of a --time budget by which a pooled campaign has ended.  At
    #: the deadline nothing new starts and nothing running is waited for: the workers
    #: still holding a program are killed, idle ones get 4 s together to exit, the
    #: casualty shrink is aborted (its child killed) and the state saved.  The waits add
    #: up to about 8 s (with a casualty's 2 s stack dump just before the deadline and the
    #: shrinker's thread's 2 s); the rest is for the command's own exit
    end_grace_seconds: float = 15.0
    #: seconds the Ray relay waits on an actor's reports before it looks at the pool's
    #: pipe again (only a "stop" comes that way: programs go straight to the actor)
    ray_poll_seconds: float = 0.25
    #: seconds a Ray actor holds a ``drain`` call open waiting for news (a long poll)
    ray_drain_seconds: float = 1.0
    #: a Ray host's work thread's stack when the process's own limit says nothing
    #: usable (unlimited, or above ``max_stack_bytes``): the usual 8 MiB
    default_stack_bytes: int = 8 << 20
    #: the largest stack limit a Ray host's work thread takes from its process
    max_stack_bytes: int = 1 << 30


@dataclass(frozen=True)
class TriageLimits:
    #: seconds (120) and oracle calls (fresh compiles, 80) one finding's triage may
    #: spend (``--triage-budget``): the stage walk, switch probe and bisection; 4
    #: stages, 9 switches and the bisector's 10 to 50 (a bug in no subsystem of its
    #: table walks all the lowerings) fit under the calls; a triage cut short keeps
    #: what it found and says so
    budget: OracleBudget = OracleBudget(oracle_calls=80, seconds=120.0)
    #: example entries a campaign keeps per bug (the smallest); further hits only count
    examples_per_bug: int = 3
    #: shrink candidates a finding of a bug with its examples gets before its key-only
    #: triage: the statement pass's first halvings, which take a program of 12 to a
    #: few statements; each probe of the triage then compiles the smaller program (on
    #: seven unshrunk findings, 20 s in all against 43 s: ``benchmarks/triage.py
    #: --repeat``), and its key is made as a new finding's is, from a shrunk program
    #: (``campaign.entries.counted_only``)
    repeat_shrink_calls: int = 6
    #: hints a finding's shrink tries first, one per held bug of its family whose key
    #: says what its 1-minimal program does (``campaign.hints.hints_for``): each costs
    #: one candidate, and a family rarely holds more bugs keyed so than this
    shrink_hints: int = 3
    #: pairs of switches probed at most, where no switch alone removes a wrong result:
    #: each is a fresh compile out of the triage budget
    max_pairs: int = 10
    #: at most this many of the removed ops' rules are probed, one compile each (a shrunk
    #: program removes one or two; the budget is the triage's)
    max_rules: int = 4


@dataclass(frozen=True)
class CorpusLimits:
    #: the hit times an entry keeps, the newest (its hit count goes on counting)
    hit_times_kept: int = 500


@dataclass(frozen=True)
class SelftestLimits:
    #: findings a self-test campaign collects per fault (within its time) before it
    #: stops: enough to see whether triage keeps one fault one bug
    findings_per_fault: int = 3


@dataclass(frozen=True)
class VersionLimits:
    #: seconds one repro script may run under another interpreter: a crash or timeout
    #: entry's script gives its child up to ``REPORT.script_child_seconds`` (300 s) after
    #: importing torch, so twice that
    script_seconds: float = 600.0
    #: seconds that interpreter may take to import torch and print its version
    query_seconds: float = 120.0
    #: runs of the script per release for an entry that may not show every time: a
    #: crash (a corrupted heap dies when, and how, the allocator notices) or one whose
    #: recorded verdicts came and went; one that reproduces is enough (``dcefuzz
    #: reclass`` gives a crash as many runs to show its heap's words)
    flaky_tries: int = 3


@dataclass(frozen=True)
class IsolationLimits:
    #: bytes of a child's stderr kept to class its death by (``fuzzer.isolation.said``):
    #: glibc's heap words come just before it dies, after whatever torch logged
    said_kept_bytes: int = 64 * 1024
    #: seconds a child asked to stop may take before it is killed
    stop_grace_seconds: float = 2.0
    #: frames kept from a dumped stack, innermost first
    frames_kept: int = 8
    #: frames kept at most to reach the innermost frame of torch, where the first
    #: ``frames_kept`` hold none (a death in a library torch called, or in dcefuzz's code)
    frames_to_torch: int = 40
    #: seconds the parent waits for a child to write its stack after SIGUSR1
    dump_wait_seconds: float = 2.0
    #: seconds the one-time question "does glibc's malloc checking, preloaded, take
    #: effect in a child of this interpreter?" may take (``fuzzer.isolation.heapcheck``):
    #: a Python start that imports ctypes, about 0.1 s
    heapcheck_ask_seconds: float = 60.0
    #: polling interval while waiting for the dump
    dump_poll_seconds: float = 0.05


@dataclass(frozen=True)
class ReportLimits:
    #: detail lines quoted in an issue: the first few say what differs; a long list
    #: of every differing input is for the full script's output
    detail_lines: int = 5
    #: lines of an inline (brief) repro: what a reader takes in at a glance, with no
    #: scrolling in an issue; the report tests hold their bugs' briefs to it
    brief_lines: int = 40
    #: a stale-cache brief runs itself as two processes: ten lines more
    pair_brief_lines: int = 50
    #: one that judges gradients carries the helper that takes them: fifteen more
    pair_grad_brief_lines: int = 65
    #: what no brief of the corpus passes: one whose bug needs autograd formulas, a
    #: region, a mode and earlier bindings carries each (76 lines, all four), and one
    #: whose bug needs a tensor subclass carries the class (its 35 lines: 84 in all; 93
    #: with an effect's log beside it)
    brief_ceiling: int = 95
    #: the longest statement pattern a bug's title quotes whole (longer: the ops it calls)
    pattern_chars: int = 100
    #: lines of the compiled wrapper kept around each custom-op call in a report
    output_code_context: int = 2
    #: lines of the compiled wrapper a report shows at most
    output_code_lines: int = 40
    #: seconds a crash or timeout repro script lets its child run before calling it a
    #: hang (written into the script)
    script_child_seconds: int = 300


@dataclass(frozen=True)
class SiteLimits:
    #: the most of a campaign's torch log the site copies (its end)
    log_bytes: int = 2 * 1024 * 1024
    #: seconds between two looks at the campaign while serving it
    poll_seconds: float = 2.0


@dataclass(frozen=True)
class AuditLimits:
    #: every named size of a user op's opcheck inputs takes each of these in turn
    sizes: tuple[int, ...] = (0, 1, 2)
    #: the eager checks also run with the named sizes all different (2, 3, 4, ...), so
    #: an op that mixes up two dims shows
    distinct_from: int = 2
    #: the dims of a same-shape op's tensors, per size
    same_shape_tail: int = 3


@dataclass(frozen=True)
class CacheLimits:
    #: seconds one side of a cache pair may run (an import, two compiles, the runs)
    side_seconds: float = 240.0
    #: a campaign's time limit per program (two pairs) and per shrink candidate (one)
    program_seconds: float = 600.0
    #: bindings a cache pair runs (the first ones of the generated case): each side
    #: compiles once per recompile, and a stale artifact shows on the first
    bindings: int = 2
    #: the programs of cache pairs: small, since every shrink step is a pair (two
    #: processes, three compiles)
    generation: GenLimits = GenLimits(max_statements=6)
    #: the share of cache programs drawn without writes, so gradients can be taken
    grad_share: float = 0.25
    #: oracle calls (pairs, about 20 s each on 2 cores) and seconds a stale-cache
    #: finding's shrink may spend
    shrink: OracleBudget = OracleBudget(oracle_calls=16, seconds=420.0)


GEN = GenLimits()
SHRINK = ShrinkLimits()
CACHE = CacheLimits()
CAMPAIGN = CampaignLimits()
TRIAGE = TriageLimits()
CORPUS = CorpusLimits()
SELFTEST = SelftestLimits()
VERSIONS = VersionLimits()
ISOLATION = IsolationLimits()
REPORT = ReportLimits()
SITE = SiteLimits()
AUDIT = AuditLimits()
