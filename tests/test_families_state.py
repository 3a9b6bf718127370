"""The module-carry family (``fuzzer.program.families.state``), by public behaviour: its
ops registered as declared, its forms under its feature, and a program drawn with it
using them, legal and running eagerly; no compile."""

from helpers import family_holds_its_word

from fuzzer.program.families import state


def test_the_family_holds_its_word():
    family_holds_its_word(state)
