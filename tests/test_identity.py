"""What a bug is called (``fuzzer.judge.identity``): kinds and statuses that are their
strings, and a bug class's one text and one parse."""

import json

import pytest

from fuzzer.judge.identity import BugClass, Kind, Status


def test_a_kind_is_its_value_wherever_a_string_was():
    assert str(Kind.EFFECT_LOG) == f"{Kind.EFFECT_LOG}" == "effect-log"
    assert repr(Kind.EFFECT_LOG) == "'effect-log'"
    assert json.dumps({Kind.CRASH: Status.OK}) == '{"crash": "ok"}'
    assert Kind.EFFECT_LOG == "effect-log" and {"effect-log": 1}[Kind.EFFECT_LOG] == 1


@pytest.mark.parametrize("text, parsed", [
    ("missed-dce", BugClass("missed-dce")),
    ("effect-log|data,reordered", BugClass("effect-log", ("data", "reordered"))),
    # an error's one symptom may hold commas
    ("compile-error|KeyError: 'a, b'", BugClass("compile-error", ("KeyError: 'a, b'",))),
    ("crash|process died: SIGSEGV", BugClass("crash", ("process died: SIGSEGV",))),
])
def test_a_bug_class_parses_back_from_its_text(text, parsed):
    assert BugClass.parse(text) == parsed
    assert parsed.text == str(parsed) == text


def test_symptoms_read_as_words_and_as_a_title_says_them():
    c = BugClass("effect-log", ("data", "reordered"))
    assert c.words == {"data", "reordered"}
    assert c.shown() == "data, reordered"
    assert BugClass("compile-error", ("a,b",)).shown() == "a, b"
