"""Replay entries under another torch, and record on each entry what that torch did.

This process has one torch; whether a bug is fixed in a newer release, or already
there in an older one, is a question for another install.  An entry's repro script
needs only torch and the standard library, so it runs under any interpreter (another
virtualenv's ``python``).  Its exit status is the verdict (1 reproduces, 0 fixed,
anything else, 125 included, an error: see ``fuzzer.render.driver``), and it is kept
in the entry's ``versions`` map under that interpreter's torch version, where
``dcefuzz bugs`` reads it.  The script is rendered afresh from the entry, so what
runs is what this dcefuzz would write, not a stale ``.py`` beside the JSON.

An entry that may not show every time (``tries``: a crash, whose corrupted heap dies
when and how the allocator notices, or one whose recorded verdicts came and went) is
judged up to ``VERSIONS.flaky_tries`` times: ``reproduces`` where any run reproduces,
``error`` only where no run judged, else ``fixed``.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from fuzzer.corpus import bugs, store
from fuzzer.corpus.entry import BadEntry
from fuzzer.corpus.releases import by_release
from fuzzer.judge import kinds
from fuzzer.limits import VERSIONS
from fuzzer.render.driver import CANNOT_JUDGE_EXIT, FIXED_EXIT, REPRODUCES_EXIT
from fuzzer.replay import rerun
from fuzzer.replay.rerun import ERROR, FIXED, REPRODUCES, Conclusion, ReplayResult, combined

#: a replay's outcome as the entry's ``versions`` map records it
RECORDED = {REPRODUCES: bugs.REPRODUCES, FIXED: bugs.FIXED, ERROR: bugs.ERROR}

_VERSION = re.compile(r"^\d+\.\d+\S*$")
_QUERY = "import torch; print(torch.__version__)"


class NotATorch(Exception):
    """The interpreter cannot be run, or has no importable torch."""


@dataclass
class VersionResult(ReplayResult):
    #: the torch version of the interpreter the script ran under
    version: str = ""
    python: str = ""


def _environment() -> dict:
    """This process's environment without what would make the interpreter import
    something other than its own torch (this process's ``PYTHONPATH`` is for dcefuzz;
    the scripts import nothing of it)."""
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}


def _run(command: list[str], timeout: float, cwd: str | None = None) -> tuple[int | None, str, str]:
    """Exit status (None past ``timeout``), stdout and stderr of ``command``; past the
    limit its whole process group is killed (a crash or timeout script's child too)."""
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            stdin=subprocess.DEVNULL, env=_environment(), cwd=cwd,
                            start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        out, err = proc.communicate()
        return None, out, err
    except BaseException:  # an interrupt: leave nothing running
        _kill_group(proc)
        proc.wait()
        raise
    return proc.returncode, out, err


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def interpreter(python: str) -> str:
    """``python`` as an absolute path (a bare name is looked up on ``PATH``), since the
    scripts run in a folder of their own; NotATorch if there is no such program."""
    found = shutil.which(python) if os.sep not in python else python
    if found is None or not os.path.isfile(found):
        raise NotATorch(f"{python}: no such interpreter")
    return os.path.abspath(found)


def torch_version(python: str, timeout: float = VERSIONS.query_seconds) -> str:
    """The torch version of the interpreter ``python``; NotATorch if it has none."""
    try:
        code, out, err = _run([python, "-c", _QUERY], timeout)
    except OSError as exc:
        raise NotATorch(f"{python}: cannot run it: {exc.strerror or exc}") from None
    if code is None:
        raise NotATorch(f"{python}: no torch version within {timeout:g} s")
    lines = out.strip().splitlines()
    if code != 0 or not lines or not _VERSION.match(lines[-1].strip()):
        said = (err.strip().splitlines() or lines or [f"exit status {code}"])[-1]
        raise NotATorch(f"{python}: not a Python with torch ({said})")
    return lines[-1].strip()


def outcome_of(code: int | None) -> str:
    """A repro script's exit status as a replay outcome."""
    return {REPRODUCES_EXIT: REPRODUCES, FIXED_EXIT: FIXED}.get(code, ERROR)


def _detail(code: int | None, out: str, err: str, timeout: float) -> str:
    """What the script said of its verdict: its last line that is not the bare verdict
    (for a bug that reproduces, the divergence it saw)."""
    if code is None:
        return f"no verdict within {timeout:g} s"
    lines = [ln.strip() for ln in out.splitlines() if ln.strip() and ln.strip() != "REPRODUCES"]
    said = lines[-1] if lines else ((err.strip().splitlines() or [""])[-1])
    if code in (REPRODUCES_EXIT, FIXED_EXIT, CANNOT_JUDGE_EXIT):
        return said
    return f"exit status {code}: {said}" if said else f"exit status {code}"


def tries(entry) -> int:
    """How many runs judge ``entry`` on one release: more than one where a run may
    miss a bug that is there (a crash corrupts memory; recorded verdicts that came and
    went: a release that is ``fixed`` between two that reproduce)."""
    return VERSIONS.flaky_tries if _came_and_went(by_release(entry.versions)) else rerun.tries(entry.kind)


def _came_and_went(ordered: list[tuple[str, str]]) -> bool:
    seen = [v for _, v in ordered if v != bugs.ERROR]
    return any(v == bugs.FIXED and bugs.REPRODUCES in seen[:i] and bugs.REPRODUCES in seen[i + 1:]
               for i, v in enumerate(seen))


def replay_under(path: Path, python: str, version: str, device: str | None = None,
                 timeout: float = VERSIONS.script_seconds) -> VersionResult:
    """Run the entry's repro script under ``python`` (whose torch is ``version``), on
    ``device`` or the entry's own, and record the verdict in the entry's ``versions``:
    ``tries(entry)`` runs at most, stopping at the first that reproduces.

    An entry that cannot be read is an ERROR and nothing is written.
    """
    try:
        entry = store.load(path)
    except BadEntry as exc:
        return VersionResult(str(path), Path(path).stem, "?", ERROR, str(exc), version=version, python=python)
    runs: list[Conclusion] = []
    allowed = tries(entry)
    with tempfile.TemporaryDirectory(prefix="dcefuzz-versions-") as tmp:
        script = Path(tmp) / f"{entry.id}.py"
        script.write_text(kinds.script(entry))
        while len(runs) < allowed and not any(r.outcome == REPRODUCES for r in runs):
            try:
                code, out, err = _run([python, str(script), *([device] if device else [])], timeout, cwd=tmp)
            except OSError as exc:
                runs.append(Conclusion(ERROR, f"cannot run {python}: {exc.strerror or exc}"))
                break  # the interpreter itself cannot run: another try says the same
            runs.append(Conclusion(outcome_of(code), _detail(code, out, err, timeout), code != CANNOT_JUDGE_EXIT))
    said = combined(runs)
    detail = said.detail
    if allowed > 1:
        detail += f" (run {len(runs)} of at most {allowed}: {', '.join(r.outcome for r in runs)})"
    # another replay of the entry (another release's, run beside this one) may have
    # recorded its verdict while this one ran: add to what is on disk now
    try:
        entry = store.load(path)
    except BadEntry:
        pass  # broken meanwhile: what this replay read is written back whole
    entry.versions[version] = RECORDED[said.outcome]
    store.update(path, entry)
    return VersionResult(str(path), entry.id, entry.kind, said.outcome, detail, said.judged,
                         version=version, python=python)
