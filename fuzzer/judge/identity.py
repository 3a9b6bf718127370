"""What a bug is called: its kind, a case's status and its class, as records.

Carried into every repro script before the contract (``fuzzer.render.repro``), so it
depends on the standard library only.  Each record is also a ``str`` or has one text,
so entries' JSON keeps its form: a kind is written as its value, a bug class as
``kind|symptoms``, and :meth:`BugClass.parse` is the one way back.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class TextEnum(str, Enum):
    """An enum that is its value's string wherever a string was: ``str()``, formatting
    and ``repr()`` give the value's (``StrEnum`` does the first two from Python 3.11
    on), so JSON, dict keys and a script that prints one into its source all see the
    plain string."""

    __str__ = str.__str__
    __format__ = str.__format__

    def __repr__(self) -> str:
        return repr(self.value)


class Kind(TextEnum):
    """What a divergence breaks: a clause of the contract, the process, a stale cache.

    Entries' JSON, dict keys and comparisons with a kind read from a file keep
    working: it is its value's string (:class:`TextEnum`)."""

    WRONG_OUTPUT = "wrong-output"
    WRONG_MUTATION = "wrong-mutation"
    EFFECT_LOG = "effect-log"
    COMPILE_ERROR = "compile-error"
    RUNTIME_ERROR = "runtime-error"
    MISSED_DCE = "missed-dce"
    CRASH = "crash"
    TIMEOUT = "timeout"
    STALE_CACHE = "stale-cache"


class Status(TextEnum):
    """Whether a case could be judged at all: an eager run that raises makes it
    invalid (a generator defect), one that disagrees with itself nondeterministic."""

    OK = "ok"
    INVALID = "invalid"
    NONDETERMINISTIC = "nondeterministic"


WRONG_OUTPUT, WRONG_MUTATION, EFFECT_LOG = Kind.WRONG_OUTPUT, Kind.WRONG_MUTATION, Kind.EFFECT_LOG
COMPILE_ERROR, RUNTIME_ERROR, MISSED_DCE = Kind.COMPILE_ERROR, Kind.RUNTIME_ERROR, Kind.MISSED_DCE
CRASH, TIMEOUT, STALE_CACHE = Kind.CRASH, Kind.TIMEOUT, Kind.STALE_CACHE

CORRECTNESS_KINDS = (COMPILE_ERROR, RUNTIME_ERROR, EFFECT_LOG, WRONG_MUTATION, WRONG_OUTPUT)
PERFORMANCE_KINDS = (MISSED_DCE,)
#: judged on a cache pair only, never on a single compile
CACHE_KINDS = (STALE_CACHE,)
KINDS = CORRECTNESS_KINDS + PERFORMANCE_KINDS + CACHE_KINDS
#: Deaths of the compiling process: no verdict of this module can report them.
PROCESS_KINDS = (CRASH, TIMEOUT)
ERROR_KINDS = (COMPILE_ERROR, RUNTIME_ERROR) + PROCESS_KINDS

OK, INVALID, NONDETERMINISTIC = Status.OK, Status.INVALID, Status.NONDETERMINISTIC


@dataclass(frozen=True)
class BugClass:
    """What a confirmation, a shrink step, a replay and a repro must see again: a kind
    and its symptoms.

    Its text, ``kind|a,b`` (``kind`` alone without symptoms), is what entries' JSON
    keeps, and :meth:`parse` the one way back, called where a class is read from a file
    (an entry, a state, a script's ``SPEC``): from there on it travels as this record.
    An error has one symptom, where torch raised it or its message, which may hold
    commas; any other kind's symptoms are words without them.  A family
    (``fuzzer.triage.family``) is written the same way.  The class of no divergence
    (``contract.bug_class`` of none) has an empty kind and text, and is false."""

    kind: str
    symptoms: tuple[str, ...] = ()

    @property
    def text(self) -> str:
        return self.kind + (f"|{','.join(self.symptoms)}" if self.symptoms else "")

    def __str__(self) -> str:
        return self.text

    def __bool__(self) -> bool:
        return bool(self.kind)

    @classmethod
    def parse(cls, text: str) -> BugClass:
        kind, sep, rest = text.partition("|")
        if not sep:
            return cls(kind)
        if kind in ERROR_KINDS:
            return cls(kind, (rest,))
        return cls(kind, tuple(rest.split(",")) if rest else ())

    @property
    def words(self) -> set[str]:
        """The symptoms as a set (a non-error class's are unordered words)."""
        return set(self.symptoms)

    def shown(self) -> str:
        """The symptoms as a title reads them: ``, ``-separated, commas spaced."""
        return ", ".join(s.replace(",", ", ") for s in self.symptoms)
