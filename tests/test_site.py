"""The site: every bug of the committed corpus on the index and on a page of its own,
links that resolve, hostile text escaped, a campaign's page, serving with re-render,
and a real browser where Chromium is installed."""

from __future__ import annotations

import dataclasses
import html.parser
import json
import shutil
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from click.testing import CliRunner

from fuzzer.cli import main
from fuzzer.corpus.bugs import group
from fuzzer.corpus.store import load_all

pytest.importorskip("jinja2")
pytest.importorskip("markdown_it")

from fuzzer.website import build as site_build  # noqa: E402
from fuzzer.website import serve  # noqa: E402

CORPUS = Path(__file__).resolve().parents[1] / "corpus"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
HOSTILE = '<script>alert("x")</script><img src=x onerror=alert(1)>'


class Page(html.parser.HTMLParser):
    """The links, scripts and text of one page."""

    def __init__(self):
        super().__init__()
        self.links: list[str] = []
        self.scripts: list[str] = []
        self.tags: list[tuple[str, dict]] = []
        self._in_script = False
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.tags.append((tag, attrs))
        if tag == "a" and "href" in attrs:
            self.links.append(attrs["href"])
        self._in_script = tag == "script"

    def handle_endtag(self, tag):
        self._in_script = False

    def handle_data(self, data):
        if self._in_script:
            self.scripts.append(data)
        else:
            self.text.append(data)


def parse(path: Path) -> Page:
    page = Page()
    page.feed(path.read_text())
    return page


def _local_links_resolve(page_path: Path, page: Page) -> list[str]:
    missing = []
    for href in page.links:
        if href.startswith("https://"):
            continue
        target = (page_path.parent / href.split("#")[0]).resolve()
        if not target.is_file():
            missing.append(href)
    return missing


@pytest.fixture(scope="module")
def corpus_site(tmp_path_factory):
    out = tmp_path_factory.mktemp("site")
    built = site_build.build(CORPUS, out)
    return out, built


def test_every_bug_of_the_corpus_is_on_the_index_and_has_its_page(corpus_site):
    out, built = corpus_site
    entries, _ = load_all([CORPUS])
    bugs = group(entries)
    index = parse(out / "index.html")
    assert built.bugs == len(bugs) and len(built.pages) == len(bugs) + 1
    for b in bugs:
        assert f"bugs/{b.id}.html" in index.links
        page = parse(out / "bugs" / f"{b.id}.html")
        assert not _local_links_resolve(out / "bugs" / f"{b.id}.html", page)
        for e in b.entries:
            assert f"../entries/{e}.json" in page.links
        assert "Already public" in "".join(page.text) or b.id  # every bug is in corpus/upstream.json
    assert not _local_links_resolve(out / "index.html", index)
    # the public issues are linked to the tracker
    assert "https://github.com/pytorch/pytorch/issues/198068" in index.links
    # a fix is said as one, with the release whose source holds it
    row = (out / "index.html").read_text().split("bugs/bug-709439958f.html", 1)[1].split("</tr>", 1)[0]
    assert "fixed by <a" in row and "pr merged in 2.14.1" in row and "related" not in row
    # the one script of a page is the one its policy admits
    csp = next(a["content"] for t, a in index.tags if t == "meta" and a.get("http-equiv") == "Content-Security-Policy")
    assert f"'sha256-{site_build._hash(site_build.INDEX_JS)}'" in csp and index.scripts == [site_build.INDEX_JS]


def test_a_stale_cache_page_says_what_maintainers_said_only_of_an_edited_op(corpus_site):
    """An edited declaration (a corrected mutates_args): maintainers have said an edited
    op need not invalidate the caches; a changed setting (donated buffers) is not that."""
    out, _ = corpus_site
    edited = parse(out / "bugs" / "bug-e9c7a74992.html")
    words = " ".join(" ".join(edited.text).split())
    assert "maintainers PyTorch maintainers have said that editing a custom op need not invalidate" in words
    assert {"https://github.com/pytorch/pytorch/issues/144344",
            "https://github.com/pytorch/pytorch/issues/187830"} <= set(edited.links)
    setting = parse(out / "bugs" / "bug-72ca8569a7.html")
    assert "need not invalidate" not in "".join(setting.text)
    assert "https://github.com/pytorch/pytorch/issues/144344" not in setting.links


