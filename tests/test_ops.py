"""Checking a user's ops (``fuzzer.cli.ops``): a module that cannot be loaded exits 2 with
its reason, before anything is checked."""

from click.testing import CliRunner

from fuzzer.cli import main
from fuzzer.cli import ops as ops_cli


def test_a_module_that_cannot_be_loaded_exits_2():
    result = CliRunner().invoke(main, ["check-ops", "no_such_module_of_ops"])
    assert result.exit_code == 2 and "error:" in result.output and "no_such_module_of_ops" in result.output
    assert ops_cli.check_ops.name == "check-ops"
