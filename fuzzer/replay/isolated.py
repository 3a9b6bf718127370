"""``reshrink`` kept apart from the process that asks for it.

A crash or timeout entry's candidates are each judged in a child already
(``fuzzer.isolation.deaths``), so its shrink runs here.  Any other entry's candidates
are judged in the judging process itself, and a candidate that corrupts memory would
end it: that shrink runs in a child (``fuzzer.isolation.once``), whose death is then
a :class:`ShrinkerDied` the caller reports, the entry left as it was.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from fuzzer.corpus.entry import Entry
from fuzzer.judge.contract import PROCESS_KINDS
from fuzzer.limits import OracleBudget


class ShrinkerDied(Exception):
    """The child shrinking an entry ended before it answered (``detail``: how)."""


class ShrinkerFailed(Exception):
    """An exception of dcefuzz's own in the child shrinking an entry (an internal
    error, never a finding); its message is the child's traceback."""


@dataclass(frozen=True)
class ReshrinkInChild:
    """``reshrink`` as the work of a child process (``fuzzer.isolation.once``).
    ``prepare`` (picklable) runs in the child before it is ready: the user's ``--ops``
    modules loaded again, since the child's op registry starts empty.

    The message is ``("shrink", entry path, device, budget, target or None)``; the answer is
    ``("shrunk", reshrink's result)``, or ``("error", traceback)`` for an exception of
    dcefuzz's own (an internal error, reported as one)."""

    prepare: Callable[[], object] | None = None

    def load(self) -> None:
        if self.prepare is not None:
            self.prepare()

    def __call__(self, message: tuple, send) -> None:
        import traceback

        from fuzzer.corpus import store
        from fuzzer.replay.reshrink import reshrink

        _, path, device, budget, target = message
        try:
            send(("shrunk", reshrink(store.load(path), path, device, budget, target)))
        except Exception:  # noqa: BLE001 - reported by the parent as an internal error
            send(("error", traceback.format_exc()))


def reshrink_apart(entry: Entry, path, device: str, budget: OracleBudget,
                   prepare: Callable[[], object] | None = None, target: str | None = None):
    """``reshrink`` of the entry saved at ``path``, with every candidate that could take
    the process down judged in another process; its result (None: it no longer
    reproduces).  Raises :class:`ShrinkerDied` or :class:`ShrinkerFailed`."""
    from fuzzer.isolation.once import Died, run_once
    from fuzzer.replay.reshrink import reshrink

    if entry.kind in PROCESS_KINDS:  # each candidate is judged in a child already
        return reshrink(entry, path, device, budget, target)
    answer = run_once(ReshrinkInChild(prepare), ("shrink", str(path), device, budget, target))
    if isinstance(answer, Died):
        raise ShrinkerDied(answer.detail)
    tag, result = answer
    if tag == "error":
        raise ShrinkerFailed(result)
    return result
