"""The site command (``fuzzer.cli.site``): a corpus rendered to a folder, and what it says
where the site cannot be made; a hand-built corpus."""

from click.testing import CliRunner
from helpers import case, divergence_on, prog

from fuzzer.cli import main
from fuzzer.cli import site as site_cli
from fuzzer.corpus import store
from fuzzer.corpus.entry import Entry
from fuzzer.judge import contract
from fuzzer.website import build


def test_a_corpus_is_rendered_to_a_folder(tmp_path):
    c = case(prog({"x0": ("s0",)}, [("e_log", ["x0"], None, {"site": 0})]))
    store.save(Entry.build(contract.EFFECT_LOG, c, [divergence_on(0)], seed=1, device="cpu", backend="inductor"),
               tmp_path / "corpus")
    result = CliRunner().invoke(main, ["site", str(tmp_path / "corpus"), "--out", str(tmp_path / "site")])
    assert result.exit_code == 0 and result.output == f"wrote {tmp_path / 'site' / 'index.html'} (1 bugs, 2 pages)\n"
    assert site_cli.site.name == "site"


def test_without_the_sites_libraries_it_says_so_and_exits_2(tmp_path, monkeypatch):
    def unavailable():
        raise build.SiteUnavailable("the site needs Jinja2")

    monkeypatch.setattr(build, "_libraries", unavailable)
    (tmp_path / "corpus").mkdir()
    result = CliRunner().invoke(main, ["site", str(tmp_path / "corpus"), "--out", str(tmp_path / "site")])
    assert result.exit_code == 2 and "the site needs Jinja2" in result.output
