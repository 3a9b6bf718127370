"""A campaign counts what it could not test: untested programs are never clean."""

import json

import backends
from click.testing import CliRunner

from fuzzer.campaign.config import Budget, Config
from fuzzer.campaign.session import run_campaign
from fuzzer.campaign.state import CampaignFolder
from fuzzer.cli import main


def test_a_campaign_under_graph_breaks_counts_its_programs_untested(tmp_path):
    folder = CampaignFolder(tmp_path / "state")
    config = Config(seed=0, device="cpu", corpus_dir=str(tmp_path / "corpus"), backend=backends.FAITHFUL,
                    fault="test-graph-break")
    lines = []
    stats = run_campaign(config, Budget(programs=3), log=lines.append, folder=folder)
    assert stats.statuses["clean"] == 0 and not stats.findings   # missed-dce is not judged
    assert stats.statuses["untested"] == 3 and stats.untested == {"graph-break": 3}
    assert stats.mostly_untested
    assert "untested   3 (not wholly compiled, never counted clean: graph-break 3)" in stats.summary()
    state = CliRunner().invoke(main, ["stats", str(folder.path), "--json"])
    assert json.loads(state.output)["untested"] == {"graph-break": 3}
    shown = CliRunner().invoke(main, ["stats", str(folder.path)])
    assert "untested   3 (graph-break 3)" in shown.output


def test_the_same_campaign_without_the_fault_is_clean(tmp_path):
    config = Config(seed=0, device="cpu", corpus_dir=str(tmp_path / "corpus"), backend=backends.FAITHFUL)
    stats = run_campaign(config, Budget(programs=3), log=lambda line: None)
    # the eager backend keeps dead pure calls: missed-dce findings, now that it is judged
    assert stats.statuses["clean"] + stats.statuses["finding"] == 3
    assert stats.statuses["untested"] == 0 and not stats.untested and not stats.mostly_untested
    assert stats.findings["missed-dce"] >= 1


def test_dcefuzzs_own_error_is_counted_and_shown_never_a_finding(tmp_path):
    """The judge itself raises (a test-only fault): each program is an internal error,
    with its traceback in the campaign folder, nothing is saved, and the summary, the
    state and `dcefuzz stats` say so."""
    folder = CampaignFolder(tmp_path / "state")
    config = Config(seed=0, device="cpu", corpus_dir=str(tmp_path / "corpus"), backend=backends.FAITHFUL,
                    fault="test-internal-error")
    lines = []
    stats = run_campaign(config, Budget(programs=2), log=lines.append, folder=folder)
    assert stats.programs == 2 and stats.statuses["internal-error"] == 2 and not stats.findings
    assert stats.internal == {"trial": 2} and not (tmp_path / "corpus").exists()
    assert "internal   2 (dcefuzz's own errors, never findings: trial 2" in stats.summary()
    assert any("dcefuzz's own error, not a finding" in line for line in lines)
    logged = [json.loads(line) for line in (folder.path / "internal-errors.jsonl").read_text().splitlines()]
    assert [e["program"] for e in logged] == [0, 1] and "the judge itself failed" in logged[0]["traceback"]
    state = json.loads(CliRunner().invoke(main, ["stats", str(folder.path), "--json"]).output)
    assert state["internal_errors"] == {"trial": 2} and state["statuses"] == {"internal-error": 2}
    assert "internal   2" in CliRunner().invoke(main, ["stats", str(folder.path)]).output
