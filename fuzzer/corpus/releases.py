"""A bug's history over torch releases: where it was introduced, where it was fixed,
and whether it is a regression.

A bug's ``versions`` map holds, per torch version its repros ran under, what they did
(``reproduces``, ``fixed``, ``error``).  Versions are ordered as releases
(``2.11.0+cu130`` is release 2.11.0; a local build's suffix does not make it
another release).  ``error`` (an old torch lacks an op the program calls, the program
fails another way first, or could not be judged) says nothing either way: it is never
read as "not present", and it breaks the chain a change is read from.  So a bug is a
**regression** only where the release just before the first that reproduces it was
``fixed``: introduced in that first release.  It is **fixed in** the release just
after the last one that reproduces it, where that release is ``fixed``.  Across
releases that could not judge it, only what was seen is said: "not seen in 2.11.0;
2.12.1 and 2.13.0 could not judge it; reproduces in 2.14.1" (the bug may have come
in any of them, hidden behind what they failed on).  Without an earlier judged
release the bug is present "since" the oldest release that reproduces it (as far as
the releases tried go).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

#: what a repro did under one torch version
Replayed = Literal["reproduces", "fixed", "error"]
REPRODUCES: Replayed = "reproduces"
FIXED: Replayed = "fixed"
ERROR: Replayed = "error"
#: torch version -> what the repro did there (``Entry.versions``, ``Bug.versions``)
Versions = dict[str, Replayed]

_RELEASE = re.compile(r"^(\d+)\.(\d+)(?:\.(\d+))?")


def release(version: str) -> tuple[int, int, int] | None:
    """``2.11.0+cu130`` as (2, 11, 0); None for what is not a release number."""
    m = _RELEASE.match(version)
    if m is None:
        return None
    return int(m.group(1)), int(m.group(2)), int(m.group(3) or 0)


def release_name(version: str) -> str:
    r = release(version)
    return version if r is None else ".".join(map(str, r))


def by_release(versions: Versions) -> list[tuple[str, Replayed]]:
    """(release, verdict) oldest first; two builds of one release merge (one that
    reproduces is enough, fixed only if every build is)."""
    merged: dict[str, set[str]] = {}
    for version, verdict in versions.items():
        if release(version) is None:
            continue
        merged.setdefault(release_name(version), set()).add(verdict)
    out = []
    for name in sorted(merged, key=release):
        seen = merged[name]
        out.append((name, REPRODUCES if REPRODUCES in seen else FIXED if seen == {FIXED} else ERROR))
    return out


def _names(releases: list[str]) -> str:
    """``2.12.1``, ``2.12.1 and 2.13.0``, ``2.11.0, 2.12.1 and 2.13.0``."""
    return releases[0] if len(releases) == 1 else ", ".join(releases[:-1]) + " and " + releases[-1]


def _unjudged(ordered: list[tuple[str, str]]) -> list[str]:
    """The leading releases of ``ordered`` that could not judge the bug."""
    out = []
    for name, verdict in ordered:
        if verdict != ERROR:
            break
        out.append(name)
    return out


@dataclass(frozen=True)
class History:
    #: the first release that reproduces it (None: none does)
    introduced: str | None
    #: whether the release just before ``introduced`` was fixed: the bug came in there
    regression: bool
    #: the release just after the last that reproduces it, fixed there
    fixed: str | None
    releases: tuple[tuple[str, str], ...] = ()

    @property
    def before(self) -> str | None:
        """The release just before ``introduced``, fixed: what a regression is read from."""
        if not self.regression:
            return None
        names = [r for r, _ in self.releases]
        return names[names.index(self.introduced) - 1]

    def line(self) -> str:
        """``a regression in 2.12.0 (2.11.0 is fixed); fixed in 2.14.1``, or, across
        releases that could not judge it, what was seen: ``not seen in 2.11.0; 2.12.1
        and 2.13.0 could not judge it; reproduces in 2.14.1; ...``."""
        if self.introduced is None:
            return "reproduces on no release tried"
        names = [r for r, _ in self.releases]
        first = names.index(self.introduced)
        last = max(i for i, (_, v) in enumerate(self.releases) if v == REPRODUCES)
        return self._start(first) + self._end(last)

    def _start(self, first: int) -> str:
        if self.regression:
            return f"a regression in {self.introduced} ({self.before} is fixed)"
        gap = _unjudged(list(reversed(self.releases[:first])))[::-1]
        if not gap:
            return f"since {self.introduced} or earlier"
        seen = first - len(gap) - 1
        if seen < 0:  # no release before it judged it
            return f"since {self.introduced} or earlier ({_names(gap)} could not judge it)"
        return f"not seen in {self.releases[seen][0]}; {_names(gap)} could not judge it; " \
               f"reproduces in {self.introduced}"

    def _end(self, last: int) -> str:
        if self.fixed:
            return f"; fixed in {self.fixed}"
        after = list(self.releases[last + 1:])
        if not after:
            return "; not fixed in any release tried"
        gap = _unjudged(after)
        if len(gap) == len(after):
            return f"; {_names(gap)} could not judge it; not fixed in any release judged"
        return f"; {_names(gap)} could not judge it; not seen in {after[len(gap)][0]}"

    def to_json(self) -> dict:
        return {"introduced_in": self.introduced, "regression": self.regression, "fixed_in": self.fixed}


def history(versions: Versions) -> History:
    ordered = by_release(versions)
    reproducing = [i for i, (_, v) in enumerate(ordered) if v == REPRODUCES]
    if not reproducing:
        return History(None, False, None, tuple(ordered))
    first, last = reproducing[0], reproducing[-1]
    # a change is read only between adjacent releases both judged: an ``error``
    # between them may hide the bug (it fails first) as well as its absence
    regression = first > 0 and ordered[first - 1][1] == FIXED
    fixed = ordered[last + 1][0] if last + 1 < len(ordered) and ordered[last + 1][1] == FIXED else None
    return History(ordered[first][0], regression, fixed, tuple(ordered))
