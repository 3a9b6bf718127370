"""cache-key-ignores-custom-passes (``fuzzer.faults.cache_key``): with the fault, the
compile caches' key reads nothing of a custom pass; installed and undone, no compile."""

from torch._inductor import codecache

from fuzzer.faults import cache_key


def test_the_key_reads_nothing_of_a_custom_pass_while_planted():
    (fault,) = cache_key.FAULTS
    assert fault.unavailable() is None and fault.expected_kind == "stale-cache"
    original = codecache.FxGraphHashDetails.__dict__["_get_custom_pass_detail"]
    undo = fault.install()
    try:
        assert codecache.FxGraphHashDetails._get_custom_pass_detail(None, object()) is None
    finally:
        undo()
    assert codecache.FxGraphHashDetails.__dict__["_get_custom_pass_detail"] is original
