"""Hints for a user's library (``fuzzer.user.hints``): which ops to fuzz, and what each
takes, read from TOML or JSON with one error for each way a file is wrong."""

import json

import pytest

from fuzzer.user import hints
from fuzzer.user.hints import HintsError


def test_a_hints_file_reads_its_library_its_ops_and_which_to_fuzz(tmp_path):
    path = tmp_path / "lib.toml"
    path.write_text('library = "mylib"\ninclude = ["mylib::*"]\nexclude = ["mylib::slow*"]\n'
                    '[ops."mylib::scale"]\nsignature = "(n)->(n)"\nscalars = {k = [1, 2]}\n')
    h = hints.load(path)
    assert h.library == "mylib" and hints.is_hints(str(path)) and not hints.is_hints("mylib.py")
    assert h.wants("mylib::scale") and h.wants("mylib::scale.default") and not h.wants("mylib::slow_op")
    assert not h.wants("other::op")
    assert h.of("mylib::scale.default").signature == "(n)->(n)" and h.of("mylib::scale").scalars == {"k": (1, 2)}
    assert h.of("mylib::other") == hints.OpHints()


@pytest.mark.parametrize("data, words", [
    ({}, "library"),
    ({"library": "x", "extra": 1}, "unknown keys"),
    ({"library": "x", "ops": {"scale": {}}}, "qualified name"),
    ({"library": "x", "ops": {"x::scale": {"speed": 1}}}, "unknown keys"),
    ({"library": "x", "ops": {"x::scale": {"scalars": {"k": []}}}}, "non-empty list"),
])
def test_a_file_that_is_wrong_says_how(tmp_path, data, words):
    path = tmp_path / "lib.json"
    path.write_text(json.dumps(data))
    with pytest.raises(HintsError, match=words):
        hints.load(path)


def test_an_unreadable_or_unparsable_file_is_refused(tmp_path):
    with pytest.raises(HintsError, match="cannot read"):
        hints.load(tmp_path / "missing.toml")
    (tmp_path / "bad.toml").write_text("library = ")
    with pytest.raises(HintsError):
        hints.load(tmp_path / "bad.toml")
