"""The ``dcefuzz`` command line: thin wrappers over campaign, corpus and replay.

Exit codes: 0 success / nothing reproduces, 1 a replayed entry reproduces,
2 usage errors and unreadable entries.
"""

from __future__ import annotations

import json
import re
import sys

import click

from fuzzer import __version__

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(s|m|h)?\s*$")
_UNIT = {"s": 1, "m": 60, "h": 3600, None: 1}


def parse_duration(text: str) -> float:
    """``90s``, ``10m``, ``2h`` or a bare number of seconds."""
    m = _DURATION.match(text)
    if not m or float(m.group(1)) <= 0:
        raise click.BadParameter(f"{text!r} is not a duration like 90s, 10m or 2h")
    return float(m.group(1)) * _UNIT[m.group(2)]


class Duration(click.ParamType):
    name = "DURATION"

    def convert(self, value, param, ctx):
        if isinstance(value, (int, float)):
            return float(value)
        try:
            return parse_duration(value)
        except click.BadParameter as exc:
            self.fail(str(exc.message), param, ctx)


#: `dcefuzz stats` reads worker memory only after this many seconds of a campaign
STATS_WARM_UP_S = 60.0
DEVICE_HELP = "torch device to fuzz on: cpu, cuda or cuda:N (default: cuda when available, else cpu)"
ENTRY_DEVICE_HELP = "torch device to run on: cpu, cuda or cuda:N (default: the entry's recorded device)"


def _device(value: str | None) -> str:
    """The device to fuzz on: ``--device``, else CUDA when present, else the CPU."""
    from fuzzer.judge.execute import default_device, device_unavailable

    dev = value or default_device()
    reason = device_unavailable(dev)
    if reason is not None:
        raise click.BadParameter(f"{dev}: {reason}", param_hint="--device")
    return dev


def _entry_device(value: str | None) -> str | None:
    """``--device`` for commands on saved entries: checked when given, else None, so
    each entry runs on the device it was found on (never on a guess at this machine)."""
    return None if value is None else _device(value)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="dcefuzz")
def main() -> None:
    """Differential fuzzer for torch.compile's treatment of custom operators.

    Generates programs mixing pure, mutating and effectful custom ops with ordinary
    tensor ops over symbolic shapes, runs them eagerly and through
    torch.compile(dynamic=True), and saves every confirmed divergence to a corpus.
    """


def _catalogue_names() -> list[str]:
    """The faults the self-test plants and ``dcefuzz faults`` lists."""
    from fuzzer.faults import CATALOGUE
    return sorted(CATALOGUE)


def _fault_names() -> list[str]:
    """The catalogue's faults, then the test-only ones (which ``dcefuzz faults`` does not
    list, and the self-test never plants: some kill the process): the pool's tests plant
    those through ``run --inject-fault``."""
    from fuzzer.faults import TEST_ONLY
    return _catalogue_names() + sorted(TEST_ONLY)


class ShrinkBudgetType(click.ParamType):
    """``CALLS``, ``DURATION`` or ``CALLS,DURATION`` (e.g. ``150,2m``)."""

    name = "CALLS,DURATION"

    def convert(self, value, param, ctx):
        from fuzzer.reduce.shrinker import ShrinkBudget

        if isinstance(value, ShrinkBudget):
            return value
        default = ShrinkBudget()
        calls, seconds = default.oracle_calls, default.seconds
        for part in str(value).split(","):
            part = part.strip()
            if part.isdigit():
                calls = int(part)
                if calls < 1:
                    self.fail("oracle calls must be at least 1", param, ctx)
            else:
                try:
                    seconds = parse_duration(part)
                except click.BadParameter as exc:
                    self.fail(f"{value!r}: {exc.message} (or a number of oracle calls)", param, ctx)
        return ShrinkBudget(oracle_calls=calls, seconds=seconds)


