"""The function family of ops and forms (``fuzzer.program.families.function``), by public
behaviour: its ops registered as declared, its forms registered under its feature, and a
program drawn with that feature using them, legal and running eagerly; no compile."""

from helpers import family_holds_its_word

from fuzzer.program.families import function


def test_the_family_holds_its_word():
    family_holds_its_word(function)
