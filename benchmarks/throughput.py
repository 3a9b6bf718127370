"""Campaign throughput, side by side on the same generated programs, and worker memory.

    python benchmarks/throughput.py [--programs 60] [--rounds 3] [--fresh-programs 4] [--seed 0]
    python benchmarks/throughput.py --costs-only [--programs 20] [--rounds 1]
    python benchmarks/throughput.py --memory 500
    python benchmarks/throughput.py --targets export,aoti,compiled-autograd [--programs 30] [--seed 0]

Variants, each a fresh process on programs of the same campaign seed, drawn without
features (what the bare loop draws), timed from process start to exit (so each pays
its own import and cold compile):

  a  a bare loop: generate, compile with torch.compile(dynamic=True), run eager and
     compiled once per binding; no judging, no confirmation, nothing saved;
  b  dcefuzz: ``dcefuzz run --jobs 1 --no-shrink --no-triage`` (a warm worker
     does what a campaign does per program: judging every binding, the second eager
     and fp64 runs where the compiled run differs, confirming findings after a fresh
     compile, saving entries), like for like with a: no shrink, no triage;
  b2 ``b`` with ``--jobs 2``;
  c  one fresh subprocess per program (the design of most fuzzers), on
     ``--fresh-programs`` programs spread over the same range.

a, b and b2 each run on programs 0..N-1 and 0..2N-1.  Programs/min are reported
end to end (the 2N run: process starts and the first cold compile included) and
marginal (N programs over the difference of the two times: the fixed costs cancel,
leaving the steady state a long campaign runs at).  c has no fixed cost to cancel:
every program is a fresh process.

What a finding costs beyond its trial is measured apart, on the N programs: ``d`` is
``b`` with shrinking and triage on (into a corpus of its own), ``e`` the same programs
again into that corpus with one example per bug, so that every finding is of a bug
whose examples are full.  The seconds per finding are (d - b) / d's findings and
(e - b) / e's findings: what a new finding costs (confirm, shrink, triage) and what a
repeat of a known bug costs (the confirmation of each finding is in b already).  Those
are differences of two whole runs, a mean over a few findings each; where dcefuzz logs
its workers' clock (``programs.jsonl``'s ``trial`` and ``after_trial``), each program
with findings gives its own seconds after its trial too, and their median is printed
beside them: what the target ("a repeat costs at most 3 s beyond its trial, median")
reads, untouched by the load's drift between two runs.
``--costs-only`` runs b, d and e alone: to compare two versions of dcefuzz on what a
finding costs, run it under each, one right after the other.

Rounds: this machine's timings of identical work drift by 5-10% from one minute to the
next, more than the margin the targets leave, so the whole set of variants runs
``--rounds`` times, interleaved (each round starts with a different variant), and each
round gives its own ratios b/a, b/c, b2/b (targets 0.9, 5, 1.8).  The
script prints every round and the median of each ratio over the rounds.

Caches: every variant runs with Inductor's whole-graph caches off (FX graph cache,
AOTAutograd cache), since a real campaign rarely compiles the same program twice and
the variants run the same programs in turn; the kernel code cache stays on and is
warmed by one untimed pass of the bare loop first, so no variant pays cold kernel
builds that an earlier one already paid.

``--memory N`` measures worker memory over N programs: first the worker's own loop
(``run_trial`` and its per-program reset) in this process without recycling, which
shows what torch leaves behind per program; then a real ``dcefuzz run --jobs 1``,
whose worker memory (read from its stats lines) should stay within 10% of its first
reading after the warm-up, recycling included.

``--targets A,B`` gives a line per target (``fuzzer.judge.targets``): ``dcefuzz run
--jobs 1 --no-shrink --no-triage --target T`` on N programs, and ``--target compile`` on
the same programs (the same seed, and the features T draws with: none, which every
target runs, plus what T requires, so ``compiled-autograd``'s programs take gradients
through ``compile`` too), each in a fresh process with the whole-graph caches off;
programs per minute of campaign time (its ``state.json``: imports and the process
start left out), the ratio T/compile, and T's outcomes.  A target this machine cannot
run (``reduce-overhead`` without CUDA) says why on its line.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

BARE = """
import sys, time, torch
from fuzzer.program import codegen
from fuzzer.judge.execute import make_inputs
from fuzzer.program.generate import generate, program_seed
seed, start, count = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
for i in range(start, start + count):
    case = generate(program_seed(seed, i))
    torch._dynamo.reset()
    compiled = torch.compile(codegen.build(case.program), dynamic=True)
    eager = codegen.build(case.program)
    for b in range(len(case.bindings)):
        eager(*make_inputs(case, b, "cpu"))
        try:
            compiled(*make_inputs(case, b, "cpu"))
        except Exception:
            pass
