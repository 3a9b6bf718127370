"""Trial kinds: the ways a program is tried, each behind one small interface.

A campaign tries a program as a plain trial (compiled once in this process, judged
against eager) or as a cache pair (compiled in two processes that share the on-disk
compile caches, the second after an op's declaration changed).  Everything that
handles a finding after its trial asks the finding's kind how: which case a program
index is, how its trial runs, what judges a shrink candidate of it afresh, what its
entry records beside the program, how its repro script and brief are written, how
its culprit is found, and what its issue says where the plain text does not fit.
The stages that ask (shrinking, saving, replaying, triaging, reporting) find the
kind here, by name or by the kind of finding it makes, and never name it.

The kinds are registered through the entry point group :data:`GROUP` (a package's
``pyproject.toml``): a stage looks a kind up without importing the package that
defines it, and another package can add one.  ``register`` adds one by hand (tests).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

#: the entry point group trial kinds are registered in
GROUP = "dcefuzz.trial_kinds"
#: the kind a campaign uses unless told otherwise
PROGRAM = "program"


class TrialKind(Protocol):
    """One way of trying a program, and of everything done with its findings.

    ``config`` is the campaign's configuration (``fuzzer.campaign.config.Config``),
    ``found`` a finding or an entry (anything with ``kind``, ``device``, ``backend``
    and, for a kind that records one, ``variant``).
    """

    #: the kind's name (``--cache-pairs`` is ``cache-pair``)
    name: str
    #: the kinds of finding only this kind makes (a cache pair's ``stale-cache``); the
    #: plain kind owns every other
    findings: tuple[str, ...]
    #: its oracle plants a campaign's fault in processes of its own (so whoever runs
    #: it must not plant it here too)
    fault_in_sides: bool

    def case(self, program_seed: int, config) -> Any:
        """The case program ``program_seed`` of a campaign is, as this kind draws it."""

    def trial(self, program_seed: int, config) -> Any:
        """Try program ``program_seed``: a ``fuzzer.judge.trial.TrialResult``."""

    def oracle(self, found, device: str, backend: str, fault: str | None = None,
               threads: int | None = None) -> Callable[[Any], Any]:
        """What judges a case of ``found`` afresh (a shrink candidate, a replay)."""

    def shrink_budget(self, config) -> Any:
        """The shrink budget of one of its findings (``fuzzer.limits.OracleBudget``)."""

    def script(self, entry) -> str:
        """The entry's standalone repro script (exit 1 / 0 / 125)."""

    def brief(self, entry) -> str:
        """The entry's brief repro, for an issue."""

    def culprit(self, entry, device: str, budget, fault: str | None = None, threads: int | None = None,
                key_only: bool = False) -> Any:
        """Where in the compiler the entry's bug lives (``fuzzer.triage.culprit.Culprit``);
        ``key_only``: only the probes its bug's key needs (a repeat that is only counted)."""

    def issue(self, bug, entry) -> Any:
        """What an issue of one of its bugs says where a plain trial's words do not fit
        (``fuzzer.render.report.Issue``), or None."""


_KINDS: dict[str, TrialKind] = {}
_loaded = False


class UnknownKind(LookupError):
    """No registered trial kind has that name (is dcefuzz installed? its entry points
    register the kinds)."""


def register(kind: TrialKind) -> TrialKind:
    _KINDS[kind.name] = kind
    return kind


def _load() -> None:
    global _loaded
    if _loaded:
        return
    _loaded = True
    from importlib.metadata import entry_points

    for point in entry_points(group=GROUP):
        if point.name not in _KINDS:
            register(point.load())


def get(name: str) -> TrialKind:
    """The trial kind called ``name``."""
    _load()
    try:
        return _KINDS[name]
    except KeyError:
        known = ", ".join(sorted(_KINDS)) or "none (is dcefuzz installed? `pip install -e .`)"
        raise UnknownKind(f"no trial kind {name!r}; known: {known}") from None


def names() -> list[str]:
    _load()
    return sorted(_KINDS)


def of(finding_kind: str) -> TrialKind:
    """The trial kind that makes findings of ``finding_kind`` (the plain one unless
    another owns it)."""
    _load()
    for kind in _KINDS.values():
        if finding_kind in kind.findings:
            return kind
    return get(PROGRAM)


def script(entry) -> str:
    """The repro script of ``entry``, as its kind writes it."""
    return of(entry.kind).script(entry)


def brief(entry) -> str:
    """The brief repro of ``entry``, as its kind writes it."""
    return of(entry.kind).brief(entry)


def oracle(found, device: str, backend: str, fault: str | None = None, threads: int | None = None):
    """What judges a case of ``found`` (a finding or an entry) afresh, as its kind does."""
    return of(found.kind).oracle(found, device, backend, fault, threads)
