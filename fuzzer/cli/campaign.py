"""Commands of campaigns: ``run``, ``stats`` and ``merge``."""

from __future__ import annotations

import json
import sys

import click

from fuzzer.campaign.state import DECLARATIONS_FILE, INTERNAL_FILE, untested_text, withdrawn_text
from fuzzer.cli import launching
from fuzzer.cli.app import main
from fuzzer.cli.options import (
    DEVICE_HELP,
    Duration,
    exit_with,
    fault_option,
    features_option,
    ops_options,
    shrink_options,
    spelled,
    targets_option,
    triage_option,
)
from fuzzer.internal import INTERNAL_ERROR
from fuzzer.limits import CACHE, CAMPAIGN, TRIAGE, PoolLimits


@main.command()
@click.option("--time", "seconds", type=Duration(), default=None,
              help="Fuzz for this long (90s, 10m, 2h).")
@click.option("--programs", type=click.IntRange(min=1), default=None,
              help="Fuzz this many programs.")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True,
              help="Campaign seed: program i is a pure function of (seed, i) and, with --avoid-held, the bugs held.")
@click.option("--known-upstream", "known_dir", type=click.Path(file_okay=False, exists=True), default=None,
              help="A corpus folder with an upstream.json (e.g. corpus): findings of the bugs it names as "
                   "public are classified, to be recognised, and counted, never shrunk in full.")
@click.option("--avoid-held/--no-avoid-held", default=False, show_default=True,
              help="Draw again a program that holds an example of a bug the corpus (or --known-upstream) "
                   "holds at the start: its statements wired alike, under its mode (docs/campaigns.md, "
                   "'Avoiding held bugs'); the campaign folder's avoid.json keeps the examples, "
                   "programs.jsonl says which draws were set aside and why.")
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
@click.option("--program-timeout", type=Duration(), default=None,
              help="Time limit per program (and per candidate while shrinking a finding) "
                   f"[default: {spelled(PoolLimits.program_seconds)}; "
                   f"with --cache-pairs {spelled(CACHE.program_seconds)}].")
@click.option("--memory-cap", type=click.IntRange(min=256), default=PoolLimits.memory_mb,
              show_default=True, metavar="MIB", help="Resident memory per worker above which it is replaced.")
@click.option("--ray", "ray_address", default=None, is_flag=False, flag_value="auto", metavar="[ADDRESS]",
              help="Run the workers as Ray actors: --ray (or --ray auto) joins the cluster this machine "
                   "belongs to, --ray HOST:PORT another, --ray local starts one here.  One actor per GPU "
                   "on a cluster with GPUs, else --jobs CPU actors (docs/scale.md; the ray extra).")
@click.option("--cache-pairs", is_flag=True,
              help="Run each program as a cache pair: compiled in two fresh processes sharing one "
                   "on-disk compile cache, the second with one op's declaration or a setting changed (docs/caches.md); "
                   "a difference between its warm and cold compiles is a stale-cache finding.")
@features_option
@ops_options
@click.option("--strict-declarations", is_flag=True,
              help="Refuse to start (exit 1) when an --ops op fails its declaration check, "
                   "instead of leaving it out.")
@fault_option
@targets_option
@shrink_options
@click.option("--no-triage", is_flag=True, help="Save findings without localising them (each stands alone "
              "as a bug until `dcefuzz triage`).")
@triage_option
@click.option("--examples-per-bug", type=click.IntRange(min=1), default=TRIAGE.examples_per_bug,
              show_default=True, help="Entries kept per bug (the smallest); further findings of it only count.")
def run(**given):
    """Fuzz for a duration or a number of programs, then print a summary.

    Without --time or --programs the campaign runs 60 seconds.  Each new finding is
    shrunk before it is saved unless --no-shrink is given, then triaged (its culprit
    found: stage, switches, pass) unless --no-triage is given.  Findings group into
    bugs; a bug keeps --examples-per-bug entries, the smallest, and further findings
    of it only count (`dcefuzz bugs` lists them).  Programs run in worker
    processes: one that crashes, hangs or runs out of memory is replaced and its
    program saved as a crash or timeout finding.  The campaign's state is saved
    regularly, so --resume carries on where a stopped campaign left off.

    Programs are drawn with --features, each a kind of code real programs write
    (its help below lists every one, with its chance per program; docs/features.md
    says what each draws).  Cache pairs draw programs without features.

    Every program is drawn from (seed, index) alone: with --avoid-held, drawn again
    where it holds a held bug's example (docs/campaigns.md).

    Each campaign gets a folder of its own (printed at start and in the summary):
    its state, its stats log and, unless --corpus names another, its corpus/.
    A folder that already holds a campaign is only used again with --resume.
    """
    from fuzzer.campaign import launch

    options = launching.RunOptions(**given)
    setup = launching.set_up(options)
    chosen = launching.ops_or_exit(options, setup)
    launching.announce(options, setup)
    plan = launch.plan(setup.how, options.jobs, setup.gpus, options.seconds, options.programs,
                       options.program_timeout, options.memory_cap, options.cache_pairs)
    config = launching.config_of(options, setup, chosen, plan.side_threads)
    stats = _started(plan, config, setup, options.resume)
    _print_summary(stats, setup.folder, setup.corpus_dir, chosen)


