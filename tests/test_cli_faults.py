"""The fault commands (``fuzzer.cli.faults``): the catalogue listed with whether each fault
applies here; the self-test refusing what it cannot run, before any campaign."""

from click.testing import CliRunner

from fuzzer import faults
from fuzzer.cli import faults as faults_cli
from fuzzer.cli import main


def test_the_catalogue_is_listed_each_fault_with_its_class_and_whether_it_applies():
    listed = CliRunner().invoke(main, ["faults"])
    assert listed.exit_code == 0
    names = [line.split()[0] for line in listed.output.splitlines() if not line.startswith(" ")]
    assert names == sorted(faults.CATALOGUE)
    assert all("applicable" in line for line in listed.output.splitlines() if not line.startswith(" "))
    assert faults_cli.selftest.name == "selftest"


def test_the_self_test_refuses_an_unknown_fault():
    refused = CliRunner().invoke(main, ["selftest", "--fault", "no-such-fault"])
    assert refused.exit_code == 2 and "no-such-fault" in refused.output
