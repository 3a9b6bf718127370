"""A pytest plugin: every entry of a corpus folder as a test item.

``pytest --dcefuzz-corpus DIR`` (repeatable) collects each ``*.json`` entry of DIR
as an item that replays it (``fuzzer.replay.rerun``) on the device it was found on
(or ``--dcefuzz-device``).  An item passes while its bug stays fixed and fails when
it reproduces; an entry marked as a known bug (``dcefuzz known ENTRY``) is expected
to reproduce (xfail), and its passing is reported as XPASS (a failure under
``xfail_strict``), the sign the bug was fixed.  An entry that cannot be judged here
is skipped with the reason: found on a device this machine lacks, its program no
longer runs eagerly, its compiled program raises another way (an error that may come
before the bug and hide it), or it was not wholly compiled (a graph break, a refusal,
an inlined region): a bug that did not show in code that did not run compiled is not
fixed; the same of a second compile after a first that reproduced.  An unreadable
entry, or one whose kind now diverges with another bug class (a crash: dies another
death), fails.  So a project keeps the bugs it found as regression tests.

Registered through the ``pytest11`` entry point; it does nothing without the option.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from fuzzer import hashseed

OPTION = "--dcefuzz-corpus"


def pytest_addoption(parser) -> None:
    group = parser.getgroup("dcefuzz")
    group.addoption(OPTION, action="append", default=[], metavar="DIR",
                    help="collect every entry of this dcefuzz corpus folder as a test item (repeatable)")
    group.addoption("--dcefuzz-device", default=None, metavar="DEVICE",
                    help="replay corpus entries on this device (default: each entry's own)")


def under_one_hash_seed(config) -> None:
    """Start this pytest again under dcefuzz's hash seed, unless it runs with a seed:
    entries replay in this process, and some show only under the order of torch's sets
    their finding was made under.  Capture is stopped first, so the new process writes
    to the terminal rather than to the files the old one captured into."""
    if hashseed.AT_START is not None:
        return
    capture = config.pluginmanager.getplugin("capturemanager")
    if capture is not None:
        capture.stop_global_capturing()
    hashseed.restart()


def pytest_configure(config) -> None:
    """Each corpus folder joins the paths pytest collects from, so its entries are
    collected (and counted, selected, deselected) like any test file's tests."""
    folders = config.getoption(OPTION)
    for folder in folders:
        if not Path(folder).is_dir():
            raise pytest.UsageError(f"{OPTION} {folder}: no such folder")
    if folders:
        under_one_hash_seed(config)
    config._dcefuzz_corpora = [Path(f).resolve() for f in folders]
    if folders and config.args == [str(config.invocation_params.dir)] and not config.getini("testpaths"):
        config.args[:] = []  # no test paths given: only the corpora
    config.args.extend(str(Path(f).resolve()) for f in folders)


def pytest_collect_file(file_path: Path, parent):
    corpora = getattr(parent.config, "_dcefuzz_corpora", [])
    from fuzzer.corpus.store import NOT_ENTRIES

    if file_path.suffix == ".json" and file_path.parent.resolve() in corpora and file_path.name not in NOT_ENTRIES:
        return EntryFile.from_parent(parent, path=file_path)
    return None


class EntryFile(pytest.File):
    """An entry's JSON file: one item."""

    def collect(self):
        yield EntryItem.from_parent(self, name=self.path.stem, entry_path=self.path)


class EntryItem(pytest.Item):
    """One corpus entry, replayed."""

    def __init__(self, *, entry_path: Path, **kwargs):
        super().__init__(**kwargs)
        self.entry_path = entry_path
        self.known_bug = None
        try:
            from fuzzer.corpus.store import load

            self.known_bug = load(entry_path).known_bug
        except Exception:  # noqa: BLE001, S110 - an unreadable entry fails when it runs
            pass
        if self.known_bug is not None:
            self.add_marker(pytest.mark.xfail(reason=f"known bug: {self.known_bug}", raises=EntryReproduces))

    def runtest(self) -> None:
        from fuzzer.replay.rerun import ERROR, REPRODUCES, replay_entry

        result = replay_entry(self.entry_path, self.config.getoption("--dcefuzz-device"))
        if result.outcome == REPRODUCES:
            raise EntryReproduces(f"{result.id} reproduces: {result.detail}")
        if result.outcome == ERROR:
            if not result.judged:  # no such device, eager fails, raises another way, not wholly compiled
                pytest.skip(f"{result.id}: {result.detail}")
            raise EntryError(f"{result.id}: {result.detail}")

    def repr_failure(self, excinfo):
        if isinstance(excinfo.value, (EntryReproduces, EntryError)):
            return str(excinfo.value) + f"\n(repro script: {self.entry_path.with_suffix('.py')})"
        return super().repr_failure(excinfo)

    def reportinfo(self):
        return self.entry_path, None, f"dcefuzz entry {self.name}"


class EntryReproduces(AssertionError):
    """The entry's bug reproduces on this torch."""


class EntryError(Exception):
    """The entry cannot be judged here (unreadable, eager fails, another bug of its kind)."""
