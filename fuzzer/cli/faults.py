"""Commands of the fault catalogue: ``selftest`` and ``faults``."""

from __future__ import annotations

import sys

import click

from fuzzer.cli.app import main
from fuzzer.cli.options import (
    DEVICE_HELP,
    Duration,
    catalogue_names,
    resolve_device,
)
from fuzzer.judge.targets import names as target_names


@main.command()
@click.option("--fault", "names", multiple=True, type=click.Choice(catalogue_names()), metavar="NAME",
              help="Test only this fault (repeatable). Default: the whole catalogue.")
@click.option("--time-per-fault", "seconds", type=Duration(), default=None,
              help="Campaign time for each fault [default: the budget each fault carries, from 60s to "
                   "15m: what it needs to be found on a stock torch].")
@click.option("--quick", is_flag=True,
              help="Only the quick subset: one fault per bug class that a short campaign finds in "
                   "seconds (a check that fits in CI).")
@click.option("--target", default=None, type=click.Choice(target_names()),
              help="Only the faults planted in this target's pipeline, each campaign run through it "
                   "(docs/targets.md). Default: every fault, through the first target it is shown to meet.")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True)
@click.option("--device", default=None, help=DEVICE_HELP)
@click.option("--corpus", "corpus_dir", default=None, type=click.Path(file_okay=False),
              help="Keep the findings here (default: a temporary folder).")
def selftest(names, seconds, quick, target, seed, device, corpus_dir):
    """Plant each fault in turn and check that a short campaign catches it.

    Each fault gets the campaign time it carries (docs/faults.md), unless
    --time-per-fault says otherwise; a fault's campaign stops at its third finding.
    Prints the time the run may take, then a table (fault, detected, programs and
    seconds to the first finding, its kind, statements in the shrunk entry).  Exit 1
    if any applicable fault is missed.
    """
    import tempfile

    from fuzzer.campaign.selftest import budget_of, run_selftest, table
    from fuzzer.faults import CATALOGUE

    dev = resolve_device(device)
    names = list(names) or [n for n in catalogue_names() if (not quick or CATALOGUE[n].quick)
                            and (target is None or target in CATALOGUE[n].pipelines)]
    most = sum(budget_of(n, seconds) for n in names)
    with tempfile.TemporaryDirectory(prefix="dcefuzz-selftest-") as tmp:
        folder = corpus_dir or tmp
        each = f"{seconds:.0f}s each" if seconds is not None else "each its own budget"
        click.echo(f"selftest: {len(names)} faults, {each}, at most {most / 60:.0f} min of campaigns in all "
                   f"(a fault stops at its third finding), seed {seed}, device {dev}", err=True)
        rows = []
        for name in names:
            rows += run_selftest([name], seconds, seed, dev, folder, target=target)
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