def _started(plan, config, setup: launching.Setup, resume: bool):
    """The campaign run to its end (carried on from its folder's state, with ``resume``),
    its progress on stderr (``_Display``); its stats.  A bad folder, a trial kind no entry
    point registers (dcefuzz run from a checkout it was not installed from) or workers that
    cannot start exit 2."""
    from fuzzer.campaign import launch
    from fuzzer.campaign.pool import WorkerStartError
    from fuzzer.campaign.state import BadState
    from fuzzer.judge import kinds

    try:  # every worker would fail each program on it: say so once, before any starts
        kinds.get(config.trial)
    except kinds.UnknownKind as exc:
        exit_with(f"error: {exc}")
    display = _Display()
    try:
        stats = launch.start(plan, config, shard=setup.shard, folder=setup.folder, resume=resume,
                             log=display.event, progress=display.status)
    except (BadState, WorkerStartError) as exc:
        display.close()
        exit_with(f"error: {exc}")
    display.close()
    return stats


def _print_summary(stats, folder, corpus_dir: str, chosen) -> None:
    click.echo(stats.summary())
    click.echo(f"campaign   {folder.path} (state.json, stats.jsonl)")
    click.echo(f"corpus     {corpus_dir}")
    if folder.torch_log.is_file() and folder.torch_log.stat().st_size:
        click.echo(f"torch log  {folder.torch_log} (what torch printed in the workers)")
    for path in stats.saved:
        click.echo(f"saved {path}")
    if chosen.findings:
        click.echo(f"declarations {len(chosen.findings)} finding(s) in the user's ops, left out: "
                   f"{', '.join(chosen.left_out)} ({folder.path / DECLARATIONS_FILE})")
    if stats.mostly_internal:
        click.echo(f"warning: {stats.statuses[INTERNAL_ERROR]} of {stats.programs} programs were dcefuzz's own "
                   "errors: they tested nothing (`internal`)", err=True)
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
@click.option("--plot", "plot_path", default=None, metavar="FILE.png",
              type=click.Path(dir_okay=False, writable=True),
              help="Also draw the stats log as a PNG: discovery, throughput, worker memory "
                   "(needs the plot extra: pip install 'dcefuzz[plot]').")
def stats(folder, as_json, plot_path):
    """Summarise a campaign folder: totals, the rate, bugs and memory over time, and
    each bug of its corpus with when it was first and last hit."""
    from fuzzer.campaign.state import BadState, CampaignFolder

    cf = CampaignFolder(folder)
    try:
        state = cf.load()
    except BadState as exc:
        exit_with(f"error: {exc}")
    lines = cf.stats_lines()
    found = _bugs(cf)
    if as_json:
        click.echo(json.dumps({**state.to_json(), "bugs": found}, indent=2))
    else:
        _print_stats(state, lines)
        _print_bugs(cf, found)
    if plot_path is not None:
        _plot(cf, state, lines, plot_path, quiet_stdout=as_json)


def _plot(cf, state, lines, path, quiet_stdout: bool) -> None:
    from fuzzer.campaign.plot import PlotUnavailable, plot
    from fuzzer.campaign.state import STATS_FILE

    if not lines:
        exit_with(f"error: {cf.path / STATS_FILE} has no lines to plot")
    try:
        out = plot(lines, path, title=f"{cf.path.resolve().name}: seed {state.seed}, "
                                      f"shard {state.shard}, {len(lines)} progress lines")
    except PlotUnavailable as exc:
        exit_with(f"error: {exc}")
    except OSError as exc:
        exit_with(f"error: cannot write the plot: {exc}")
    click.echo(f"plot       {out}", err=quiet_stdout)  # keeps --json's stdout JSON


def _bugs(cf) -> list[dict]:
    """The bugs of the campaign folder's own corpus, with when each was first and last hit."""
    from fuzzer.corpus.bugs import group
    from fuzzer.corpus.store import load_all

    if not cf.corpus.is_dir():
        return []
    entries, _ = load_all([str(cf.corpus)])
    return [{"id": b.id, "title": b.title, "entries": len(b.entries), "hits": b.hits,
             "first_seen": b.first_seen, "last_seen": b.last_seen} for b in group(entries)]


