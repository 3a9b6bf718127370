"""Shrinking casualties beside a campaign (``fuzzer.campaign.casualties``): what one shrink
gives (a smaller entry, kept as it was, withdrawn, our own error), a bounded queue, and
the thread stopped at the end; shrinks and fresh processes stood in."""

import pytest
from helpers import case, prog

from fuzzer.campaign import casualties
from fuzzer.campaign.config import Config
from fuzzer.corpus.entry import Entry, Origin
from fuzzer.judge import contract
from fuzzer.limits import PoolLimits
from fuzzer.reduce.casualty import Confirmation, Reduced
from fuzzer.triage.culprit import Culprit

DIED = contract.Divergence(contract.CRASH, 0, "process", "process died: SIGSEGV")
BIG = case(prog({"x0": ("s0",)}, [("p_sin", ["x0"], "v0", {"site": 0}), ("e_log", ["x0"], None, {"site": 1})]))
SMALL = case(prog({"x0": ("s0",)}, [("e_log", ["x0"], None, {"site": 0})]))


def _entry():
    return Entry.build(contract.CRASH, BIG, [DIED],
                       Origin(seed=1, device="cpu", backend="inductor"), notes=["stack: somewhere"])


@pytest.fixture
def shrinker(monkeypatch):
    monkeypatch.setattr(casualties.triage, "localise", lambda entry, *a: Culprit("aot_eager", kind=entry.kind))
    s = casualties.CasualtyShrinker(Config(seed=1, device="cpu", corpus_dir="c"), PoolLimits(casualty_queue=2),
                                    log=lambda line: None)
    yield s
    s.finish(None)


def test_a_smaller_case_that_dies_so_stands_for_the_casualty_with_its_stage(shrinker, monkeypatch):
    monkeypatch.setattr(casualties, "shrink_casualty", lambda *a, **k: Reduced(SMALL, [DIED], {"statements": 1}))
    done = shrinker._shrunk(_entry(), "e.json")
    assert done.reduced.statements == 1 and done.reduced.detail[1:] == ["stack: somewhere"]
    assert done.culprit.stage == "aot_eager" and not done.withdrawn


def test_a_casualty_nothing_smaller_reproduces_is_kept_if_it_dies_again_and_withdrawn_if_not(shrinker, monkeypatch):
    monkeypatch.setattr(casualties, "shrink_casualty", lambda *a, **k: None)
    monkeypatch.setattr(casualties, "dies_again", lambda *a: Confirmation(("crash: x",), True))
    kept = shrinker._shrunk(_entry(), "e.json")
    assert kept.reduced is None and not kept.withdrawn and kept.culprit is not None
    monkeypatch.setattr(casualties, "dies_again", lambda *a: Confirmation(("ran to completion (ok)",), False))
    withdrawn = shrinker._shrunk(_entry(), "e.json")
    assert withdrawn.withdrawn and "did not die so again" in withdrawn.why and withdrawn.culprit is None


def test_our_own_error_keeps_the_casualty_unshrunk_and_says_so(shrinker, monkeypatch):
    monkeypatch.setattr(casualties, "shrink_casualty", lambda *a, **k: 1 / 0)
    failed = shrinker._shrunk(_entry(), "e.json")
    assert failed.reduced is None and failed.error.type == "ZeroDivisionError" and "shrink failed" in failed.why


def test_the_queue_takes_only_so_many(shrinker):
    shrinker.closing = True  # nothing is taken off the queue: its length alone is tested
    assert shrinker.submit(_entry(), "a.json") and shrinker.submit(_entry(), "b.json")
    assert not shrinker.submit(_entry(), "c.json")
