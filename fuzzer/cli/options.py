"""What the commands share: option types, option groups, devices, loading an entry."""

from __future__ import annotations

import re
import sys
from typing import NoReturn

import click

from fuzzer.limits import SHRINK, TRIAGE, OracleBudget

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
ENTRY_DEVICE_HELP = "torch device to run on: cpu, cuda or cuda:N (default: the entry's recorded device)"


def resolve_device(value: str | None) -> str:
    """The device to fuzz on: ``--device``, else CUDA when present, else the CPU."""
    from fuzzer.judge.execute import default_device, device_unavailable

    dev = value or default_device()
    reason = device_unavailable(dev)
    if reason is not None:
        raise click.BadParameter(f"{dev}: {reason}", param_hint="--device")
    return dev


def resolve_entry_device(value: str | None) -> str | None:
    """``--device`` for commands on saved entries: checked when given, else None, so
    each entry runs on the device it was found on (never on a guess at this machine)."""
    return None if value is None else resolve_device(value)


def catalogue_names() -> list[str]:
    """The faults the self-test plants and ``dcefuzz faults`` lists."""
    from fuzzer.faults import CATALOGUE
    return sorted(CATALOGUE)


def fault_names() -> list[str]:
    """The catalogue's faults, then the test-only ones (which ``dcefuzz faults`` does not
    list, and the self-test never plants: some kill the process): the pool's tests plant
    those through ``run --inject-fault``."""
    from fuzzer.faults import TEST_ONLY
    return catalogue_names() + sorted(TEST_ONLY)


def spelled(seconds: float) -> str:
    """``seconds`` as ``parse_duration`` reads it, in the largest whole unit."""
    for unit in ("h", "m"):
        if seconds % _UNIT[unit] == 0:
            return f"{seconds / _UNIT[unit]:g}{unit}"
    return f"{seconds:g}s"


class BudgetType(click.ParamType):
    """``CALLS``, ``DURATION`` or ``CALLS,DURATION`` (e.g. ``150,2m``): an ``OracleBudget``,
    whose parts not given are ``default``'s."""

    name = "CALLS,DURATION"

    def __init__(self, default: OracleBudget) -> None:
        self.default = default

    def spell(self) -> str:
        """The default as an option's default text (``150,2m``)."""
        return f"{self.default.oracle_calls},{spelled(self.default.seconds)}"

    def convert(self, value, param, ctx):
        if isinstance(value, OracleBudget):
            return value
        calls, seconds = self.default.oracle_calls, self.default.seconds
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
        return OracleBudget(oracle_calls=calls, seconds=seconds)


def budget_option(name: str, default: OracleBudget, help: str):
    """``--NAME-budget``: an ``OracleBudget``, ``default`` when not given."""
    kind = BudgetType(default)
    return click.option(name, type=kind, default=kind.spell(), show_default=True, help=help)


def fault_option(func):
    return click.option(
        "--inject-fault", "fault", default=None, metavar="NAME",
        type=click.Choice(fault_names()),
        help="Plant a compiler fault from the catalogue (see `dcefuzz faults`).")(func)


def shrink_options(func):
    func = budget_option("--shrink-budget", SHRINK.budget, "Bound each shrink: oracle calls and/or time.")(func)
    return click.option("--no-shrink", is_flag=True, help="Save findings as found, unreduced.")(func)

class Features(click.ParamType):
    """``--features``: feature weights (``fuzzer.program.features.parse``)."""

    name = "FEATURES"

    def convert(self, value, param, ctx):
        if isinstance(value, dict):
            return value
        from fuzzer.program import features

        try:
            return features.parse(value)
        except features.FeatureError as exc:
            self.fail(str(exc), param, ctx)


def features_help() -> str:
    from fuzzer.program import features

    return ("Which features programs may have: all, none, names (a,b), -name to drop one from all, "
            "name=weight to set its chance per program.  Features: "
            + "; ".join(f"{f.name} ({f.weight:g}): {f.doc}" for f in features.FEATURES) + ".")


def features_option(func):
    return click.option("--features", "feature_table", type=Features(), default="all", show_default=True,
                        help=features_help())(func)


