"""The campaign commands (``fuzzer.cli.campaign``): a run refused on bad arguments before
any program is run (what ``run``'s options decide is ``fuzzer.cli.launching``'s,
tests/test_launching.py)."""

import pytest
from click.testing import CliRunner

from fuzzer.cli import campaign as campaign_cli


@pytest.mark.parametrize("args, words", [
    (["--shard", "3/2"], "shard"),
    (["--time", "soon"], "duration"),
    (["--programs", "0"], "programs"),
])
def test_a_run_with_bad_arguments_exits_2_before_it_starts(tmp_path, args, words):
    result = CliRunner().invoke(campaign_cli.run, ["--corpus", str(tmp_path / "c"), *args])
    assert result.exit_code == 2 and words in result.output.lower()
    assert not (tmp_path / "c").exists()
