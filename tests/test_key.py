"""A bug's key (``fuzzer.triage.key``): its family and its blame as one record, written
as the text a bug's id hashes; hand-built classes."""

import dataclasses

import pytest
from helpers import klass

from fuzzer.triage.key import KEY_SEPARATOR, BugKey


def test_a_key_is_written_as_its_family_then_its_blame():
    k = BugKey(klass("effect-log|missing,reordered"), "inductor: reorder_for_locality")
    assert k.text == "effect-log|missing,reordered @ inductor: reorder_for_locality" == str(k)
    assert KEY_SEPARATOR in k.text and k.text.split(KEY_SEPARATOR) == [k.family.text, k.blame]


def test_two_keys_are_one_bug_exactly_when_family_and_blame_are_and_a_key_is_frozen():
    k = BugKey(klass("compile-error|raised KeyError in torch._inductor.scheduler:compute_ancestors"), "inductor")
    assert k == BugKey(klass(k.family.text), "inductor") and hash(k) == hash(BugKey(k.family, "inductor"))
    assert k != BugKey(k.family, "aot_eager") and k != BugKey(klass("compile-error|other"), "inductor")
    with pytest.raises(dataclasses.FrozenInstanceError):
        k.blame = "eager"
