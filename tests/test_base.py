"""How the shrinker drives a pass (``fuzzer.reduce.passes.base``): each candidate is sent
back whether it was taken, and a pass that restarts after a taken one sees it; stand-in
passes over stand-in cases."""

from dataclasses import dataclass, field

from helpers import offered_by

from fuzzer.reduce.passes import base


@dataclass(frozen=True)
class Counting:
    """Offers 1, 2, 3 and records what it was sent back for each."""

    name: str = "counting"
    sent: list = field(default_factory=list)

    def candidates(self, state):
        for n in (1, 2, 3):
            self.sent.append((n, (yield n)))


def test_drive_offers_every_candidate_sends_back_each_verdict_and_says_whether_any_was_taken():
    counting = Counting()
    offered, best = offered_by(counting, 0, lambda n: n == 2)
    assert offered == [1, 2, 3] and best == 2
    assert counting.sent == [(1, False), (2, True), (3, False)]
    assert not base.drive(Counting(), lambda n: False, type("S", (), {"best": 0, "best_divs": []})())


@dataclass(frozen=True)
class Halving:
    """Offers, of the best number, each of its halves down to 0: a round of edits."""

    name: str = "halving"

    def candidates(self, state):
        return base.first_taken_then_again(lambda n: iter(range(n // 2, -1, -1) if n else ()), state)


def test_after_a_taken_edit_the_edits_start_again_from_it_and_a_refused_round_ends_the_pass():
    offered, best = offered_by(Halving(), 8, lambda n: n % 2 == 0 and n > 0)
    assert best == 2
    assert offered == [4, 2, 1, 0]
