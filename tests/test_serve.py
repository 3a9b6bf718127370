"""Serving the site (``fuzzer.website.serve``): what the site is made of, stamped cheaply;
the rendered folder served over HTTP and rendered again when its source changes."""

import urllib.request

from helpers import case, divergence_on, prog

from fuzzer.corpus import store
from fuzzer.corpus.entry import Entry, Origin
from fuzzer.judge import contract
from fuzzer.website import serve
from fuzzer.website.build import Source


def _save(folder, statements):
    body = [("p_sin", ["x0"], f"v{k}", {"site": k + 1}) for k in range(statements - 1)]
    c = case(prog({"x0": ("s0",)}, [*body, ("e_log", ["x0"], None, {"site": 0})]))
    store.save(Entry.build(contract.EFFECT_LOG, c, [divergence_on(0)],
                           Origin(seed=1, device="cpu", backend="inductor")),
               folder)


def test_the_stamp_changes_when_a_file_of_the_source_does(tmp_path):
    _save(tmp_path, 1)
    source = Source.of(tmp_path)
    before = serve.stamp(source)
    assert len(before) == 2 and serve.stamp(source) == before
    _save(tmp_path, 2)
    assert serve.stamp(source) != before


class Ticks:
    """The watcher's clock, stood in: ``rounds`` polls, then stop."""

    def __init__(self, rounds):
        self.rounds = rounds

    def wait(self, seconds):
        self.rounds -= 1
        return self.rounds < 0

    def set(self):
        self.rounds = -1


def test_a_poll_renders_the_site_again_only_when_its_source_changed(tmp_path):
    _save(tmp_path / "corpus", 1)
    rendered = []
    server = serve.Server(tmp_path / "corpus", tmp_path / "site", on_render=rendered.append)
    try:
        server._stop = Ticks(1)
        server._watch()               # a poll with nothing changed: nothing rendered
        assert rendered == []
        _save(tmp_path / "corpus", 2)
        server._stop = Ticks(1)
        server._watch()               # a poll after a change: rendered again
        assert [b.bugs for b in rendered] == [2] and server.built is rendered[0]  # untriaged: a bug each
        assert len(list((tmp_path / "site" / "entries").glob("*.json"))) == 2
    finally:
        server.httpd.server_close()   # never served: nothing to shut down


def test_the_rendered_folder_is_served_on_localhost(tmp_path):
    _save(tmp_path / "corpus", 1)
    server = serve.Server(tmp_path / "corpus", tmp_path / "site")
    server._stop = Ticks(0)
    server.start()
    try:
        assert server.url.startswith("http://127.0.0.1:")
        with urllib.request.urlopen(server.url + "index.html", timeout=10) as page:  # noqa: S310 - localhost
            assert page.status == 200 and b"<html" in page.read().lower()
    finally:
        server.close()
