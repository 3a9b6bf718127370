"""The ``dcefuzz`` command line: thin wrappers over the pipeline's stages.

``app`` holds the command group; each module beside it adds one family of
commands when imported here.
"""

from fuzzer.cli import bugs, campaign, entries, faults, ops  # noqa: F401 - each adds its commands
from fuzzer.cli.app import main
from fuzzer.cli.faults import selftest
from fuzzer.cli.options import parse_duration

__all__ = ["main", "parse_duration", "selftest"]
