"""What ``dcefuzz run`` decides from its options before its campaign starts.

Click hands ``run`` its 28 options; they arrive here as one record (:class:`RunOptions`),
and what they decide (how the workers are launched, on which device, which shard,
targets and folder: :class:`Setup`) is decided once, a usage
error exiting 2 as click's, before the campaign's config is made from both.
"""

from __future__ import annotations

import contextlib
import json
from dataclasses import dataclass

import click

from fuzzer import __version__
from fuzzer.cache.kind import NAME as PAIRS
from fuzzer.campaign.state import DECLARATIONS_FILE
from fuzzer.cli.options import chosen_targets, exit_with, resolve_device, select_ops_or_exit, target_unavailable_or_exit
from fuzzer.files import atomic_write
from fuzzer.judge.kinds import PROGRAM
from fuzzer.limits import OracleBudget


@dataclass(frozen=True)
class RunOptions:
    """The options of ``dcefuzz run``, as click parses them (each field an option's
    destination; ``run --help`` says what each does)."""

    seconds: float | None
    programs: int | None
    seed: int
    device: str | None
    corpus_dir: str | None
    shard: str
    state_dir: str | None
    resume: bool
    jobs: int
    devices: str | None
    program_timeout: float | None
    memory_cap: int
    ray_address: str | None
    cache_pairs: bool
    feature_table: dict
    op_specs: tuple[str, ...]
    only_user_ops: bool
    strict_declarations: bool
    fault: str | None
    target: tuple[str, ...]
    target_list: str | None
    no_shrink: bool
    shrink_budget: OracleBudget
    no_triage: bool
    triage_budget: OracleBudget
    examples_per_bug: int
    known_dir: str | None
    avoid_held: bool


@dataclass(frozen=True)
class Setup:
    """What the options decide before anything runs."""

    #: how the workers are launched (``fuzzer.campaign.launch.Launch``)
    how: object
    #: the GPUs of ``--devices`` (None: not given)
    gpus: list[str] | None
    device: str
    #: the shard of the program stream (``fuzzer.campaign.state.Shard``)
    shard: object
    targets: tuple[str, ...]
    #: the campaign's folder (``fuzzer.campaign.state.CampaignFolder``)
    folder: object
    corpus_dir: str
    feature_table: dict


def set_up(options: RunOptions) -> Setup:
    """Decide what the options say; a usage error exits 2, as does a target that cannot
    run on the device."""
    from fuzzer.campaign import launch
    from fuzzer.campaign.state import CampaignFolder, new_run_folder
    from fuzzer.program import features as feats

    with usage_errors():
        how = launch.launch(options.ray_address, options.jobs, options.devices)
        gpus = launch.gpus(options.devices)
        device = launch.pool_device(options.device, gpus)
        dev = _ray_device(options.ray_address, device) if how is launch.Launch.RAY else resolve_device(device)
        sh = _shard(options.shard)
        targets = chosen_targets(options.target, options.target_list)
        launch.check_resume(options.resume, options.state_dir)
        state_dir = options.state_dir
        folder = CampaignFolder(state_dir if state_dir is not None else new_run_folder(options.seed, sh))
        launch.check_cache_pairs(options.cache_pairs, options.op_specs, targets)
    target_unavailable_or_exit(targets, dev)
    return Setup(how=how, gpus=gpus, device=dev, shard=sh, targets=targets, folder=folder,
                 corpus_dir=options.corpus_dir if options.corpus_dir is not None else str(folder.corpus),
                 feature_table=feats.NONE if options.cache_pairs else options.feature_table)


def announce(options: RunOptions, setup: Setup) -> None:
    """The campaign's first lines on stderr: seed, shard, device, how programs are drawn,
    the fault and targets, the features, the folders."""
    from fuzzer.campaign.state import DEFAULT_TARGETS, targets_text
    from fuzzer.program import features as feats

    click.echo(f"dcefuzz {__version__}: seed {options.seed}, shard {setup.shard}, device {setup.device}"
               + (f", fault {options.fault} planted" if options.fault else "")
               + (f", target {targets_text(setup.targets)}" if setup.targets != DEFAULT_TARGETS else "")
               + f"\nfeatures {feats.describe(setup.feature_table)}"
               + f"\ncampaign folder {setup.folder.path}, corpus {setup.corpus_dir}", err=True)


