"""The ``dcefuzz`` command line: thin wrappers over the pipeline's stages.

``app`` holds the command group; each module beside it adds one family of
commands when imported here.
"""

import sys

from fuzzer import hashseed
from fuzzer.cli import bugs, campaign, entries, faults, ops, site  # noqa: F401 - each adds its commands
from fuzzer.cli.app import main
from fuzzer.cli.faults import selftest
from fuzzer.cli.options import parse_duration

__all__ = ["entry", "main", "parse_duration", "selftest"]


def entry() -> None:
    """The ``dcefuzz`` program: the command group, in a process whose string hashes
    follow one seed (``fuzzer.hashseed``), so that what it finds replays."""
    hashseed.pin(sys.argv[1:])
    main()
