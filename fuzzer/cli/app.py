"""The ``dcefuzz`` command group; the commands live in the modules beside it.

Exit codes: 0 success / nothing reproduces, 1 a replayed entry reproduces,
2 usage errors and unreadable entries.
"""

from __future__ import annotations

import click

from fuzzer import __version__


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="dcefuzz")
def main() -> None:
    """Differential fuzzer for torch.compile's treatment of custom operators.

    Generates programs mixing pure, mutating and effectful custom ops with ordinary
    tensor ops over symbolic shapes, runs them eagerly and through
    torch.compile(dynamic=True), and saves every confirmed divergence to a corpus.
    """
