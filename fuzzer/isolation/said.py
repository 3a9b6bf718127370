"""What a child process writes on stderr, kept where its parent can read it back.

A corrupted heap dies with glibc's last words on the dying process's stderr
(``free(): invalid size``), and those words, not the signal, say which death it was
(``fuzzer.judge.death``).  A child's stderr would go to the campaign's ``torch.log``
(shared by every worker) or the terminal, where the parent cannot tell whose words
are whose.  So each child writes to a file of its own (``child.serve``'s
``log_path``); the parent passes what it holds on to where it would have gone, as it
comes (``pump``) and when the child is done (``close``), and reads its tail to class
a death (``tail``).
"""

from __future__ import annotations

import os
import sys
import tempfile

from fuzzer.isolation import child
from fuzzer.limits import ISOLATION


class Said:
    """A child's stderr file, passed on to ``onward`` (a file appended to; None: the
    ``child.LOG_ENV`` file if set, else this process's stderr)."""

    def __init__(self, onward: str | None = None):
        fd, self.path = tempfile.mkstemp(prefix="dcefuzz-stderr-", suffix=".log")
        os.close(fd)
        self.onward = onward if onward is not None else os.environ.get(child.LOG_ENV)
        self._sent = 0
        if self.onward:  # there from the start, as when the child wrote to it itself
            try:
                os.makedirs(os.path.dirname(self.onward) or ".", exist_ok=True)
                open(self.onward, "ab").close()
            except OSError:
                pass

    def pump(self) -> None:
        """Pass on what the child wrote since the last call."""
        try:
            with open(self.path, "rb") as fh:
                fh.seek(self._sent)
                data = fh.read()
        except OSError:
            return
        if not data:
            return
        self._sent += len(data)
        if self.onward:
            try:
                with open(self.onward, "ab") as out:
                    out.write(data)
                return
            except OSError:
                pass  # the log cannot be written: the lines go to the terminal
        sys.stderr.write(data.decode(errors="replace"))
        sys.stderr.flush()

    def tail(self) -> str:
        """The last ``ISOLATION.said_kept_bytes`` the child wrote."""
        try:
            with open(self.path, "rb") as fh:
                fh.seek(max(0, os.path.getsize(self.path) - ISOLATION.said_kept_bytes))
                return fh.read().decode(errors="replace")
        except OSError:
            return ""

    def close(self) -> None:
        """Pass on the rest and remove the file."""
        self.pump()
        try:
            os.unlink(self.path)
        except OSError:
            pass