def config_of(options: RunOptions, setup: Setup, chosen, side_threads: int | None):
    """The campaign's ``Config``: the options as ``setup`` decided them, the ops
    ``chosen`` (``--ops``), the cache pairs' side threads of its plan, the keys known
    upstream (said on stderr)."""
    from fuzzer.campaign.config import Config

    return Config(seed=options.seed, device=setup.device, corpus_dir=setup.corpus_dir, fault=options.fault,
                  shrink=not options.no_shrink, shrink_budget=options.shrink_budget, triage=not options.no_triage,
                  triage_budget=options.triage_budget, examples_per_bug=options.examples_per_bug,
                  trial=PAIRS if options.cache_pairs else PROGRAM, side_threads=side_threads, targets=setup.targets,
                  features=tuple(setup.feature_table.items()), ops=chosen.ops,
                  declarations=len(chosen.findings), known=known_keys_of(options.known_dir),
                  known_dir=options.known_dir, avoid_held=options.avoid_held)


def known_keys_of(folder: str | None) -> tuple:
    """The bug keys of ``folder`` whose findings the campaign only counts
    (``fuzzer.corpus.known``)."""
    if folder is None:
        return ()
    from fuzzer.corpus import upstream
    from fuzzer.corpus.known import known_keys

    try:
        known = known_keys(folder)
    except upstream.UpstreamError as exc:
        raise click.BadParameter(str(exc), param_hint="--known-upstream") from None
    click.echo(f"known upstream: {len(known.keys)} bugs of {folder} are counted, not shrunk"
               + (f" ({known.vague} more whose key cannot tell causes apart are not)" if known.vague else ""),
               err=True)
    return known.keys


def ops_or_exit(options: RunOptions, setup: Setup):
    """The ops of ``--ops``, checked on the campaign's device; the declaration findings
    written into the campaign folder, and exit 1 on any with ``--strict-declarations``."""
    chosen = select_ops_or_exit(options.op_specs, options.only_user_ops, device=setup.device)
    folder = setup.folder
    if chosen.findings:
        folder.path.mkdir(parents=True, exist_ok=True)
        atomic_write(folder.path / DECLARATIONS_FILE, json.dumps(chosen.to_json(), indent=2) + "\n")
        if options.strict_declarations:
            exit_with(f"error: {len(chosen.left_out)} op(s) failed their declaration check "
                      f"({folder.path / DECLARATIONS_FILE}); --strict-declarations refuses to start", 1)
    return chosen


def _shard(text: str):
    from fuzzer.campaign.state import Shard

    try:
        return Shard.parse(text)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--shard") from None


def _ray_device(address: str, device: str | None) -> str:
    """Join the cluster first: the device is the actors' (``fuzzer.campaign.launch``).
    A cluster that cannot be reached exits 2."""
    from fuzzer.campaign import launch, ray_pool

    try:
        seconds = ray_pool.connect(address)
    except ray_pool.RayUnavailable as exc:
        exit_with(f"error: {exc}")
    gpus = ray_pool.cluster_gpus()
    click.echo(f"ray cluster {address} reached in {seconds:.1f}s: {gpus} GPUs", err=True)
    with usage_errors():
        return launch.ray_device(device, gpus)


@contextlib.contextmanager
def usage_errors():
    """A launch that cannot be (``fuzzer.campaign.launch.PlanError``) as click's usage
    error, or its bad parameter where one option is at fault."""
    from fuzzer.campaign.launch import PlanError

    try:
        yield
    except PlanError as exc:
        if exc.option is None:
            raise click.UsageError(str(exc)) from None
        raise click.BadParameter(str(exc), param_hint=exc.option) from None
