"""The campaign commands (``fuzzer.cli.campaign``): the bugs known upstream read for
``--known-upstream``, and a run refused on bad arguments before any program is run."""

import click
import pytest
from click.testing import CliRunner

from fuzzer.cli import campaign as campaign_cli
from fuzzer.cli import main


def test_no_folder_knows_nothing_and_a_folder_without_an_upstream_file_is_a_usage_error(tmp_path):
    assert campaign_cli._known_keys(None) == ()
    with pytest.raises(click.BadParameter, match="upstream.json") as refused:
        campaign_cli._known_keys(str(tmp_path))
    assert refused.value.param_hint == "--known-upstream"


@pytest.mark.parametrize("args, words", [
    (["--shard", "3/2"], "shard"),
    (["--time", "soon"], "duration"),
    (["--programs", "0"], "programs"),
])
def test_a_run_with_bad_arguments_exits_2_before_it_starts(tmp_path, args, words):
    result = CliRunner().invoke(main, ["run", "--corpus", str(tmp_path / "c"), *args])
    assert result.exit_code == 2 and words in result.output.lower()
    assert not (tmp_path / "c").exists()
