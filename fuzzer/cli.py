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


DEVICE_HELP = "torch device to fuzz on: cpu, cuda or cuda:N (default: cuda when available, else cpu)"


def _device(value: str | None) -> str:
    from fuzzer.execute import default_device
    import torch

    dev = value or default_device()
    try:
        parsed = torch.device(dev)
    except RuntimeError as exc:
        raise click.BadParameter(str(exc), param_hint="--device") from None
    if parsed.type == "cuda" and not torch.cuda.is_available():
        raise click.BadParameter("CUDA is not available on this machine", param_hint="--device")
    if parsed.type not in ("cpu", "cuda"):
        raise click.BadParameter(f"unsupported device type {parsed.type!r}", param_hint="--device")
    return dev


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="dcefuzz")
def main() -> None:
    """Differential fuzzer for torch.compile's treatment of custom operators.

    Generates programs mixing pure, mutating and effectful custom ops with ordinary
    tensor ops over symbolic shapes, runs them eagerly and through
    torch.compile(dynamic=True), and saves every confirmed divergence to a corpus.
    """


@main.command()
@click.option("--time", "seconds", type=Duration(), default=None,
              help="Fuzz for this long (90s, 10m, 2h).")
@click.option("--programs", type=click.IntRange(min=1), default=None,
              help="Fuzz this many programs.")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True,
              help="Campaign seed: program i is a pure function of (seed, i).")
@click.option("--device", default=None, help=DEVICE_HELP)
@click.option("--corpus", "corpus_dir", default="corpus", show_default=True,
              type=click.Path(file_okay=False), help="Folder for findings.")
def run(seconds, programs, seed, device, corpus_dir):
    """Fuzz for a duration or a number of programs, then print a summary.

    Without --time or --programs the campaign runs 60 seconds.
    """
    from fuzzer.campaign import Budget, run_campaign

    dev = _device(device)
    if seconds is None and programs is None:
        seconds = 60.0
    click.echo(f"dcefuzz {__version__}: seed {seed}, device {dev}, corpus {corpus_dir}", err=True)
    stats = run_campaign(seed, Budget(seconds=seconds, programs=programs), dev, corpus_dir)
    click.echo(stats.summary())
    for path in stats.saved:
        click.echo(f"saved {path}")


@main.command()
@click.argument("paths", nargs=-1, required=True)
@click.option("--device", default=None, help=DEVICE_HELP)
@click.option("--json", "as_json", is_flag=True, help="One JSON object per entry on stdout.")
def replay(paths, device, as_json):
    """Replay corpus entries (files or folders): REPRODUCES, FIXED or ERROR each.

    Exit 1 if any entry reproduces, 0 if none does, 2 on usage errors or
    unreadable entries (after replaying the readable ones).
    """
    from fuzzer.corpus import entries_in
    from fuzzer.replay import ERROR, REPRODUCES, replay_entry

    dev = _device(device)
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
    from fuzzer.corpus import BadEntry, load

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
    from fuzzer import codegen
    click.echo("")
    click.echo(codegen.source(e.case.program), nl=False)


@main.command()
@click.argument("entry")
def repro(entry):
    """Print the standalone repro script of an entry."""
    click.echo(_load_or_exit(entry).script(), nl=False)


@main.command()
@click.option("--seed", type=click.IntRange(min=0), required=True, help="Program seed.")
@click.option("--json", "as_json", is_flag=True, help="Print the IR as JSON instead of Python.")
def gen(seed, as_json):
    """Print the program generated from SEED (same seed and version: same text)."""
    from fuzzer import codegen
    from fuzzer.generate import generate

    case = generate(seed)
    if as_json:
        click.echo(json.dumps(case.to_json(), indent=2, sort_keys=True))
        return
    click.echo(f"# bindings: {list(case.bindings)}  input seed: {case.input_seed}")
    click.echo(codegen.source(case.program), nl=False)


if __name__ == "__main__":  # pragma: no cover
    main()