def _fault_option(func):
    return click.option(
        "--inject-fault", "fault", default=None, metavar="NAME",
        type=click.Choice(_fault_names()),
        help="Plant a compiler fault from the catalogue (see `dcefuzz faults`).")(func)


def _shrink_options(func):
    func = click.option("--shrink-budget", type=ShrinkBudgetType(), default="150,2m", show_default=True,
                        help="Bound each shrink: oracle calls and/or time.")(func)
    return click.option("--no-shrink", is_flag=True, help="Save findings as found, unreduced.")(func)


@main.command()
@click.option("--time", "seconds", type=Duration(), default=None,
              help="Fuzz for this long (90s, 10m, 2h).")
@click.option("--programs", type=click.IntRange(min=1), default=None,
              help="Fuzz this many programs.")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True,
              help="Campaign seed: program i is a pure function of (seed, i).")
@click.option("--device", default=None, help=DEVICE_HELP)
@click.option("--corpus", "corpus_dir", default=None, type=click.Path(file_okay=False),
              help="Folder for findings (default: corpus/ in the campaign folder).")
@click.option("--shard", default="1/1", show_default=True, metavar="K/N",
              help="Run only shard K of N of the program stream (for N machines).")
@click.option("--state", "state_dir", default=None, type=click.Path(file_okay=False),
              help="Campaign folder for state.json and stats.jsonl "
                   "(default: a new .dcefuzz/runs/<UTC time>-seed<S>-shard<K>of<N>).")
@click.option("--resume", is_flag=True,
              help="Carry on from the saved state of the --state folder (same seed and shard).")
@click.option("--jobs", type=click.IntRange(min=0), default=1, show_default=True,
              help="Worker processes (0: run in this process, without isolation).")
@click.option("--devices", default=None, metavar="0,1,...",
              help="One worker per listed GPU (sets CUDA_VISIBLE_DEVICES); overrides --jobs.")
@click.option("--program-timeout", type=Duration(), default="120s", show_default=True,
              help="Time limit per program (and per candidate while shrinking a finding).")
@click.option("--memory-cap", type=click.IntRange(min=256), default=6144, show_default=True,
              metavar="MIB", help="Resident memory per worker above which it is replaced.")
@_fault_option
@_shrink_options
def run(seconds, programs, seed, device, corpus_dir, shard, state_dir, resume, jobs, devices,
        program_timeout, memory_cap, fault, no_shrink, shrink_budget):
    """Fuzz for a duration or a number of programs, then print a summary.

    Without --time or --programs the campaign runs 60 seconds.  Each new finding is
    shrunk before it is saved unless --no-shrink is given.  Programs run in worker
    processes: one that crashes, hangs or runs out of memory is replaced and its
    program saved as a crash or timeout finding.  The campaign's state is saved
    regularly, so --resume carries on where a stopped campaign left off.

    Each campaign gets a folder of its own (printed at start and in the summary):
    its state, its stats log and, unless --corpus names another, its corpus/.
    A folder that already holds a campaign is only used again with --resume.
    """
    from fuzzer.campaign.pool import PoolLimits, WorkerStartError, run_pool
    from fuzzer.campaign.session import Budget, Config, run_campaign
    from fuzzer.campaign.state import BadState, CampaignFolder, Shard, new_run_folder

    gpus = None
    if devices is not None:
        gpus = [d.strip() for d in devices.split(",") if d.strip()]
        if not gpus or not all(d.isdigit() for d in gpus):
            raise click.BadParameter(f"{devices!r} is not a list of GPU indices like 0,1",
                                     param_hint="--devices")
        device = device or "cuda"
    dev = _device(device)
    try:
        sh = Shard.parse(shard)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--shard") from None
    if seconds is None and programs is None:
        seconds = 60.0
    if resume and state_dir is None:
        raise click.UsageError("--resume needs --state DIR, the campaign folder to carry on from "
                               "(a run without --state starts in a new folder)")
    folder = CampaignFolder(state_dir if state_dir is not None else new_run_folder(seed, sh))
    corpus_dir = corpus_dir if corpus_dir is not None else str(folder.corpus)
    click.echo(f"dcefuzz {__version__}: seed {seed}, shard {sh}, device {dev}"
               + (f", fault {fault} planted" if fault else "")
               + f"\ncampaign folder {folder.path}, corpus {corpus_dir}", err=True)
    config = Config(seed=seed, device=dev, corpus_dir=corpus_dir, fault=fault,
                    shrink=not no_shrink, shrink_budget=shrink_budget)
    display = _Display()
    budget = Budget(seconds=seconds, programs=programs)
    try:
        if jobs == 0 and gpus is None:
            stats = run_campaign(config, budget, log=display.event, progress=display.status,
                                 shard=sh, folder=folder, resume=resume)
        else:
            limits = PoolLimits(program_seconds=program_timeout, memory_mb=memory_cap)
            stats = run_pool(config, budget, jobs=jobs, devices=gpus, limits=limits, shard=sh,
                             folder=folder, resume=resume, log=display.event, progress=display.status)
    except (BadState, WorkerStartError) as exc:
        display.close()
        click.echo(f"error: {exc}", err=True)
        sys.exit(2)
    display.close()
    click.echo(stats.summary())
    click.echo(f"campaign   {folder.path} (state.json, stats.jsonl)")
    click.echo(f"corpus     {corpus_dir}")
    for path in stats.saved:
        click.echo(f"saved {path}")
    if stats.mostly_untested:
        click.echo(f"warning: {sum(stats.untested.values())} of {stats.programs} programs did not run "
                   "wholly compiled (graph breaks, skipped frames): they tested nothing", err=True)


