"""A bug's history over torch releases: where it was introduced, where it was fixed,
and whether it is a regression.

A bug's ``versions`` map holds, per torch version its repros ran under, what they did
(``reproduces``, ``fixed``, ``error``).  Versions are ordered as releases
(``2.11.0+cu130`` is release 2.11.0; a local build's suffix does not make it
another release).  ``error`` (an old torch lacks an op the program calls, or could not
judge it) says nothing either way: it is never read as "not present".  So a bug is a
**regression** only where a release before the first that reproduces it was ``fixed``:
introduced in that first release.  Without such an earlier release the bug is present
"since" the oldest release that reproduces it (as far as the releases tried go).  It
is **fixed in** the first release after the last one that reproduces it whose verdict
is ``fixed``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

REPRODUCES, FIXED, ERROR = "reproduces", "fixed", "error"

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


def by_release(versions: dict[str, str]) -> list[tuple[str, str]]:
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


@dataclass(frozen=True)
class History:
    #: the first release that reproduces it (None: none does)
    introduced: str | None
    #: whether an earlier release was fixed: the bug came in ``introduced``
    regression: bool
    #: the first release after the last that reproduces it, fixed there
    fixed: str | None
    releases: tuple[tuple[str, str], ...] = ()

    def line(self) -> str:
        """``introduced in 2.12.0 (a regression: 2.11.0 is fixed); fixed in 2.14.1``."""
        if self.introduced is None:
            return "reproduces on no release tried"
        before = [r for r, v in self.releases if v == FIXED and release(r) < release(self.introduced)]
        start = (f"a regression in {self.introduced} ({before[-1]} is fixed)" if self.regression
                 else f"since {self.introduced} or earlier")
        return start + (f"; fixed in {self.fixed}" if self.fixed else "; not fixed in any release tried")

    def to_json(self) -> dict:
        return {"introduced_in": self.introduced, "regression": self.regression, "fixed_in": self.fixed}


def history(versions: dict[str, str]) -> History:
    ordered = by_release(versions)
    reproducing = [i for i, (_, v) in enumerate(ordered) if v == REPRODUCES]
    if not reproducing:
        return History(None, False, None, tuple(ordered))
    first, last = reproducing[0], reproducing[-1]
    regression = any(v == FIXED for _, v in ordered[:first])
    fixed = next((name for name, v in ordered[last + 1:] if v == FIXED), None)
    return History(ordered[first][0], regression, fixed, tuple(ordered))
