"""Rendering the site (``fuzzer.website.build``): where its source is read from, a page for
each bug with its entries' files beside, and the small readings it makes; a hand-built
corpus, no compile."""

import json

import pytest
from helpers import case, divergence_on, prog

from fuzzer.campaign.state import CampaignFolder, CampaignState, Shard
from fuzzer.corpus import store
from fuzzer.corpus.entry import Entry, Origin
from fuzzer.judge import contract
from fuzzer.website import build

C = case(prog({"x0": ("s0",)}, [("e_log", ["x0"], None, {"site": 0})]))


def _entry():
    return Entry.build(contract.EFFECT_LOG, C, [divergence_on(0)], Origin(seed=1, device="cpu", backend="inductor"))


def test_the_source_is_a_campaign_with_its_corpus_or_a_corpus_alone(tmp_path):
    CampaignFolder(tmp_path / "run").save(CampaignState(seed=1, shard=Shard()))
    (tmp_path / "run" / "corpus").mkdir()
    for path in (tmp_path / "run", tmp_path / "run" / "corpus"):
        source = build.Source.of(path)
        assert source.corpus == tmp_path / "run" / "corpus" and source.campaign.path == tmp_path / "run"
    alone = build.Source.of(tmp_path / "elsewhere")
    assert alone.corpus == tmp_path / "elsewhere" and alone.campaign is None


def test_every_bug_has_its_page_and_every_entry_its_files(tmp_path):
    path, _ = store.save(_entry(), tmp_path / "corpus")
    built = build.build(tmp_path / "corpus", tmp_path / "site")
    assert built.bugs == 1 and built.pages[0] == tmp_path / "site" / "index.html"
    (page,) = built.pages[1:]
    assert page.parent.name == "bugs" and path.stem in page.read_text()
    assert json.loads((tmp_path / "site" / "entries" / path.name).read_text())["id"] == path.stem
    assert (tmp_path / "site" / "entries" / f"{path.stem}.py").read_text().startswith(f'"""dcefuzz finding {path.stem}')


def test_the_small_readings():
    assert build._when("2026-11-30T15:09:40+00:00") == "2026-11-30 15:09" and build._when("") == "-"
    assert build._url("pytorch/pytorch#123") == {"url": "https://github.com/pytorch/pytorch/issues/123",
                                                "label": "#123"}
    assert build._hours(["2026-01-01T00:00:00+00:00", "2026-01-01T01:30:00+00:00"]) == [0.0, 1.5]
    assert len(build._hash("x")) == 44


def test_a_bug_without_timed_hits_says_so():
    e = _entry()
    assert "Not timed" in build._hits_chart([e])
    e.hit_times = ["2026-01-01T00:00:00+00:00", "2026-01-01T02:00:00+00:00"]
    assert build._hits_chart([e]).startswith("<svg")


def test_without_jinja_the_site_says_how_to_install_it(monkeypatch):
    import builtins

    real = builtins.__import__
    monkeypatch.setattr(builtins, "__import__",
                        lambda name, *a, **k: (_ for _ in ()).throw(ImportError(name=name)) if name == "jinja2"
                        else real(name, *a, **k))
    with pytest.raises(build.SiteUnavailable, match="jinja2 is missing"):
        build._libraries()
