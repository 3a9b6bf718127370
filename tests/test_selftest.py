"""Self-test end to end on one planted fault: detected, saved with its name, FIXED without it."""

import pytest
from click.testing import CliRunner

from fuzzer.campaign.selftest import Row, table
from fuzzer.cli import main
from fuzzer.corpus.store import load


def test_table_lists_every_row():
    rows = [Row("a", "effect-dropped", "effect-log", True, True, 3, 1.5, "effect-log", 1, "effect-log-x",
                findings=3, bugs=1),
            Row("b", "mutation-lost", "wrong-mutation", False, note="not in this torch")]
    text = table(rows)
    assert "yes" in text and "n/a" in text and "not in this torch" in text
    assert len(text.splitlines()) == 4


@pytest.mark.compile
def test_selftest_detects_a_fault_and_its_entry_is_fixed_without_it(tmp_path):
    r = CliRunner().invoke(main, ["selftest", "--fault", "effect-dce", "--time-per-fault", "90s",
                                  "--corpus", str(tmp_path)])
    assert r.exit_code == 0, r.output
    header = next(line for line in r.output.splitlines() if line.startswith("fault "))
    row = [line for line in r.output.splitlines() if line.startswith("effect-dce ")][0]
    assert " yes " in row
    cells = dict(zip(header.split(), row.split()))
    # every finding of the one planted fault is one bug (the campaign collects up to 3)
    assert int(cells["findings"]) >= 1 and cells["bugs"] == "1", row
    entries = [load(p) for p in tmp_path.glob("*.json")]
    planted = [e for e in entries if e.kind == "effect-log"]
    assert planted and all(e.fault == "effect-dce" for e in planted)
    assert planted[0].statements <= 3
    replay = CliRunner().invoke(main, ["replay", str(tmp_path / f"{planted[0].id}.json")])
    assert replay.exit_code == 0, replay.output
    assert replay.output.startswith("FIXED")


def test_the_selftest_plants_the_catalogue_and_never_a_test_only_fault():
    from fuzzer.cli import selftest
    from fuzzer.faults import CATALOGUE, TEST_ONLY

    option = next(p for p in selftest.params if p.name == "names")
    assert sorted(option.type.choices) == sorted(CATALOGUE)
    r = CliRunner().invoke(main, ["selftest", "--fault", sorted(TEST_ONLY)[0]])
    assert r.exit_code == 2 and "Invalid value" in r.output


def test_each_fault_gets_the_budget_it_carries_unless_told(monkeypatch):
    """With no flags the self-test must pass on a stock torch: a fault that takes
    cache pairs minutes to find gets those minutes, not a flat 60 s."""
    from fuzzer.campaign import selftest as module
    from fuzzer.faults import CATALOGUE

    given = {}

    def record(name, seconds, seed, device, corpus_dir, log=None, target=None):
        given[name] = seconds
        return Row(name, CATALOGUE[name].bug_class, CATALOGUE[name].expected_kind, True, True)

    monkeypatch.setattr(module, "check_fault", record)
    r = CliRunner().invoke(main, ["selftest"])
    assert r.exit_code == 0, r.output
    assert given == {n: f.seconds for n, f in CATALOGUE.items()}
    assert given["cache-key-ignores-custom-passes"] >= 600
    assert "min of campaigns in all" in r.output
    given.clear()
    assert CliRunner().invoke(main, ["selftest", "--time-per-fault", "5s"]).exit_code == 0
    assert set(given.values()) == {5.0}
    given.clear()
    assert CliRunner().invoke(main, ["selftest", "--quick"]).exit_code == 0
    quick = {n for n, f in CATALOGUE.items() if f.quick}
    assert set(given) == quick and {CATALOGUE[n].bug_class for n in quick} >= {
        "effect-dropped", "mutation-lost", "effects-reordered", "dead-pure-kept", "compile-error"}