"""


#: whole-graph caches off for every variant (see the module docstring)
ENV = dict(os.environ, TORCHINDUCTOR_FX_GRAPH_CACHE="0", TORCHINDUCTOR_AUTOGRAD_CACHE="0")


def _timed(cmd: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENV)
    return time.perf_counter() - start


#: the variants timed on N and 2N programs, and the labels they print under
RUNS = (("a", "bare loop"), ("b", "dcefuzz --jobs 1"), ("b2", "dcefuzz --jobs 2"))
LABELS = {"a": "a bare loop", "b": "b dcefuzz, 1 warm worker",
          "b2": "b2 dcefuzz, 2 warm workers", "c": "c fresh process per program"}
#: (name, numerator, denominator, target)
RATIOS = (("b/a", "b", "a", 0.9), ("b/c", "b", "c", 5), ("b2/b", "b2", "b", 1.8))


def _rates(times: dict, n: int, fresh: tuple[int, float]) -> tuple[dict, dict]:
    """Programs/min of one round: end to end (2N run) and marginal (N over the difference)."""
    end_to_end = {k: 2 * n / t2 * 60 for k, (_, t2) in times.items()}
    marginal = {k: n / (t2 - t1) * 60 if t2 > t1 else float("nan") for k, (t1, t2) in times.items()}
    end_to_end["c"] = marginal["c"] = fresh[0] / fresh[1] * 60
    return end_to_end, marginal


def _findings(state: str) -> int:
    with open(os.path.join(state, "state.json")) as fh:
        return sum(json.load(fh)["findings"].values())


def throughput(programs: int, rounds: int, fresh_programs: int, seed: int, costs_only: bool = False) -> None:
    """Each round times a, b, b2 on N and 2N programs, c on a few, and the costs
    of a finding and of a repeat; see the docstring."""
    py = sys.executable
    n, n2 = programs, 2 * programs
    spread = [i * n2 // fresh_programs for i in range(fresh_programs)]
    runs_of = RUNS
    per_round, costs = [], []
    with tempfile.TemporaryDirectory() as tmp:
        runs = itertools.count()

        def dcefuzz(jobs: int, count: int, *flags: str, run: str | None = None) -> tuple[float, str]:
            run = run or os.path.join(tmp, f"run{next(runs)}")
            state = os.path.join(run, f"state{next(runs)}")
            return _timed([py, "-m", "fuzzer", "run", "--programs", str(count), "--seed", str(seed),
                           "--jobs", str(jobs), "--features", "none", "--corpus", os.path.join(run, "corpus"),
                           "--state", state, *flags]), state

        quick = ("--no-shrink", "--no-triage")

        def bare(count: int) -> float:
            return _timed([py, "-c", BARE, str(seed), "0", str(count)])

        variants = {"a": bare, "b": lambda c: dcefuzz(1, c, *quick)[0],
                    "b2": lambda c: dcefuzz(2, c, *quick)[0]}
        warm = bare(n2)
        print(f"(warm-up pass of the bare loop over {n2} programs: {warm:.1f}s, not counted)", flush=True)
        for r in range(rounds):
            if costs_only:
                times = {"b": (variants["b"](n), None)}
                print(f"round {r + 1}:\n   b  dcefuzz --jobs 1   {n} programs in {times['b'][0]:6.1f}s", flush=True)
                _costs(dcefuzz, n, times["b"][0], os.path.join(tmp, f"costs{r}"), costs)
                continue
            order = [key for key, _ in runs_of[r % len(runs_of):] + runs_of[:r % len(runs_of)]]
            first = {key: variants[key](n) for key in order}
            times = {key: (first[key], variants[key](n2)) for key in order}
            fresh = sum(_timed([py, "-c", BARE, str(seed), str(i), "1"]) for i in spread)
            print(f"round {r + 1} (order {', '.join(order)}):", flush=True)
            for key, label in runs_of:
                print(f"   {key:2s} {label:18s} {n} programs in {times[key][0]:6.1f}s, "
                      f"{n2} in {times[key][1]:6.1f}s", flush=True)
            print(f"   c  process per program {fresh_programs} programs in {fresh:.1f}s", flush=True)
            per_round.append(_rates(times, n, (fresh_programs, fresh)))
            _costs(dcefuzz, n, times["b"][0], os.path.join(tmp, f"costs{r}"), costs)

    if not costs_only:
        _rate_table(per_round, rounds)
    print(f"seconds beyond the trial, median of {rounds} rounds: a new finding (shrink, triage) "
          f"{statistics.median(c[0] for c in costs):.1f}, a repeat of a bug with its examples "
          f"{statistics.median(c[1] for c in costs):.1f}")
    print(f"the same per program, on the worker's clock (median of the rounds' medians): a new finding "
          f"{statistics.median(c[2] for c in costs):.1f}, a repeat {statistics.median(c[3] for c in costs):.1f}")


def _costs(dcefuzz, n: int, base: float, run: str, costs: list) -> None:
    """d and e of one round (see the docstring): what a new finding and a repeat cost."""
    d, d_state = dcefuzz(1, n, run=run)
    e, e_state = dcefuzz(1, n, "--examples-per-bug", "1", run=run)
    fd, fe = _findings(d_state), _findings(e_state)
    per_new = (d - base) / fd if fd else float("nan")
    per_repeat = (e - base) / fe if fe else float("nan")
    new_after, repeat_after = _after_trial(d_state), _after_trial(e_state)
    costs.append((per_new, per_repeat, _median(new_after), _median(repeat_after)))
    print(f"   d  shrink and triage: {n} programs in {d:6.1f}s, {fd} findings: {per_new:5.1f}s a finding"
          + _said(new_after), flush=True)
    print(f"   e  again, every bug known: {e:6.1f}s, {fe} findings: {per_repeat:5.1f}s a repeat"
          + _said(repeat_after), flush=True)


def _after_trial(state: str) -> list[float]:
    """The seconds each program with findings took after its trial, on the worker's own
    clock (``programs.jsonl``'s ``after_trial``; none from a dcefuzz that does not log it)."""
    path = os.path.join(state, "programs.jsonl")
    if not os.path.isfile(path):
        return []
    with open(path) as fh:
        lines = [json.loads(ln) for ln in fh if ln.strip()]
    return [ln["after_trial"] for ln in lines if ln.get("bugs") and "after_trial" in ln]


def _median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def _said(after: list[float]) -> str:
    if not after:
        return ""
    return f"; per program after its trial: median {_median(after):.1f}s, max {max(after):.1f}s ({len(after)})"


def _rate_table(per_round: list, rounds: int) -> None:
    print()
    print(f"{'variant':30s} {'end to end':>11s} {'marginal':>9s}  (programs/min, median of {rounds} rounds)")
    for key, label in LABELS.items():
        print(f"{label:30s} {statistics.median([e[key] for e, _ in per_round]):11.1f} "
              f"{statistics.median([m[key] for _, m in per_round]):9.1f}")
    print()
    print(f"{'ratio':6s} {'end to end':>11s} {'marginal':>9s}  target   (each round: end to end / marginal)")
    for name, top, bottom, target in RATIOS:
        ends = [e[top] / e[bottom] for e, _ in per_round]
        margins = [m[top] / m[bottom] for _, m in per_round]
        rows = ", ".join(f"{x:.2f}/{y:.2f}" for x, y in zip(ends, margins))
        print(f"{name:6s} {statistics.median(ends):11.2f} {statistics.median(margins):9.2f}  >= {target:<4}   {rows}")
    print()


def memory(programs: int, seed: int) -> None:
    """Worker memory over ``programs`` programs, two ways.

    1. The worker's loop in this process (``run_trial``, which resets dynamo per
       program), with no recycling: the growth torch leaves behind per program.
    2. A real campaign (``dcefuzz run --jobs 1``), its worker's resident memory read
       from the campaign's stats lines: what recycling makes of that growth.
    """
    from fuzzer.isolation.process import rss_kb
    from fuzzer.judge.trial import run_trial
    from fuzzer.limits import PoolLimits
    from fuzzer.program.generate import generate, program_seed

    warm = PoolLimits().recycle_baseline_programs
    print(f"1. the worker loop in one process, no recycling ({programs} programs)")
    marks = {}
    start = time.perf_counter()
    for i in range(programs):
        run_trial(generate(program_seed(seed, i)), "cpu")
        if i + 1 == warm or (i + 1) % 50 == 0 or i + 1 == programs:
            marks[i + 1] = rss_kb()
            print(f"   after {i + 1:4d} programs: {marks[i + 1] / 1024:7.1f} MiB "
                  f"({time.perf_counter() - start:.0f}s)", flush=True)
    base, last = marks[warm], marks[programs]
    print(f"   growth from program {warm} to {programs}: {100 * (last - base) / base:.1f}% "
          f"({(last - base) / 1024 / (programs - warm):.2f} MiB a program)")

    print(f"2. dcefuzz run --jobs 1 --programs {programs} --no-shrink (recycling on)")
    with tempfile.TemporaryDirectory() as tmp:
        state = os.path.join(tmp, "state")
        subprocess.run([sys.executable, "-m", "fuzzer", "run", "--programs", str(programs),
                        "--seed", str(seed), "--jobs", "1", "--no-shrink",
                        "--corpus", os.path.join(tmp, "corpus"), "--state", state],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENV)
        with open(os.path.join(state, "stats.jsonl")) as fh:
            lines = [json.loads(line) for line in fh if line.strip()]
    readings = [(ln["programs"], ln["worker_rss_mb"][0], ln.get("workers_replaced", 0))
                for ln in lines if ln.get("worker_rss_mb") and ln["worker_rss_mb"][0]]
    for done, mb, replaced in readings:
        print(f"   after {done:4d} programs: {mb:5d} MiB, {replaced} recycled")
    warm_readings = [mb for done, mb, _ in readings if done >= warm]
    if warm_readings:
        base = warm_readings[0]
        print(f"   growth past the first reading after program {warm}: "
              f"{100 * (max(warm_readings) - base) / base:.1f}% (target < 10%)")


def per_target(names: list[str], programs: int, seed: int) -> None:
    """A line per target: its programs/min against ``compile`` on the same programs."""
    from fuzzer.judge import targets
    from fuzzer.program import features

    py = sys.executable
    print(f"targets, {programs} programs each, seed {seed}, --jobs 1 --no-shrink --no-triage, "
          "programs/min of campaign time, against compile on the same programs:")
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            reason = targets.get(name).unavailable("cpu")
            if reason is not None:
                print(f"  {name:18s} not run: {reason}")
                continue
            table = targets.drawn_for(name, features.NONE)
            spec = ",".join(f"{f}={w:g}" for f, w in table.items()) or "none"
            rates = {}
            for through in (name, targets.COMPILE):
                state = os.path.join(tmp, f"{name}-{through}")
                subprocess.run([py, "-m", "fuzzer", "run", "--programs", str(programs), "--seed", str(seed),
                                "--jobs", "1", "--no-shrink", "--no-triage", "--features", spec,
                                "--target", through, "--state", state], check=True, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, env=ENV)
                with open(os.path.join(state, "state.json")) as fh:
                    done = json.load(fh)
                rates[through] = (done["programs"] / done["seconds"] * 60, done)
            rate, done = rates[name]
            print(f"  {name:18s} {rate:6.1f}/min  compile {rates[targets.COMPILE][0]:6.1f}/min  "
                  f"ratio {rate / rates[targets.COMPILE][0]:.2f}  features {spec}  statuses "
                  f"{json.dumps(done['statuses'], sort_keys=True)}  untested {json.dumps(done['untested'], sort_keys=True)}"
                  f"  findings {json.dumps(done['findings'], sort_keys=True)}", flush=True)


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text} is not a positive whole number")
    return value


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--programs", type=_positive, default=60)
    ap.add_argument("--rounds", type=_positive, default=3)
    ap.add_argument("--fresh-programs", type=_positive, default=4)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--costs-only", action="store_true",
                    help="time only b, d and e: what a new finding and a repeat cost")
    ap.add_argument("--memory", type=_positive, default=None, metavar="N")
    ap.add_argument("--targets", default=None, metavar="A,B",
                    help="a line per target: programs/min against compile on the same programs")
    args = ap.parse_args()
    if args.targets:
        per_target([t for t in args.targets.split(",") if t], args.programs, args.seed)
    elif args.memory:
        memory(args.memory, args.seed)
    else:
        throughput(args.programs, args.rounds, args.fresh_programs, args.seed, args.costs_only)
    return 0


if __name__ == "__main__":
    sys.exit(main())
