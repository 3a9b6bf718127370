"""The bug-listing commands (``fuzzer.cli.bugs``): which folder is a corpus, and a corpus
listed as text, JSON or a markdown table; a hand-built corpus, nothing triaged or run."""

import json

import click
import pytest
from click.testing import CliRunner
from helpers import case, divergence_on, prog

from fuzzer.cli import bugs as bugs_cli
from fuzzer.cli import main
from fuzzer.corpus import store
from fuzzer.corpus.entry import Entry, Origin
from fuzzer.judge import contract


def _corpus(folder):
    c = case(prog({"x0": ("s0",)}, [("e_log", ["x0"], None, {"site": 0})]))
    path, _ = store.save(Entry.build(contract.EFFECT_LOG, c, [divergence_on(0)],
                                     Origin(seed=1, device="cpu", backend="inductor")), folder)
    return path


def test_a_campaign_folder_names_its_corpus_and_a_plain_folder_itself(tmp_path):
    (tmp_path / "run" / "corpus").mkdir(parents=True)
    assert bugs_cli.corpus_folder(str(tmp_path / "run")) == tmp_path / "run" / "corpus"
    assert bugs_cli.corpus_folder(str(tmp_path)) == tmp_path
    with pytest.raises(click.BadParameter, match="not a folder"):
        bugs_cli.corpus_folder(str(tmp_path / "missing"))


def test_bugs_are_listed_as_text_json_or_markdown(tmp_path):
    path = _corpus(tmp_path)
    runner = CliRunner()
    text = runner.invoke(main, ["bugs", str(tmp_path)])
    assert text.exit_code == 0 and text.output.startswith("1 bugs in 1 entries") and path.stem in text.output
    listed = json.loads(runner.invoke(main, ["bugs", str(tmp_path), "--json"]).output)
    assert [b["entries"] for b in listed] == [[path.stem]] and listed[0]["upstream"]
    table = runner.invoke(main, ["bugs", str(tmp_path), "--markdown"]).output
    assert table.startswith("| bug | what |")
    both = runner.invoke(main, ["bugs", str(tmp_path), "--json", "--markdown"])
    assert both.exit_code == 2 and "choose one" in both.output
