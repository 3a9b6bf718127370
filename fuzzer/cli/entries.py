"""Commands on corpus entries and programs: ``shrink``, ``replay``, ``reclass``, ``show``, ``repro``, ``gen``,
``known``."""

from __future__ import annotations

import json
import re
import sys

import click

from fuzzer.cli.app import main
from fuzzer.limits import SHRINK
from fuzzer.cli.options import (
    ENTRY_DEVICE_HELP,
    budget_option,
    entry_target_option,
    exit_with,
    features_option,
    load_or_exit,
    ops_options,
    resolve_entry_device,
    select_ops_or_exit,
    target_option,
    target_unavailable_or_exit,
)


@main.command("shrink")
@click.argument("entry")
@click.option("--device", default=None, help=ENTRY_DEVICE_HELP)
@budget_option("--shrink-budget", SHRINK.budget, "Bound the shrink: oracle calls and/or time.")
@ops_options
@entry_target_option
def shrink_entry(entry, device, shrink_budget, op_specs, only_user_ops, target):
    """Shrink a saved entry again, in place, on the device it was found on.

    With --target another than the entry's own, the program is shrunk through that
    target and saved beside the entry as an entry of that target (the entry is kept).

    The reduced entry replaces the old one atomically.  Its signature names the
    reduced program, so its id can change: the old files are then removed (and if
    an entry with the new id exists, the hits are merged into it).  The shrink runs
    in a child process: a candidate that takes it down (a crash entry's candidates
    each run in one of their own) is reported, and the entry is left as it was.
    """
    from functools import partial
    from pathlib import Path

    from fuzzer.judge.execute import device_unavailable
    from fuzzer.replay.isolated import ShrinkerDied, ShrinkerFailed, reshrink_apart
    from fuzzer.user import selection

    # an entry names the modules of the user ops it calls; --ops loads them first,
    # from where they are now (the same module names)
    select_ops_or_exit(op_specs, only_user_ops, check=False, quiet=True)
    e = load_or_exit(entry)
    dev = resolve_entry_device(device) or e.device
    reason = device_unavailable(dev)
    if reason is not None:
        exit_with(f"error: {e.id} was found on {dev}, which cannot run here: {reason} "
                  "(--device cpu shrinks it on the CPU)")
    target_unavailable_or_exit((target or e.target,), dev)
    path = Path(entry).with_suffix(".json")
    # the child loads the user's ops again: its op registry starts empty
    again = partial(selection.select, list(op_specs or ()), only=only_user_ops, check=False)
    try:
        result = reshrink_apart(e, path, dev, shrink_budget, prepare=again, target=target)
    except ShrinkerDied as exc:
        exit_with(f"error: the process shrinking {e.id} died ({exc}) on a candidate "
                  f"program: one of them takes the process down (it may corrupt memory); "
                  f"{path} is as it was", 1)
    except ShrinkerFailed as exc:
        exit_with(f"internal error (dcefuzz's own, not a finding) while shrinking {e.id}:\n{exc}", 1)
    if result is None:
        exit_with(f"error: {e.id} does not reproduce here; nothing to shrink", 1)
    path, before, after = result
    click.echo(f"{e.id}: {before} -> {after} statements, saved {path}")


@main.command()
@click.argument("paths", nargs=-1, required=True)
@click.option("--device", default=None, help=ENTRY_DEVICE_HELP)
@click.option("--python", "python", default=None, metavar="PATH",
              help="Run each entry's repro script under this interpreter (another torch "
                   "install) instead of replaying here, and record the verdict in the "
                   "entry's `versions` under that interpreter's torch version.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per entry on stdout.")
@entry_target_option
def replay(paths, device, python, as_json, target):
    """Replay corpus entries (files or folders): REPRODUCES, FIXED or ERROR each.

    Each entry runs on the device it was found on unless --device names one; an
    entry whose device this machine lacks is an ERROR that says so.  Exit 1 if any
    entry reproduces, 0 if none does, 2 on usage errors or unreadable entries
    (after replaying the readable ones).

    With --python PATH each entry's repro script (rendered afresh; it needs only
    torch) runs under PATH instead, on the entry's device or --device (checked by
    the script there, not here), and the verdict (reproduces, fixed or error) is
    RECORDED in the entry's JSON, under `versions`, keyed by PATH's torch version.

    With --target each entry runs through that target instead of the one it was found
    through (an export entry through compile, say); it does not combine with --python,
    whose record is of the entry's own target.
    """
    from fuzzer.corpus.store import entries_in
    from fuzzer.replay.rerun import ERROR, REPRODUCES, replay_entry

    if python is None:
        dev = resolve_entry_device(device)

        def run(path, dev):
            return replay_entry(path, dev, target)
        where = ""
    else:
        from fuzzer.replay import versions

        if target is not None:
            raise click.UsageError("--target does not combine with --python: the versions an entry records "
                                   "are of its own target")
        dev = _device_for_another_torch(device)
        try:
            python = versions.interpreter(python)
            version = versions.torch_version(python)
        except versions.NotATorch as exc:
            raise click.BadParameter(str(exc), param_hint="--python") from None

        def run(path, dev):
            return versions.replay_under(path, python, version, dev)
        where = f"torch {version}: "
    found, bad = entries_in(paths)
    if not found and not bad:
        exit_with("no corpus entries found in " + ", ".join(paths))
    results = []
    for p in found:
        r = run(p, dev)
        results.append(r)
        if as_json:
            click.echo(json.dumps(r.to_json()))
        else:
            detail = r.detail.removeprefix(f"[{r.kind}] ")  # a divergence's line names its kind too
            click.echo(f"{r.outcome:10s} {r.id}  [{r.kind}] {where}{detail}")
    for line in bad + [f"{r.path}: {r.detail}" for r in results if r.outcome == ERROR]:
        click.echo(f"error: {line}", err=True)
    if bad or any(r.outcome == ERROR for r in results):
        sys.exit(2)
    sys.exit(1 if any(r.outcome == REPRODUCES for r in results) else 0)


