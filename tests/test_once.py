"""One piece of work in a child that may die (``fuzzer.isolation.once``): its answer, or
how it died; one spawned child each, no compile."""

import os

from fuzzer.isolation import once


class Echo:
    def load(self):
        pass

    def __call__(self, message, send):
        send(("echo", message))


class Dying:
    def load(self):
        pass

    def __call__(self, message, send):
        os._exit(message)


def test_the_childs_answer_comes_back():
    assert once.run_once(Echo(), ("hello",), threads=1) == ("echo", ("hello",))


def test_a_child_that_dies_first_is_a_death_not_an_answer():
    assert once.run_once(Dying(), 3, threads=1) == once.Died("process died: exit code 3")
