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


def test_a_run_whose_trial_kind_no_entry_point_registers_exits_2_before_a_worker_starts(tmp_path, monkeypatch):
    """dcefuzz run from a checkout it was not installed from finds no trial kind: every
    program would be its own error, so the run says why once and starts nothing."""
    from fuzzer.campaign import launch
    from fuzzer.judge import kinds

    monkeypatch.setattr(kinds, "_KINDS", {})
    monkeypatch.setattr(kinds, "_loaded", True)
    monkeypatch.setattr(launch, "start", lambda *a, **k: pytest.fail("a worker was started"))
    result = CliRunner().invoke(campaign_cli.run, ["--programs", "1", "--state", str(tmp_path / "s")])
    assert result.exit_code == 2 and "no trial kind 'program'" in result.output and "pip install" in result.output
