"""The seed of Python's string hashes in the processes dcefuzz runs.

torch iterates sets and dicts of symbols and nodes whose order follows those hashes,
and some of its bugs show only under some orders: a compile error that one process
in three meets, on the same program.  A campaign whose processes hashed at random
could confirm such a finding in its worker, twice, and never see it again in a
replay.  So every process dcefuzz runs as a program hashes with one seed
(:data:`SEED`): the command line starts itself again with ``PYTHONHASHSEED`` set
when it was not (:func:`pin`), its children (workers, isolated judges, a cache
pair's sides, scripts under another torch) inherit it, an entry records the seed its
finding was made under (:data:`AT_START`), and its repro script starts itself again
with that seed when it runs with another.
"""

from __future__ import annotations

import os
import sys

#: the hash seed dcefuzz's processes run with
SEED = "0"
#: the seed this process's hashes follow: ``PYTHONHASHSEED`` as it started (None: at
#: random, which nothing can read back)
AT_START: str | None = (os.environ.get("PYTHONHASHSEED") or None)
if AT_START == "random":
    AT_START = None


def restart() -> None:
    """Start this interpreter again with its own command line (``sys.orig_argv``) under
    :data:`SEED`, unless it runs with a seed already.  For a process that replays
    entries in itself, pytest on the corpus: a finding one order of torch's sets shows
    would otherwise pass in one run in three."""
    if AT_START is not None:
        return
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(sys.executable, sys.orig_argv, {**os.environ, "PYTHONHASHSEED": SEED})


def pin(argv: list[str]) -> None:
    """Start this command again, as ``python -m fuzzer ARGV``, with the hash seed set,
    unless it runs with one already (then return)."""
    if AT_START is not None:
        return
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(sys.executable, [sys.executable, "-m", "fuzzer", *argv], {**os.environ, "PYTHONHASHSEED": SEED})
