"""What the pool and its workers say to each other, one frozen record per message.

A worker is a child of the one protocol in ``fuzzer.isolation.child``: it says
``("ready", pid)`` once loaded and returns on ``("stop",)``.  On top of that:

    parent -> worker   Run        a program to run
    worker -> parent   Tried      the trial's findings, unshrunk, before they are shrunk
                       Candidate  a shrink candidate it is about to run
                       Triaging   the program's entries, shrunk, before they are triaged
                       Done       the program's entries, shrunk and triaged

The pool reads the child protocol's ready as :class:`Ready` (``received``), so that
each message it handles is a record of its own type.  Why each is sent, and what the
parent does when a worker dies after one, is told in ``fuzzer.campaign.worker``.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Report:
    """What a worker reports for one program."""

    status: str
    seconds: float
    entries: list[dict] = field(default_factory=list)
    flaky: list[str] = field(default_factory=list)
    rss_kb: int = 0
    recompiles: int = 0
    #: the first way an untested program was not wholly compiled or judged
    #: (``fuzzer.judge.observe.Gap``, as JSON)
    untested: dict | None = None
    #: dcefuzz's own errors met on the program (``fuzzer.internal``, as JSON)
    errors: list[dict] = field(default_factory=list)
    #: what the program reached (``fuzzer.judge.trial.reached``)
    reached: dict = field(default_factory=dict)
    #: the seconds of the trial alone (run, judge, confirm); ``seconds`` is the whole
    #: program's, shrink and triage included, so the difference is what its findings cost
    trial_seconds: float | None = None

    def internal_errors(self) -> list:
        from fuzzer.internal import InternalError

        return [InternalError.from_json(e) for e in self.errors]


@dataclass(frozen=True)
class Run:
    """Run program ``index`` of seed ``seed``; ``seconds_left``: the campaign's time
    (None: no time budget); ``held``: the bugs held (``Examples.held``)."""

    index: int
    seed: int
    seconds_left: float | None
    held: dict


@dataclass(frozen=True)
class Ready:
    """The worker is loaded (the child protocol's ``("ready", pid)``)."""

    pid: int


@dataclass(frozen=True)
class Tried:
    """Program ``index``'s trial, its findings unshrunk: what is saved if the worker
    dies shrinking them."""

    index: int
    report: Report


@dataclass(frozen=True)
class Candidate:
    """A shrink candidate (a case, as JSON) the worker is about to run: what is blamed
    if the worker dies now."""

    index: int
    case: dict


@dataclass(frozen=True)
class Triaging:
    """Program ``index``'s entries, shrunk, before triage: what is saved, untriaged, if
    the worker dies triaging them."""

    index: int
    report: Report


@dataclass(frozen=True)
class Done:
    """Program ``index`` is over: its entries, shrunk and triaged."""

    index: int
    report: Report


#: what a worker may say to the pool
Message = Ready | Tried | Candidate | Triaging | Done


def received(message) -> Message:
    """A message as the pool handles it: the child protocol's ready as :class:`Ready`."""
    if isinstance(message, tuple) and message[:1] == ("ready",):
        return Ready(message[1])
    return message