def _hostile_corpus(tmp_path: Path) -> Path:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    data = json.loads((CORPUS / "compile-error-a93d79f564c4.json").read_text())
    data["detail"] = [f"[compile-error] binding 0: InductorError: {HOSTILE}"]
    data["culprit"]["switches"] = {HOSTILE: "gone"}
    (corpus / "compile-error-a93d79f564c4.json").write_text(json.dumps(data))
    # an entry that does not read (from another machine, say): a user op named with markup
    bad = json.loads((CORPUS / "wrong-mutation-9ce848f551f8.json").read_text())
    bad["program"]["body"][0]["form"] = f"opslib::{HOSTILE}"
    (corpus / "hostile.json").write_text(json.dumps(bad))
    (corpus / "upstream.json").write_text(json.dumps({"bugs": [
        {"entries": ["compile-error-a93d79f564c4"], "searched": "2026-12-01", "note": HOSTILE, "links": [
            {"ref": "pytorch/pytorch#1", "kind": "issue", "state": "open", "note": HOSTILE}]}]}))
    return corpus


def test_hostile_text_from_entries_is_escaped(tmp_path):
    corpus = _hostile_corpus(tmp_path)
    out = tmp_path / "site"
    site_build.build(corpus, out)
    for page_path in [out / "index.html", *(out / "bugs").glob("*.html")]:
        page = parse(page_path)
        assert not any(t == "img" for t, _ in page.tags), page_path
        assert len(page.scripts) <= 1 and 'alert("x")' not in "".join(page.scripts), page_path
        raw = page_path.read_text()
        assert "<script>alert" not in raw and "<img src=x" not in raw
    index = (out / "index.html").read_text()
    assert "hostile.json" in index and "&lt;script&gt;" in index  # the unreadable entry, named and escaped
    (bug_page,) = (out / "bugs").glob("*.html")
    assert "&lt;script&gt;alert" in bug_page.read_text()  # the message is shown, as text


def test_a_campaign_folder_renders_its_page(tmp_path):
    """A campaign's folder as ``dcefuzz run`` leaves it: state, stats log, torch's log,
    and its corpus."""
    folder = tmp_path / "run"
    (folder / "corpus").mkdir(parents=True)
    shutil.copyfile(CORPUS / "effect-log-915158cff0e3.json", folder / "corpus" / "effect-log-915158cff0e3.json")
    state = {"schema": 1, "seed": 3, "shard": "1/1", "next_index": 2, "done_above": [], "programs": 2,
             "seconds": 60.0, "findings": {"effect-log": 1}, "statuses": {"clean": 1, "finding": 1},
             "untested": {"unsupported <op>": 1}, "internal_errors": {}, "reached": {}, "features": {}}
    (folder / "state.json").write_text(json.dumps(state))
    lines = [dict(state, seconds=s, programs=p, bugs=b, entries=b, worker_rss_mb=[400])
             for s, p, b in ((20, 1, 0), (60, 2, 1))]
    (folder / "stats.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    (folder / "torch.log").write_text("E1201 torch/_guards.py] Error while creating guard\n")
    out = tmp_path / "site"
    r = CliRunner().invoke(main, ["site", str(folder), "--out", str(out)])
    assert r.exit_code == 0, r.output
    page = parse(out / "campaign.html")
    text = " ".join(page.text)
    assert "unsupported <op>" in text and "effect-log 1" in text
    assert "0 flaky" in text and "0 invalid" in text
    assert "torch.log" in page.links and (out / "torch.log").read_text().startswith("E1201")
    assert sum(1 for t, _ in page.tags if t == "svg") == 3  # discovery, rate, memory
    assert "campaign.html" in parse(out / "index.html").links