class _Display:
    """Progress on stderr: one live line on a terminal, plain lines otherwise."""

    def __init__(self) -> None:
        self.live = sys.stderr.isatty()
        self.shown = False

    def status(self, line: str) -> None:
        if self.live:
            click.echo("\r\033[K" + line, nl=False, err=True)
            self.shown = True
        else:
            click.echo(line, err=True)

    def event(self, line: str) -> None:
        self.close()
        click.echo(line, err=True)

    def close(self) -> None:
        if self.shown:
            click.echo("", err=True)
            self.shown = False


@main.command()
@click.argument("folder", type=click.Path(exists=True, file_okay=False))
@click.option("--json", "as_json", is_flag=True, help="Print the saved state as JSON.")
def stats(folder, as_json):
    """Summarise a campaign folder: totals, and the rate over time."""
    from fuzzer.campaign.state import BadState, CampaignFolder

    cf = CampaignFolder(folder)
    try:
        state = cf.load()
    except BadState as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(2)
    if as_json:
        click.echo(json.dumps(state.to_json(), indent=2))
        return
    rate = state.programs / state.seconds * 60 if state.seconds else 0.0
    kinds = ", ".join(f"{k} {n}" for k, n in sorted(state.findings.items())) or "none"
    click.echo(f"campaign   seed {state.seed}, shard {state.shard}, next program index {state.next_index}")
    click.echo(f"programs   {state.programs} in {state.seconds:.0f}s ({rate:.1f}/min)")
    click.echo(f"findings   {kinds}")
    click.echo(f"saved      {state.saved} entries, {state.repeats} repeat hits")
    click.echo(f"recompiles {state.recompiles}")
    untested = ", ".join(f"{r} {n}" for r, n in sorted(state.untested.items()))
    click.echo(f"untested   {sum(state.untested.values())}" + (f" ({untested})" if untested else ""))
    statuses = ", ".join(f"{k} {n}" for k, n in sorted(state.statuses.items()))
    click.echo(f"statuses   {statuses}")
    lines = cf.stats_lines()
    if lines:
        click.echo(f"{'elapsed':>8s} {'programs':>9s} {'per min':>8s} {'findings':>9s} "
                   f"{'workers':>8s} {'max rss MiB':>12s}")
        step = max(1, len(lines) // 10)
        for ln in lines[::step] + ([lines[-1]] if (len(lines) - 1) % step else []):
            per_min = ln["programs"] / ln["seconds"] * 60 if ln["seconds"] else 0.0
            rss = max(ln.get("worker_rss_mb") or [0])
            click.echo(f"{ln['seconds']:8.0f} {ln['programs']:9d} {per_min:8.1f} "
                       f"{sum(ln['findings'].values()):9d} {ln.get('workers_alive', ''):>8} "
                       f"{rss or '':>12}")
        # past the workers' warm-up, so the range shows growth, not start-up
        warm = [mb for ln in lines if ln["seconds"] >= STATS_WARM_UP_S
                for mb in ln.get("worker_rss_mb") or [] if mb]
        if warm:
            replaced = lines[-1].get("workers_replaced", 0)
            click.echo(f"memory     workers {min(warm)}-{max(warm)} MiB resident after the first "
                       f"{STATS_WARM_UP_S:.0f}s; {replaced} workers replaced (recycled or casualties)")


@main.command()
@click.option("--fault", "names", multiple=True, type=click.Choice(_catalogue_names()), metavar="NAME",
              help="Test only this fault (repeatable). Default: the whole catalogue.")
@click.option("--time-per-fault", "seconds", type=Duration(), default="60s", show_default=True,
              help="Campaign time for each fault.")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True)
