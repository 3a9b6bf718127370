"""Our own errors (``fuzzer.internal``): recorded with where they happened and their
traceback's end, and read back."""

from fuzzer import internal
from fuzzer.internal import InternalError


def _raised():
    try:
        raise ValueError("first line\nsecond line")
    except ValueError as exc:
        return exc


def test_an_error_keeps_its_stage_type_first_line_and_traceback():
    error = InternalError.of(internal.SHRINK, _raised())
    assert (error.stage, error.type) == ("shrink", "ValueError")
    assert error.message == "first line" and "_raised" in error.traceback
    assert error.line() == "shrink: ValueError: first line"
    assert InternalError.from_json(error.to_json()) == error


def test_a_long_traceback_keeps_its_end_and_an_empty_message_stays_empty():
    def deep(n):
        if n == 0:
            raise ValueError()
        deep(n - 1)

    try:
        deep(200)
    except ValueError as exc:
        error = InternalError.of(internal.TRIAL, exc)
    assert len(error.traceback) <= internal.TRACEBACK_CHARS and error.traceback.rstrip().endswith("ValueError")
    assert error.message == ""
