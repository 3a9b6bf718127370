"""The campaign's shrinker of crash and timeout findings, on a thread of the parent.

A casualty is saved at once, unshrunk, the moment its worker dies; shrinking it takes
child processes (``fuzzer.reduce.casualty``) and minutes, so a thread does it while
the workers go on, one casualty at a time, a few more waiting, the rest left unshrunk
for ``dcefuzz shrink``.  Once it stands (a smaller case died so, or its own did again)
the same thread finds its stage (``fuzzer.triage.casualty``, within the campaign's
triage budget).  The thread only computes reduced entries and culprits; the campaign
loop saves them (``adopt``), so the session's counts and the corpus are touched by one
thread.
"""

from __future__ import annotations

import dataclasses
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from fuzzer.campaign.config import Config
from fuzzer.campaign.session import Session
from fuzzer.corpus import store
from fuzzer.corpus.entry import BadEntry, Entry
from fuzzer.internal import SHRINK, InternalError
from fuzzer.isolation.process import STOP_GRACE_S, Aborted
from fuzzer.limits import PoolLimits
from fuzzer.reduce.casualty import Confirmation, dies_again, shrink_casualty
from fuzzer.triage import casualty as triage
from fuzzer.triage.culprit import Culprit


@dataclass(frozen=True)
class Shrunk:
    """What the thread made of one casualty, for the campaign loop to save (``adopt``)."""

    entry: Entry
    path: str
    #: its smaller entry, which takes its place (None: it stays as it was)
    reduced: Entry | None
    #: why it stays as it was
    why: str = ""
    #: dcefuzz's own error met on the way (``fuzzer.internal``)
    error: InternalError | None = None
    #: how its own case fared in fresh processes (None: not asked, as where a smaller
    #: case died so, the shrink failed or was stopped)
    confirmation: Confirmation | None = None
    #: the stage of the entry that stands for it (None: not triaged)
    culprit: Culprit | None = None

    @property
    def withdrawn(self) -> bool:
        """Its own case did not die so again in a fresh process: a suspect, not a finding."""
        return self.confirmation is not None and not self.confirmation.confirmed


