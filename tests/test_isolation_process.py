"""How a parent names a child's death and stops it (``fuzzer.isolation.process``): the
detail strings and what reads them back; stand-in processes, none started."""

import signal

import pytest

from fuzzer.isolation import child, process


def test_an_exit_code_names_its_signal_or_itself():
    assert process.signal_name(-signal.SIGSEGV) == "SIGSEGV"
    assert process.signal_name(3) == "exit code 3" and process.signal_name(None) == "exit code None"
    assert process.signal_name(-99) == "signal 99"


def test_a_death_with_glibcs_words_is_a_heap_corruption():
    assert process.died_detail(-signal.SIGABRT, "free(): invalid size") == "process died: heap corruption"
    assert process.died_detail(-signal.SIGABRT) == "process died: SIGABRT"


@pytest.mark.parametrize("detail, death", [
    (process.died_detail(-signal.SIGSEGV), ("SIGSEGV", None)),
    (process.died_detail(1), ("exit code 1", None)),
    (process.died_detail(-signal.SIGABRT, "corrupted double-linked list"), ("heap corruption", None)),
    ("[crash] program 3: " + process.memory_detail(512), ("memory", 512)),
    (process.timeout_detail(119.6), ("timeout", None)),
    ("anything else", (None, None)),
])
def test_each_detail_reads_back_as_the_death_it_says(detail, death):
    assert process.death_of(detail) == death


def test_a_timeout_says_its_limit_as_a_number_that_stands_alone():
    assert process.timeout_detail(120.2) == "program exceeded its time limit (120 s)"


class Child:
    """A stand-in child that stops when asked, or never."""

    def __init__(self, obeys):
        self.obeys, self.alive, self.killed = obeys, True, False

    def is_alive(self):
        return self.alive

    def join(self, timeout=None):
        if self.obeys and self.asked:
            self.alive = False

    def kill(self):
        self.killed, self.alive = True, False


class Pipe:
    def __init__(self, owner):
        self.owner, self.sent, self.closed = owner, [], False

    def send(self, message):
        self.sent.append(message)
        self.owner.asked = True

    def close(self):
        self.closed = True


@pytest.mark.parametrize("obeys", [True, False])
def test_a_child_is_asked_to_stop_and_killed_only_if_it_does_not(obeys):
    c = Child(obeys)
    c.asked = False
    pipe = Pipe(c)
    process.stop_child(c, pipe, grace=0)
    assert pipe.sent == [child.STOP] and pipe.closed and not c.alive and c.killed == (not obeys)


def test_this_processs_memory_is_read():
    assert process.rss_kb() > 0