def _print_bugs(cf, found: list[dict]) -> None:
    if not found:
        return
    click.echo(f"bugs       {len(found)} in {cf.corpus} (`dcefuzz bugs {cf.path}` for the details)")
    for b in found:
        click.echo(f"  {b['id']}  hits {b['hits']:<4d} entries {b['entries']}  first {b['first_seen']}  "
                   f"last {b['last_seen']}  {b['title']}")


def _print_stats(state, lines) -> None:
    rate = state.programs / state.seconds * 60 if state.seconds else 0.0
    kinds = ", ".join(f"{k} {n}" for k, n in sorted(state.findings.items())) or "none"
    click.echo(f"campaign   seed {state.seed}, shard {state.shard}, next program index {state.next_index}")
    lost = state.statuses.get(INTERNAL_ERROR, 0)
    click.echo(f"programs   {state.programs} in {state.seconds:.0f}s ({rate:.1f}/min)"
               + (f", {lost} of them dcefuzz's own errors, tested by nothing (`internal`)" if lost else ""))
    click.echo(f"findings   {kinds}")
    click.echo(f"saved      {state.saved} entries, {state.repeats} repeat hits")
    click.echo(f"recompiles {state.recompiles}")
    untested = untested_text(state.untested, state.causes)
    click.echo(f"untested   {sum(state.untested.values())}" + (f" ({untested})" if untested else ""))
    reached = ", ".join(f"{k} {n}" for k, n in sorted(state.reached.items()))
    click.echo(f"reached    {reached or 'nothing judged apart'}")
    internal = ", ".join(f"{k} {n}" for k, n in sorted(state.internal.items()))
    click.echo(f"internal   {sum(state.internal.values())} (dcefuzz's own errors, never findings"
               + (f": {internal}; tracebacks in {INTERNAL_FILE}" if internal else "") + ")")
    click.echo(f"statuses   {', '.join(f'{k} {n}' for k, n in sorted(state.statuses.items()))}")
    click.echo(f"withdrawn  {withdrawn_text(state.withdrawn)}")
    if lines:
        click.echo(f"{'elapsed':>8s} {'programs':>9s} {'per min':>8s} {'findings':>9s} {'bugs':>5s} "
                   f"{'workers':>8s} {'max rss MiB':>12s}")
        step = max(1, len(lines) // 10)
        for ln in lines[::step] + ([lines[-1]] if (len(lines) - 1) % step else []):
            per_min = ln["programs"] / ln["seconds"] * 60 if ln["seconds"] else 0.0
            rss = max(ln.get("worker_rss_mb") or [0])
            click.echo(f"{ln['seconds']:8.0f} {ln['programs']:9d} {per_min:8.1f} "
                       f"{sum(ln['findings'].values()):9d} {ln.get('bugs', ''):>5} {ln.get('workers_alive', ''):>8} "
                       f"{rss or '':>12}")
        # past the workers' warm-up, so the range shows growth, not start-up
        warm = [mb for ln in lines if ln["seconds"] >= CAMPAIGN.stats_warm_up_seconds
                for mb in ln.get("worker_rss_mb") or [] if mb]
        if warm:
            replaced = lines[-1].get("workers_replaced", 0)
            click.echo(f"memory     workers {min(warm)}-{max(warm)} MiB resident after the first "
                       f"{CAMPAIGN.stats_warm_up_seconds:.0f}s; {replaced} workers replaced (recycled or casualties)")


@main.command()
@click.argument("out", type=click.Path(file_okay=False))
@click.argument("folders", nargs=-1, required=True, type=click.Path(exists=True, file_okay=False))
def merge(out, folders):
    """Merge the campaign folders of shard runs (--shard K/N, one seed) into OUT.

    OUT then reads as one run over every program the shards ran: counts summed, the
    programs run recorded (so `run --resume --state OUT` runs what is left, nothing
    twice), the corpora merged entry by entry (a bug found in several shards is one
    entry with every hit), the stats logs kept, each line tagged with its shard.
    Exit 2 when OUT holds a campaign already or the folders are not shards of one
    campaign (another seed, features or ops; a shard given twice).
    """
    from fuzzer.campaign.merge import merge as merge_folders
    from fuzzer.campaign.state import BadState

    try:
        merged = merge_folders(out, list(folders))
    except BadState as exc:
        exit_with(f"error: {exc}")
    state = merged.state
    click.echo(f"merged {len(folders)} folders into {out}: {state.programs} programs, next program index "
               f"{state.next_index}, findings {dict(state.findings) or 'none'}")
    click.echo(f"corpus {merged.new_entries} entries from {merged.entries} "
               f"({merged.merged_hits} found in more than one shard, their hits added)")
    for line in merged.unreadable:
        click.echo(f"unreadable: {line}", err=True)
