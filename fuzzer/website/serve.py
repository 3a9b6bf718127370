"""The site served on localhost, rendered again whenever the campaign changes.

The standard library's HTTP server serves the rendered folder; a watcher thread polls
what the site is made of (the corpus's files and the campaign's state and logs, by
name, size and modification time) and renders again when any of it changed, so a
page reloaded during a campaign shows the entries saved since.  It binds to
127.0.0.1 unless told otherwise: the pages hold programs and paths of this machine.
"""

from __future__ import annotations

import functools
import http.server
import threading
from collections.abc import Callable
from pathlib import Path

from fuzzer.limits import SITE
from fuzzer.website.build import Built, Source, build

#: the interface served on unless told otherwise
HOST = "127.0.0.1"


def stamp(source: Source) -> tuple:
    """What the site is made of, cheaply: (name, size, mtime) of every file it reads."""
    files = []
    folders = [source.corpus] + ([source.campaign.path] if source.campaign else [])
    for folder in folders:
        if folder.is_dir():
            for p in sorted(folder.iterdir()):
                if p.is_file():
                    st = p.stat()
                    files.append((str(p), st.st_size, st.st_mtime_ns))
    return tuple(files)


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 - the standard library's name
        pass


class Server:
    """The rendered folder served over HTTP, kept up to date with its source."""

    def __init__(self, path: str | Path, out: str | Path, port: int = 0, host: str = HOST,
                 on_render: Callable[[Built], None] | None = None):
        self.path, self.out = Path(path), Path(out)
        self.source = Source.of(self.path)
        self.on_render = on_render
        self.built = build(self.path, self.out)
        self._stamp = stamp(self.source)
        handler = functools.partial(_Quiet, directory=str(self.out))
        self.httpd = http.server.ThreadingHTTPServer((host, port), handler)
        self._stop = threading.Event()
        self._watcher = threading.Thread(target=self._watch, name="dcefuzz-site-watch", daemon=True)

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host}:{port}/"

    def _watch(self) -> None:
        while not self._stop.wait(SITE.poll_seconds):
            now = stamp(self.source)
            if now != self._stamp:
                self._stamp = now
                self.built = build(self.path, self.out)
                if self.on_render:
                    self.on_render(self.built)

    def start(self) -> Server:
        """Serve and watch on threads of their own."""
        self._watcher.start()
        threading.Thread(target=self.httpd.serve_forever, name="dcefuzz-site-http", daemon=True).start()
        return self

    def close(self) -> None:
        self._stop.set()
        self.httpd.shutdown()
        self.httpd.server_close()
