"""What the pool and its workers say (``fuzzer.campaign.messages``): the child protocol's
ready read as a record, and a report's own errors read back."""

from fuzzer.campaign import messages
from fuzzer.internal import InternalError


def test_the_child_protocols_ready_is_read_as_a_record_and_others_pass_as_they_are():
    assert messages.received(("ready", 42)) == messages.Ready(42)
    done = messages.Done(3, messages.Report("ok", 1.0))
    assert messages.received(done) is done
    assert messages.received(("stop",)) == ("stop",)


def test_a_reports_errors_are_read_back_as_internal_errors():
    error = InternalError.of("shrink", KeyError("ours"))
    report = messages.Report("ok", 1.0, errors=[error.to_json()])
    (back,) = report.internal_errors()
    assert isinstance(back, InternalError) and back.to_json() == error.to_json()