@main.command()
@click.argument("paths", nargs=-1, required=True)
@click.option("--device", default=None, help=ENTRY_DEVICE_HELP)
def reclass(paths, device):
    """Judge corpus entries again under this dcefuzz's bug classes; rename those
    whose class is now another.

    Each entry's program runs twice from a fresh compile, as a replay does.  Where
    it shows the entry's bug again (its old class, an error's message, is what it
    shows now) under a class that has changed (an error is classed by where torch
    raised it), the entry is saved under the new class: new signature, id and repro
    script, its hits, history and culprit kept, and the ids in the folder's
    upstream.json follow.  Localise the renamed entries again with
    `dcefuzz triage --again`.  Exit 2 if any entry was left as it was because it
    could not be judged or showed another bug, else 0.
    """
    from pathlib import Path

    from fuzzer.corpus.store import entries_in
    from fuzzer.replay.reclass import LEFT, RENAMED, reclass_entry, rename_upstream

    dev = resolve_entry_device(device)
    found, bad = entries_in(paths)
    if not found and not bad:
        exit_with("no corpus entries found in " + ", ".join(paths))
    renamed: dict[Path, dict[str, str]] = {}
    left = 0
    for p in found:
        r = reclass_entry(p, dev)
        click.echo(r.line())
        left += r.outcome == LEFT
        if r.outcome == RENAMED:
            renamed.setdefault(Path(p).parent, {})[r.old_id] = r.new_id
    for folder, names in renamed.items():
        moved = rename_upstream(folder, names)
        if moved:
            click.echo(f"{folder / 'upstream.json'}: {moved} entry ids renamed")
    for line in bad:
        click.echo(f"error: {line}", err=True)
    click.echo(f"{sum(len(n) for n in renamed.values())} renamed, {left} left as they were")
    sys.exit(2 if bad or left else 0)


def _device_for_another_torch(value: str | None) -> str | None:
    """``--device`` for a script run under another interpreter: its form only is
    checked here (this torch may lack a GPU that the other one has)."""
    if value is None or value == "cpu" or re.fullmatch(r"cuda(:\d+)?", value):
        return value
    raise click.BadParameter(f"{value}: not cpu, cuda or cuda:N", param_hint="--device")


@main.command()
@click.argument("entry")
def show(entry):
    """Print an entry: what diverged, where, and the program."""
    e = load_or_exit(entry)
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
    click.echo(codegen.header(e.case.program) + codegen.source(e.case.program), nl=False)


@main.command()
@click.argument("entry")
@entry_target_option
def repro(entry, target):
    """Print the standalone repro script of an entry (through --target, when given,
    instead of the target it was found through)."""
    import dataclasses

    from fuzzer.judge import kinds

    e = load_or_exit(entry)
    click.echo(kinds.script(e if target is None else dataclasses.replace(e, target=target)), nl=False)


@main.command()
@click.option("--seed", type=click.IntRange(min=0), required=True, help="Program seed.")
@click.option("--json", "as_json", is_flag=True, help="Print the IR as JSON instead of Python.")
@features_option
@ops_options
@target_option
def gen(seed, as_json, feature_table, op_specs, only_user_ops, target):
    """Print the program generated from SEED (same seed, version, features and ops:
    same text): how it is compiled, its features, the function and, where its mode
    needs one, the step that marks its inputs, takes the loss and calls backward().
    With --ops, the ops are checked first as a campaign checks them (an op that fails
    is left out), so SEED gives the program a campaign would run; with --target, the
    program a campaign of that target would run."""
    from fuzzer.judge import targets
    from fuzzer.program import codegen
    from fuzzer.program.generate import generate

    chosen = select_ops_or_exit(op_specs, only_user_ops, quiet=True)
    case = generate(seed, features=targets.drawn_for(target, feature_table), ops=chosen.ops)
    if as_json:
        click.echo(json.dumps(case.to_json(), indent=2, sort_keys=True))
        return
    click.echo(f"# bindings: {list(case.bindings)}  input seed: {case.input_seed}")
    click.echo(codegen.header(case.program) + codegen.source(case.program), nl=False)


@main.command()
@click.argument("entries", nargs=-1, required=True)
@click.option("--reason", default="reproduces on a released torch",
              show_default=True, help="Why it is known (a tracker link, say).")
@click.option("--clear", is_flag=True, help="Unmark the entries: their bug is expected fixed again.")
def known(entries, reason, clear):
    """Mark corpus entries as known bugs, or --clear the mark.

    The pytest plugin (`pytest --dcefuzz-corpus DIR`) expects a known bug to reproduce
    (xfail) and reports it XPASS once it no longer does; an unmarked entry fails the
    run when it reproduces.  The mark is the entry's `known_bug` field.
    """
    from fuzzer.corpus import store

    for path in entries:
        e = load_or_exit(path)
        e.known_bug = None if clear else reason
        store.update(path, e)
        click.echo(f"{e.id}: " + ("unmarked" if clear else f"known bug ({reason})"))
