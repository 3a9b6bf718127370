"""Our JSON files (``fuzzer.files``): written whole or not at all, and read with one
error for each way a file is unusable."""

import pytest

from fuzzer import files


class Unreadable(ValueError):
    pass


def test_a_write_replaces_the_file_whole_and_leaves_no_temporary_behind(tmp_path):
    path = tmp_path / "state.json"
    files.atomic_write(path, '{"a": 1}')
    files.atomic_write(path, '{"a": 2}')
    assert files.read_json(path, Unreadable) == {"a": 2}
    assert [p.name for p in tmp_path.iterdir()] == ["state.json"]


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path, monkeypatch):
    path = tmp_path / "state.json"
    files.atomic_write(path, "old")

    def broken(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(files.os, "replace", broken)
    with pytest.raises(OSError, match="disk full"):
        files.atomic_write(path, "new")
    assert path.read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["state.json"]


def test_a_missing_or_unparsable_file_raises_the_callers_error(tmp_path):
    with pytest.raises(Unreadable, match="no such entry"):
        files.read_json(tmp_path / "nothing.json", Unreadable, "no such entry")
    (tmp_path / "bad.json").write_text("{")
    with pytest.raises(Unreadable, match="not readable JSON"):
        files.read_json(tmp_path / "bad.json", Unreadable)