def target_option(func):
    """``--target``: the pipeline programs are compiled and run through (``fuzzer.judge.targets``)."""
    from fuzzer.judge import targets

    return click.option("--target", type=click.Choice(targets.names()), default=targets.DEFAULT, show_default=True,
                        help=f"The pipeline each program is compiled and run through: {targets.help_text()}; "
                             "a program with a feature the target cannot run is not drawn for it "
                             "(docs/targets.md).")(func)


def targets_option(func):
    """``--target`` (repeatable) and ``--targets a,b``: the pipelines a campaign's programs
    are spread over (``fuzzer.judge.targets.spread``)."""
    from fuzzer.judge import targets

    func = click.option("--targets", "target_list", default=None, metavar="A,B",
                        help="Several targets at once, comma-separated: each program runs through one of "
                             "them, picked by its seed (the same program, the same target).")(func)
    return click.option("--target", "target", type=click.Choice(targets.names()), multiple=True,
                        help=f"The pipeline each program is compiled and run through: {targets.help_text()}; "
                             f"repeatable, as --targets; default {targets.DEFAULT}.  A program with a feature its "
                             "target cannot run is not drawn for it (docs/targets.md).")(func)


def chosen_targets(target: tuple, target_list: str | None) -> tuple[str, ...]:
    """``--target`` and ``--targets`` as one campaign's targets: each once, in the order
    given, checked (``targets.spread``, whose text they are read back from here)."""
    from fuzzer.judge import targets

    try:
        return tuple(targets.spread(list(target) + (target_list or "").split(",")).split(","))
    except targets.UnknownTarget as exc:
        raise click.BadParameter(str(exc), param_hint="--targets") from None


def entry_target_option(func):
    """``--target`` for commands on saved entries: the entry's own target unless given."""
    from fuzzer.judge import targets

    return click.option("--target", type=click.Choice(targets.names()), default=None,
                        help="Run the entry through this target instead of the one it was found through "
                             f"(the default): {', '.join(targets.names())} (docs/targets.md).")(func)


def exit_with(message: str, code: int = 2) -> NoReturn:
    """Stop the command: ``message`` on stderr, then exit with status ``code``."""
    click.echo(message, err=True)
    sys.exit(code)


def target_unavailable_or_exit(names: tuple[str, ...], device: str) -> None:
    """Exit 2 with a one-line reason when a target of ``names`` cannot run on ``device``
    here (``Target.unavailable``)."""
    from fuzzer.judge import targets

    for name in names:
        reason = targets.get(name).unavailable(device)
        if reason is not None:
            exit_with(f"error: target {name} cannot run here: {reason}")


def load_or_exit(path: str):
    from fuzzer.corpus.store import BadEntry, load

    try:
        return load(path)
    except BadEntry as exc:
        exit_with(f"error: {exc}")


def triage_option(func):
    return budget_option("--triage-budget", TRIAGE.budget,
                         "Bound each finding's triage: oracle calls and/or time.")(func)


def ops_options(func):
    """``--ops`` (repeatable) and ``--only-user-ops``: a user's custom ops in the programs."""
    func = click.option("--only-user-ops", is_flag=True,
                        help="Call only the --ops modules' custom ops, none of dcefuzz's own (the "
                             "ordinary tensor ops stay).")(func)
    return click.option("--ops", "op_specs", multiple=True, metavar="MODULE_OR_FILE",
                        help="A module (mypkg.ops) or file (path/ops.py) that registers custom ops to "
                             "fuzz with dcefuzz's own; repeatable.  Each op's declaration is checked "
                             "first, and an op that fails is left out (docs/user-ops.md).")(func)


def select_ops_or_exit(specs, only: bool, device: str = "cpu", check: bool = True, quiet: bool = False):
    """Load and check the ``--ops`` modules; a module that cannot be loaded exits 2."""
    from fuzzer.user import library, selection

    try:
        chosen = selection.select(specs, only=only, device=device, check=check)
    except library.LoadError as exc:
        exit_with(f"error: {exc}")
    if not quiet:
        for line in chosen.lines():
            click.echo(line, err=True)
    return chosen