@click.option("--device", default=None, help=DEVICE_HELP)
@click.option("--corpus", "corpus_dir", default=None, type=click.Path(file_okay=False),
              help="Keep the findings here (default: a temporary folder).")
def selftest(names, seconds, seed, device, corpus_dir):
    """Plant each fault in turn and check that a short campaign catches it.

    Prints a table (fault, detected, programs and seconds to the first finding,
    its kind, statements in the shrunk entry).  Exit 1 if any applicable fault
    is missed.
    """
    import tempfile

    from fuzzer.faults.selftest import run_selftest, table

    dev = _device(device)
    names = list(names) or _catalogue_names()
    with tempfile.TemporaryDirectory(prefix="dcefuzz-selftest-") as tmp:
        folder = corpus_dir or tmp
        click.echo(f"selftest: {len(names)} faults, {seconds:.0f}s each, seed {seed}, device {dev}", err=True)
        rows = []
        for name in names:
            rows += run_selftest([name], seconds, seed, dev, folder)
            r = rows[-1]
            click.echo(f"  {name}: " + ("n/a" if not r.applicable else "detected" if r.detected else "MISSED"),
                       err=True)
        click.echo(table(rows))
    sys.exit(1 if any(r.applicable and not r.detected for r in rows) else 0)


@main.command("faults")
def list_faults():
    """List the fault catalogue and whether each fault applies to this torch."""
    from fuzzer.faults import CATALOGUE

    for name in sorted(CATALOGUE):
        f = CATALOGUE[name]
        reason = f.unavailable()
        status = "applicable" if reason is None else f"n/a: {reason}"
        click.echo(f"{name:28s} {f.bug_class:18s} -> {f.expected_kind:14s} {status}")
        click.echo(f"    {f.description}")


@main.command("shrink")
@click.argument("entry")
@click.option("--device", default=None, help=ENTRY_DEVICE_HELP)
@click.option(
    "--shrink-budget", type=ShrinkBudgetType(), default="150,2m", show_default=True,
    help="Bound the shrink: oracle calls and/or time.")
def shrink_entry(entry, device, shrink_budget):
    """Shrink a saved entry again, in place, on the device it was found on.

    The reduced entry replaces the old one atomically.  Its signature names the
    reduced program, so its id can change: the old files are then removed (and if
    an entry with the new id exists, the hits are merged into it).
    """
    from pathlib import Path

    from fuzzer.judge.execute import device_unavailable
    from fuzzer.reduce.reshrink import reshrink

    e = _load_or_exit(entry)
    dev = _entry_device(device) or e.device
    reason = device_unavailable(dev)
    if reason is not None:
        click.echo(f"error: {e.id} was found on {dev}, which cannot run here: {reason} "
                   "(--device cpu shrinks it on the CPU)", err=True)
        sys.exit(2)
    result = reshrink(e, Path(entry).with_suffix(".json"), dev, shrink_budget)
    if result is None:
        click.echo(f"error: {e.id} does not reproduce here; nothing to shrink", err=True)
        sys.exit(1)
    path, before, after = result
    click.echo(f"{e.id}: {before} -> {after} statements, saved {path}")


