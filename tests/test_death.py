"""How a process died and which deaths are one (``fuzzer.judge.death``): glibc's heap
words make a heap corruption, and a corruption is met by any of its deaths."""

import pytest

from fuzzer.judge import death


@pytest.mark.parametrize("how, said, name", [
    ("SIGABRT", "free(): invalid size\n", death.HEAP_CORRUPTION),
    ("SIGSEGV", "corrupted size vs. prev_size", death.HEAP_CORRUPTION),
    ("SIGABRT", "python: malloc.c:2617: sysmalloc: Assertion `x' failed.", death.HEAP_CORRUPTION),
    ("SIGABRT", "_int_new(): some future wording", "SIGABRT"),   # not an allocator function of the list
    ("SIGABRT", "terminate called after throwing an instance of 'c10::Error'", "SIGABRT"),
    ("SIGBUS", "free(): invalid size", "SIGBUS"),             # a corrupted heap never dies of SIGBUS
    ("exit code 3", "", "exit code 3"),
])
def test_a_death_is_named_by_its_signal_and_glibcs_words(how, said, name):
    assert death.death_name(how, said) == name


def test_a_heap_corruption_dies_so_by_any_of_its_deaths_either_way_round_and_plain_signals_do_not():
    corrupted, segv = "crash|process died: heap corruption", "crash|process died: SIGSEGV"
    assert death.dies_so(corrupted, segv) and death.dies_so(segv, corrupted)
    assert death.dies_so(segv, segv)
    assert not death.dies_so(segv, "crash|process died: SIGABRT")
    assert not death.dies_so(corrupted, "crash|process died: SIGBUS")
    assert not death.dies_so(corrupted, "timeout|process died: SIGSEGV")  # the texts otherwise alike


def test_every_listed_glibc_message_is_read_as_one():
    for words in death.GLIBC_HEAP_WORDS:
        assert death.death_name("SIGABRT", f"python3: {words}\n") == death.HEAP_CORRUPTION, words
