"""Commands of triage: ``triage``, ``bugs`` and ``report``."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from fuzzer.cli.app import main
from fuzzer.cli.options import (
    ENTRY_DEVICE_HELP,
    exit_with,
    load_or_exit,
    resolve_entry_device,
    triage_option,
)
from fuzzer.judge import targets


@main.command()
@click.argument("paths", nargs=-1, required=True)
@click.option("--device", default=None, help=ENTRY_DEVICE_HELP)
@click.option("--again", is_flag=True, help="Triage entries that already have a culprit too.")
@triage_option
def triage(paths, device, again, triage_budget):
    """Localise corpus entries (files or folders): stage, switches, pass; saved in place.

    Each entry's case is compiled afresh on torch's debugging backends, with named
    switches of Inductor thrown and with torch's compiler bisector (a stale-cache
    entry's pair is run again with the FX graph cache alone), and the culprit is
    written into the entry.  A crash or timeout is walked over the backends only, each
    in a fresh process of its own (a probe that kills the process would take the triage
    with it): the first whose process dies so is its stage.  An entry whose bug class an
    older dcefuzz made (its case shows the bug under today's class) is left as it
    was, with a line saying to run `dcefuzz reclass` first; exit 2.  Each entry is
    triaged with torch's intra-op threads at the number of the process that found it,
    as a replay runs it.  Then lists the bugs.
    """
    from fuzzer.corpus.store import entries_in

    dev = resolve_entry_device(device)
    found, bad = entries_in(paths)
    for line in bad:
        click.echo(f"error: {line}", err=True)
    if not found:
        sys.exit(2)
    said = [_triage_one(path, f"[{n}/{len(found)}]", dev, again, triage_budget)
            for n, path in enumerate(found, start=1)]
    outdated = said.count(OUTDATED)
    _list_bugs(sorted({p.parent for p in found}), as_json=False)
    if outdated:
        click.echo(f"{outdated} entries carry an older dcefuzz's bug class: run `dcefuzz reclass` on them, "
                   "then `dcefuzz triage --again`", err=True)
    if bad or outdated:
        sys.exit(2)


#: what ``_triage_one`` says of an entry whose class an older dcefuzz made
OUTDATED = "outdated"


def _triage_one(path: Path, count: str, device: str | None, again: bool, budget) -> str:
    """Triage the entry at ``path`` in place and say so on stderr; ``OUTDATED`` where its
    class is an older dcefuzz's, else "" (triaged, or passed over and said why)."""
    from fuzzer.campaign.entries import culprit_of
    from fuzzer.corpus.store import update
    from fuzzer.judge.execute import device_unavailable, intra_op_threads
    from fuzzer.triage import casualty
    from fuzzer.triage.culprit import triageable
    from fuzzer.triage.probe import OutdatedClass

    e = load_or_exit(str(path))
    if (e.culprit is not None and not again) or not (triageable(e.kind, e.backend)
                                                      or casualty.walks(e.kind, e.backend)):
        return ""
    run_on = device or e.device
    reason = device_unavailable(run_on)
    if reason is not None:
        click.echo(f"error: {e.id}: {run_on} cannot run here: {reason}", err=True)
        return ""
    try:
        with intra_op_threads(e.threads):  # some bugs show only with the finding's own number
            e.culprit = culprit_of(e, run_on, budget)
    except OutdatedClass as exc:  # an older dcefuzz's class: its probes would match nothing
        click.echo(f"error: {e.id}: {exc} (`dcefuzz reclass {path}`, then `dcefuzz triage --again`); "
                   "left as it was", err=True)
        return OUTDATED
    update(path, e)
    c = e.culprit
    if c is None:  # a finding of another target that compile does not show
        click.echo(f"{count} {e.id}: not localised ({e.target} alone: compile does not show it)", err=True)
        return ""
    shown = f"{c.blame}; cause {c.cause}" if c.cause else c.blame
    click.echo(f"{count} {e.id}: {shown or 'not localised'} ({c.oracle_calls} compiles, {c.seconds:.0f}s"
               + (", budget spent" if c.budget_exhausted else "") + ")", err=True)
    return ""


def corpus_folder(path: str | None) -> Path:
    """A corpus folder: ``path`` itself, its ``corpus/`` when it is a campaign folder, or
    (no path) the newest campaign's corpus under ``.dcefuzz/runs``."""
    from fuzzer.campaign.state import CORPUS_FOLDER, RUNS_ROOT

    if path is None:
        runs = sorted(RUNS_ROOT.glob("*/" + CORPUS_FOLDER)) if RUNS_ROOT.is_dir() else []
        if not runs:
            raise click.UsageError(f"no campaign under {RUNS_ROOT}: name a corpus folder")
        return max(runs, key=lambda p: p.parent.name)
    p = Path(path)
    if not p.is_dir():
        raise click.BadParameter(f"{path}: not a folder", param_hint="DIR")
    return p / CORPUS_FOLDER if (p / CORPUS_FOLDER).is_dir() else p


def _bugs_of(folders):
    from fuzzer.corpus.bugs import group
    from fuzzer.corpus.store import load_all

    entries, unreadable = load_all([str(f) for f in folders])
    return group(entries), entries, unreadable


def _upstream_of(folders):
    """The upstream records of ``folders`` joined; a bad file is a usage error."""
    from fuzzer.corpus import upstream

    records = []
    for f in folders:
        try:
            records += upstream.load(f).records
        except upstream.UpstreamError as exc:
            raise click.UsageError(str(exc)) from exc
    return upstream.Upstream(tuple(records))


def _list_bugs(folders, as_json: bool, as_markdown: bool = False) -> None:
    from fuzzer.corpus import upstream
    from fuzzer.render.table import culprit_words, markdown

    bugs, entries, unreadable = _bugs_of(folders)
    known = _upstream_of(folders)
    for line in unreadable:
        click.echo(f"error: {line}", err=True)
    for line in known.check(bugs):
        click.echo(f"warning: {upstream.FILE}: {line}", err=True)
    if as_json:
        click.echo(json.dumps([{**b.to_json(), "upstream": upstream.summary(known.of(b.entries))}
                               for b in bugs], indent=2))
        return
    if as_markdown:
        click.echo(markdown(bugs, known), nl=False)
        return
    size = {e.id: e.statements for e in entries}
    click.echo(f"{len(bugs)} bugs in {len(entries)} entries ({', '.join(str(f) for f in folders)})")
    for record, split in known.split(bugs):
        click.echo(f"one cause by {upstream.FILE} ({record.note or record.entries[0]}) is {len(split)} bugs "
                   f"here: {', '.join(split)}")
    for b in bugs:
        click.echo(f"\n{b.id}  {b.title}")
        click.echo(f"  culprit   {'; '.join(culprit_words(b))}")
        click.echo(f"  kinds     {', '.join(b.kinds)}")
        if set(b.targets) - {targets.DEFAULT}:
            click.echo(f"  targets   {', '.join(b.targets)}")
        click.echo(f"  entries   {len(b.entries)}: {', '.join(b.entries)}")
        click.echo(f"  hits      {b.hits}")
        click.echo(f"  smallest  {b.smallest} ({size[b.smallest]} statements)")
        click.echo(f"  seen      first {b.first_seen}, last {b.last_seen}")
        click.echo("  versions  " + ", ".join(f"{v} {r}" for v, r in b.versions.items()))
        click.echo(f"  history   {b.history.line()}")
        click.echo(f"  upstream  {upstream.line(known.of(b.entries))}")


@main.command()
@click.argument("folder", required=False)
@click.option("--json", "as_json", is_flag=True, help="A JSON list of bugs on stdout (with an upstream key each).")
@click.option("--markdown", "as_markdown", is_flag=True,
              help="The bugs as a markdown table (docs/bugs.md's), from the entries and upstream.json.")
def bugs(folder, as_json, as_markdown):
    """List the bugs of a corpus: its entries grouped by culprit and bug class.

    DIR is a corpus folder or a campaign folder (default: the newest campaign under
    .dcefuzz/runs).  Entries not yet triaged each stand alone (`dcefuzz triage DIR`).
    What is public about each bug comes from the folder's upstream.json, keyed by
    member entries (see docs/bugs.md).
    """
    if as_json and as_markdown:
        raise click.UsageError("--json and --markdown: choose one")
    _list_bugs([corpus_folder(folder)], as_json, as_markdown)


def _evidence(entry, with_code: bool, with_env: bool) -> tuple[list[str], str]:
    """The output-code lines (``fuzzer.render.output_code``) and collect_env text a
    report quotes, each only where asked and where it can be had."""
    from fuzzer.render.output_code import for_entry

    code = for_entry(entry) if with_code else []
    environment = ""
    if with_env:
        try:
            from torch.utils.collect_env import get_pretty_env_info
            environment = get_pretty_env_info()
        except Exception:  # noqa: BLE001 - torch's own tool failed: the report goes without it
            environment = ""
    return code, environment


@main.command()
@click.argument("bug")
@click.argument("folder", required=False)
@click.option("--out", type=click.Path(file_okay=False), default=None,
              help="Also write BUG-ID.md, BUG-ID-full.py and BUG-ID-repro.py into this folder.")
@click.option("--output-code/--no-output-code", default=True, show_default=True,
              help="Compile the entry here and show the lines of Inductor's output code that show the bug.")
@click.option("--collect-env/--no-collect-env", default=True, show_default=True,
              help="Add torch's collect_env for this machine, as PyTorch's issue template asks.")
def report(bug, folder, out, output_code, collect_env):
    """Print a bug as a PyTorch GitHub issue, in markdown, ready to file.

    BUG is a bug id (or a unique prefix of one) or an entry id; DIR as for
    `dcefuzz bugs`.  The issue shows the bug's smallest entry (or the entry named)
    as a short inline repro; the entry's full standalone script is the attachment.
    For an entry Inductor compiled, the entry is compiled here once and the lines
    of the output code that show the bug are quoted (--no-output-code: not), and
    torch's collect_env for this machine closes the Versions section.
    """
    from fuzzer.corpus.entry import SCRIPT_SUFFIX
    from fuzzer.judge import kinds
    from fuzzer.render.report import NoSuchBug, pick, render

    where = corpus_folder(folder)
    found, entries, unreadable = _bugs_of([where])
    for line in unreadable:
        click.echo(f"error: {line}", err=True)
    try:
        chosen, entry = pick(found, entries, bug)
    except NoSuchBug as exc:
        exit_with(f"error: {exc}")
    known = _upstream_of([where]).of(chosen.entries)
    code, environment = _evidence(entry, output_code, collect_env)
    if out is None:
        click.echo(render(chosen, entry, f"{entry.id}{SCRIPT_SUFFIX}", known, code, environment), nl=False)
        click.echo(f"full script to attach: `dcefuzz repro {where / entry.id}.json` prints it "
                   "(--out writes it beside the issue)", err=True)
        return
    folder_out = Path(out)
    folder_out.mkdir(parents=True, exist_ok=True)
    full = folder_out / f"{chosen.id}-full.py"
    text = render(chosen, entry, full.name, known, code, environment)
    (folder_out / f"{chosen.id}.md").write_text(text)
    full.write_text(kinds.script(entry))  # rendered here: a script kept on disk may be older than the contract
    (folder_out / f"{chosen.id}-repro.py").write_text(kinds.brief(entry))
    click.echo(text, nl=False)
    click.echo(f"wrote {folder_out / chosen.id}.md, {full.name}, {chosen.id}-repro.py", err=True)
