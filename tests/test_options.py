"""The command line's options (``fuzzer.cli.options``): durations, budgets, devices and
targets read, and what is refused with a usage error; no command run."""

import click
import pytest

from fuzzer.cli import options
from fuzzer.limits import OracleBudget

DEFAULT = OracleBudget(oracle_calls=150, seconds=120.0)


@pytest.mark.parametrize("text, seconds", [("90s", 90.0), ("10m", 600.0), ("2h", 7200.0), ("45", 45.0),
                                           ("1.5m", 90.0)])
def test_a_duration_reads_its_unit(text, seconds):
    assert options.parse_duration(text) == seconds
    assert options.Duration().convert(text, None, None) == seconds


@pytest.mark.parametrize("text", ["0s", "-5m", "ten minutes", "5d"])
def test_a_duration_that_is_none_is_refused(text):
    with pytest.raises(click.BadParameter):
        options.parse_duration(text)


@pytest.mark.parametrize("text, budget", [
    ("60", OracleBudget(60, 120.0)), ("5m", OracleBudget(150, 300.0)), ("60,5m", OracleBudget(60, 300.0)),
])
def test_a_budget_takes_calls_a_duration_or_both_the_rest_from_its_default(text, budget):
    assert options.BudgetType(DEFAULT).convert(text, None, None) == budget


@pytest.mark.parametrize("text", ["0", "60,soon"])
def test_a_budget_that_is_none_is_refused(text):
    with pytest.raises(click.BadParameter):
        options.BudgetType(DEFAULT).convert(text, None, None)


def test_a_default_is_spelled_as_it_is_read():
    assert options.BudgetType(DEFAULT).spell() == "150,2m"
    assert options.spelled(7200.0) == "2h" and options.spelled(90.0) == "90s"
    budget = OracleBudget(7, 5400.0)
    assert options.BudgetType(budget).convert(options.BudgetType(budget).spell(), None, None) == budget


def test_devices_targets_and_faults():
    assert options.resolve_device("cpu") == "cpu" and options.resolve_entry_device(None) is None
    with pytest.raises(click.BadParameter, match="tpu: Expected one of") as refused:
        options.resolve_device("tpu")
    assert refused.value.param_hint == "--device"
    assert options.chosen_targets(("compile",), None) == ("compile",)
    assert options.chosen_targets(("export", "compile"), "export,aoti") == ("export", "compile", "aoti")
    with pytest.raises(click.BadParameter, match="no target 'nowhere'") as refused:
        options.chosen_targets(("nowhere",), None)
    assert refused.value.param_hint == "--targets"
    names = options.fault_names()
    assert names[:len(options.catalogue_names())] == options.catalogue_names() and "test-segfault" in names


def test_an_entry_that_does_not_read_exits_2(tmp_path, capsys):
    (tmp_path / "bad.json").write_text("{}")
    with pytest.raises(SystemExit) as leaving:
        options.load_or_exit(str(tmp_path / "bad.json"))
    assert leaving.value.code == 2 and "error:" in capsys.readouterr().err


def _features_table() -> dict[str, float]:
    """docs/features.md's table of features: name -> weight, as its rows say."""
    import re
    from pathlib import Path

    text = (Path(__file__).parents[1] / "docs" / "features.md").read_text()
    return {m.group(1): float(m.group(2)) for m in re.finditer(r"^\| `([a-z0-9-]+)` \| ([0-9.]+) \|", text, re.M)}


def test_the_docs_table_of_features_is_the_registry():
    """Every feature the registry declares has its row in docs/features.md at its weight,
    and the table names no feature the registry lacks."""
    from fuzzer.program import features

    assert _features_table() == {f.name: f.weight for f in features.FEATURES}


def test_the_help_of_features_names_every_feature_of_the_registry():
    """``--features``' help is made from the registry, so no feature is missing from it."""
    from fuzzer.program import features

    text = options.features_help()
    for feature in features.FEATURES:
        assert f"{feature.name} ({feature.weight:g}): {feature.doc}" in text