class CasualtyShrinker:
    """Shrinks crash and timeout entries on a thread, one at a time.

    The thread only computes reduced entries; the campaign loop saves them (through
    ``adopt``), so the session's counts and the corpus are touched by one thread.
    """

    def __init__(self, config: Config, limits: PoolLimits, log,
                 seconds_left: Callable[[], float | None] = lambda: None):
        self.config, self.limits, self.log = config, limits, log
        #: the campaign's time left (None: no time budget): each shrink gets no more
        self.seconds_left = seconds_left
        self.todo: queue.Queue = queue.Queue()
        self.done: queue.Queue = queue.Queue()
        self.stop = threading.Event()
        self.busy = threading.Event()
        #: marking an item busy and closing are exclusive under this lock, so that
        #: ``finish`` sees either a shrink in progress or none that can still start
        self.taking = threading.Lock()
        self.closing = False
        self.waiting = 0
        self.thread = threading.Thread(target=self._loop, name="dcefuzz-casualty-shrinker", daemon=True)
        self.thread.start()

    def submit(self, entry: Entry, path: str) -> bool:
        if self.waiting >= self.limits.casualty_queue:
            return False
        self.waiting += 1
        self.todo.put((entry, path))
        return True

    def _loop(self) -> None:
        while not self.stop.is_set():
            try:
                entry, path = self.todo.get(timeout=self.limits.poll_seconds)
            except queue.Empty:
                continue
            with self.taking:
                if self.closing:  # too late to start: it stays waiting, saved unshrunk
                    self.todo.put((entry, path))
                    return
                self.busy.set()
            self.done.put(self._shrunk(entry, path))
            self.busy.clear()

    def _shrunk(self, entry: Entry, path: str) -> Shrunk:
        """Shrink one casualty; where nothing smaller died so, ask whether it dies again;
        then find the stage of what stands."""
        budget = self.limits.casualty_shrink.within(self.seconds_left())
        try:
            smaller = shrink_casualty(entry, self.limits, budget, stop=self.stop)
            if smaller is None:
                confirmation = dies_again(entry, self.limits, self.stop)
                if not confirmation.confirmed:
                    return Shrunk(entry, path, None, confirmation.why(), confirmation=confirmation)
                return Shrunk(entry, path, None, "nothing smaller died the same way", confirmation=confirmation,
                              culprit=self._culprit(entry))
            # the notes (the stack where the original case died, what that case was) are
            # kept: the reduced case dies so
            reduced = entry.reduced(smaller.case, smaller.divergences, smaller.shrink, notes=entry.detail[1:])
            return Shrunk(entry, path, reduced, culprit=self._culprit(reduced))
        except Aborted:
            return Shrunk(entry, path, None, "its shrink stopped at the end of the campaign")
        except Exception as exc:  # noqa: BLE001 - ours: the unshrunk entry is already saved
            error = InternalError.of(SHRINK, exc)
            return Shrunk(entry, path, None, f"its shrink failed: {error.line()}", error)

    def _culprit(self, entry: Entry) -> Culprit | None:
        """The stage of a casualty that stands, within the campaign's triage budget and
        time left (None: the campaign does not triage, has no time left, or ended during
        the walk: what the shrink found is kept all the same)."""
        if self.config is None or not self.config.triage or not triage.walks(entry.kind, entry.backend):
            return None
        budget = self.config.triage_budget.within(self.seconds_left())
        if budget.seconds <= 0:
            return None
        try:
            return triage.localise(entry, entry.device, budget, self.limits, self.stop)
        except Aborted:
            return None

    def adopt(self, session: Session) -> list[tuple[str, str]]:
        """Save the reduced entries that are ready, in place of their unshrunk ones.

        Returns (old path, new path) for each entry replaced.
        """
        moved = []
        while True:
            try:
                done = self.done.get_nowait()
            except queue.Empty:
                return moved
            self.waiting -= 1
            if done.error is not None:
                session.internal_error(None, done.error)
            if done.withdrawn:
                session.withdraw(done.entry, done.path, done.why)
                continue
            if done.reduced is None:
                self.log(f"{done.entry.kind} {done.entry.id} kept unshrunk ({done.why})")
                if done.culprit is not None:
                    self._localised(session, done.path, done.culprit)
                continue
            reduced = done.reduced if done.culprit is None else dataclasses.replace(done.reduced,
                                                                                  culprit=done.culprit)
            moved.append((done.path, session.replace(done.entry, done.path, reduced)))

    def _localised(self, session: Session, path: str, culprit: Culprit) -> None:
        """Give the saved casualty at ``path`` its culprit, its hits since kept."""
        try:
            entry = store.load(path)
        except BadEntry:
            return  # gone or replaced since: another entry stands for it now
        entry.culprit = culprit
        store.update(path, entry)
        self.log(f"[{session.elapsed():6.0f}s] {entry.kind} {entry.id}: stage {culprit.stage or 'not found'} "
                 f"({culprit.oracle_calls} fresh processes, {culprit.seconds:.0f}s)")

    def finish(self, until: float | None) -> None:
        """Stop taking work; let the shrink in progress end, but abort it at ``until``
        (a ``time.monotonic`` time; None: however long it takes)."""
        with self.taking:
            self.closing = True
        while (self.busy.is_set() and self.thread.is_alive()
               and (until is None or time.monotonic() < until)):
            time.sleep(self.limits.poll_seconds)
        self.stop.set()
        # an aborted shrink kills its child at once (``IsolatedJudge``)
        self.thread.join(STOP_GRACE_S)
        left = self.todo.qsize()
        if left:
            self.log(f"{left} crash/timeout entries left unshrunk (dcefuzz shrink ENTRY)")