def test_without_the_extra_site_exits_2_saying_so(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "markdown_it", None)
    r = CliRunner().invoke(main, ["site", str(CORPUS), "--out", str(tmp_path / "x")])
    assert r.exit_code == 2 and "pip install 'dcefuzz[site]'" in r.output


def _get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=10) as resp:  # noqa: S310 - localhost
        return resp.read().decode()


def test_serve_binds_localhost_and_shows_a_new_entry_once_saved(tmp_path, monkeypatch):
    monkeypatch.setattr(serve, "SITE", dataclasses.replace(serve.SITE, poll_seconds=0.1))
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    shutil.copyfile(CORPUS / "effect-log-915158cff0e3.json", corpus / "effect-log-915158cff0e3.json")
    server = serve.Server(corpus, tmp_path / "site", port=0).start()
    try:
        assert server.url.startswith("http://127.0.0.1:")
        first = _get(server.url + "index.html")
        assert "1 bugs in 1 entries" in first
        shutil.copyfile(CORPUS / "wrong-mutation-9ce848f551f8.json", corpus / "wrong-mutation-9ce848f551f8.json")
        deadline = time.monotonic() + 30
        while "2 bugs in 2 entries" not in _get(server.url + "index.html"):
            assert time.monotonic() < deadline, "the new entry never showed"
            time.sleep(0.1)
    finally:
        server.close()


@pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed")
def test_a_real_browser_runs_the_index_script_and_draws_the_pages(corpus_site, tmp_path):
    """Headless Chromium: the index's script runs under its policy (it fills in the
    count of rows shown), and the index and a bug page render to screenshots."""
    out, _ = corpus_site
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             f"--user-data-dir={tmp_path / 'profile'}"]
    dom = subprocess.run([CHROMIUM, *flags, "--dump-dom", (out / "index.html").as_uri()],
                         capture_output=True, text=True, timeout=120).stdout
    bugs = len(group(load_all([CORPUS])[0]))
    assert f"{bugs} of {bugs} shown" in dom
    for name, page in (("index", out / "index.html"), ("bug", next((out / "bugs").glob("*.html")))):
        shot = tmp_path / f"{name}.png"
        subprocess.run([CHROMIUM, *flags, "--window-size=1400,1000", f"--screenshot={shot}", page.as_uri()],
                       capture_output=True, timeout=120)
        assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 20_000


# ------------------------------------------------ the command (``fuzzer.cli.site``)
def _one_entry_corpus(folder):
    from helpers import case, divergence_on, prog

    from fuzzer.corpus import store
    from fuzzer.corpus.entry import Entry, Origin
    from fuzzer.judge import contract

    c = case(prog({"x0": ("s0",)}, [("e_log", ["x0"], None, {"site": 0})]))
    store.save(Entry.build(contract.EFFECT_LOG, c, [divergence_on(0)],
                           Origin(seed=1, device="cpu", backend="inductor")),
               folder)


def test_the_site_command_renders_a_corpus_to_a_folder(tmp_path):
    from fuzzer.cli import site as site_cli

    _one_entry_corpus(tmp_path / "corpus")
    result = CliRunner().invoke(main, ["site", str(tmp_path / "corpus"), "--out", str(tmp_path / "site")])
    assert result.exit_code == 0 and result.output == f"wrote {tmp_path / 'site' / 'index.html'} (1 bugs, 2 pages)\n"
    assert site_cli.site.name == "site"


def test_the_site_command_without_the_sites_libraries_says_so_and_exits_2(tmp_path, monkeypatch):
    def unavailable():
        raise site_build.SiteUnavailable("the site needs Jinja2")

    monkeypatch.setattr(site_build, "_libraries", unavailable)
    (tmp_path / "corpus").mkdir()
    result = CliRunner().invoke(main, ["site", str(tmp_path / "corpus"), "--out", str(tmp_path / "site")])
    assert result.exit_code == 2 and "the site needs Jinja2" in result.output
