"""The command group (``fuzzer.cli.app``): its help, its version, and every family of
commands beside it joined to it."""

from click.testing import CliRunner

from fuzzer import __version__
from fuzzer.cli.app import main


def test_the_group_says_its_version_and_lists_the_commands():
    import fuzzer.cli  # noqa: F401 - each module beside app adds its commands

    runner = CliRunner()
    version = runner.invoke(main, ["--version"])
    assert version.exit_code == 0 and __version__ in version.output
    help_ = runner.invoke(main, ["-h"])
    assert help_.exit_code == 0
    for command in ("run", "bugs", "replay", "shrink", "faults", "selftest", "site", "check-ops", "gen"):
        assert command in main.commands, command