@main.command()
@click.argument("paths", nargs=-1, required=True)
@click.option("--device", default=None, help=ENTRY_DEVICE_HELP)
@click.option("--json", "as_json", is_flag=True, help="One JSON object per entry on stdout.")
def replay(paths, device, as_json):
    """Replay corpus entries (files or folders): REPRODUCES, FIXED or ERROR each.

    Each entry runs on the device it was found on unless --device names one; an
    entry whose device this machine lacks is an ERROR that says so.  Exit 1 if any
    entry reproduces, 0 if none does, 2 on usage errors or unreadable entries
    (after replaying the readable ones).
    """
    from fuzzer.corpus.replay import ERROR, REPRODUCES, replay_entry
    from fuzzer.corpus.store import entries_in

    dev = _entry_device(device)
    found, bad = entries_in(paths)
    if not found and not bad:
        click.echo("no corpus entries found in " + ", ".join(paths), err=True)
        sys.exit(2)
    results = [replay_entry(p, dev) for p in found]
    for r in results:
        if as_json:
            click.echo(json.dumps(r.to_json()))
        else:
            click.echo(f"{r.outcome:10s} {r.id}  [{r.kind}] {r.detail}")
    for line in bad + [f"{r.path}: {r.detail}" for r in results if r.outcome == ERROR]:
        click.echo(f"error: {line}", err=True)
    if bad or any(r.outcome == ERROR for r in results):
        sys.exit(2)
    sys.exit(1 if any(r.outcome == REPRODUCES for r in results) else 0)


def _load_or_exit(path: str):
    from fuzzer.corpus.store import BadEntry, load

    try:
        return load(path)
    except BadEntry as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(2)


@main.command()
@click.argument("entry")
def show(entry):
    """Print an entry: what diverged, where, and the program."""
    e = _load_or_exit(entry)
    click.echo(f"{e.id}  [{e.kind}]  hits {e.hits}")
    click.echo(f"signature  {e.signature}")
    click.echo(f"found      {e.found} with torch {e.torch_version} on {e.device} ({e.backend})"
               + (f", fault {e.fault}" if e.fault else ""))
    click.echo(f"seed       {e.seed}, bindings {list(e.case.bindings)}")
    click.echo(f"statements {e.statements}")
    click.echo("detail:")
    for line in e.detail:
        click.echo(f"  {line}")
    from fuzzer.program import codegen
    click.echo("")
    click.echo(codegen.source(e.case.program), nl=False)


@main.command()
@click.argument("entry")
def repro(entry):
    """Print the standalone repro script of an entry."""
    from fuzzer.corpus import repro as scripts

    click.echo(scripts.render(_load_or_exit(entry)), nl=False)


@main.command()
@click.option("--seed", type=click.IntRange(min=0), required=True, help="Program seed.")
@click.option("--json", "as_json", is_flag=True, help="Print the IR as JSON instead of Python.")
def gen(seed, as_json):
    """Print the program generated from SEED (same seed and version: same text)."""
    from fuzzer.program import codegen
    from fuzzer.program.generate import generate

    case = generate(seed)
    if as_json:
        click.echo(json.dumps(case.to_json(), indent=2, sort_keys=True))
        return
    click.echo(f"# bindings: {list(case.bindings)}  input seed: {case.input_seed}")
    click.echo(codegen.source(case.program), nl=False)


if __name__ == "__main__":  # pragma: no cover
    main()
