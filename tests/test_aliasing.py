"""A wrong value that needs its inputs' aliasing to change between calls is one bug
whatever its program's forms (``fuzzer.triage.aliasing``), said only where a probe
showed the bug gone with the inputs aliasing at every call; anything else keeps the
key that reads the program."""

import dataclasses
from pathlib import Path

import pytest
from test_recognise import ALIASED, APART, CHANGED, GONE, STAYS, _recognise, fake  # noqa: F401 - fake: a fixture

from fuzzer.corpus import bugs
from fuzzer.corpus.store import load
from fuzzer.judge import contract
from fuzzer.judge.trial import Finding
from fuzzer.triage import aliasing
from fuzzer.triage.culprit import localise

CORPUS = Path(__file__).resolve().parent.parent / "corpus"
#: ``x1.div_(0.5); m_scale(x0)``, ``x1`` a head window of ``x0`` at the later calls only
#: (pytorch/pytorch#139789): found at ``aot_eager``, with static shapes too
LATER = "wrong-mutation-e5d2d06841ad.json"
KEY = "corrupted-value|values @ guards [its inputs' aliasing changes between calls]"


def _other_forms(entry):
    """``entry`` with its ``div_`` written as a ``mul_``: another set of forms."""
    body = entry.case.program.body
    stmt = dataclasses.replace(body[0], form="mul_")
    program = dataclasses.replace(entry.case.program, body=(stmt, *body[1:]))
    return dataclasses.replace(entry, id=entry.id + "-mul", case=dataclasses.replace(entry.case, program=program))


def _told(entry, changes: str):
    return dataclasses.replace(entry, culprit=dataclasses.replace(entry.culprit, aliasing_changes=changes))


def test_the_fact_keys_the_bug_in_place_of_what_its_program_does():
    later = load(CORPUS / LATER)
    two = [later, _other_forms(later)]
    told = [_told(e, "later") for e in two]
    assert {bugs.key_of(e).text for e in told} == {KEY}
    assert all(bugs.separates(e) for e in told) and len(bugs.group(told)) == 1
    # not said: each program's forms split them, as before
    untold = [_told(e, "") for e in two]
    assert all("{does " in bugs.key_of(e).blame for e in untold) and len(bugs.group(untold)) == 2
    # the other way round (overlapping at the compile, distinct after) is the same cause,
    # one guard of AOTAutograd's missing (pytorch/pytorch#185891 fixes both)
    assert bugs.key_of(_told(later, "first")) == bugs.key_of(told[0])
    # read back from the entry's JSON
    again = type(later).from_json(told[0].to_json())
    assert again.culprit.aliasing_changes == "later" and bugs.key_of(again) == bugs.key_of(told[0])


def _finding(entry):
    return Finding(entry.kind, entry.case, [contract.Divergence(contract.WRONG_MUTATION, 1, "x0", "values", ())],
                   "cpu", "inductor")


@pytest.mark.parametrize("aliased, apart, said", [
    (GONE, GONE, "later"),
    (STAYS, GONE, ""),     # the windows at every call show it too: it needs no change
    (CHANGED, GONE, ""),   # another bug in its way (an effect token's StopIteration)
    (GONE, STAYS, ""),     # distinct inputs show it: a bug aliasing at the compile hides
])
def test_a_repeat_is_recognised_only_when_its_probes_agree(fake, aliased, apart, said):
    """The fact is checked by its own probes, on static shapes where they show the bug:
    gone both with the windows aliasing at every call and with them distinct at every
    call, it is said; else only the key that reads the program can match."""
    later = load(CORPUS / LATER)
    finding = _finding(later)
    fake.table = {("eager", None, True): GONE, ("aot_eager", ALIASED, False): aliased,
                  ("aot_eager", APART, False): apart}
    told, untold = (bugs.key_of(_told(later, c)) for c in ("later", ""))
    culprit = _recognise(finding, [told, untold])
    assert culprit is not None and culprit.aliasing_changes == said
    assert ("aot_eager", ALIASED, False) in fake.asked and ("aot_eager", ALIASED, True) not in fake.asked
    only = told if said else untold
    other = untold if said else told
    assert _recognise(finding, [other]) is None
    assert _recognise(finding, [only]) is not None


def test_a_finding_whose_aliasing_never_changes_is_not_asked(fake):
    later = load(CORPUS / LATER)
    mode = dataclasses.replace(later.case.program.mode, window_calls="")
    same = dataclasses.replace(later.case, program=dataclasses.replace(later.case.program, mode=mode))
    assert not aliasing.asked(same, later.kind) and aliasing.asked(later.case, later.kind)
    assert not aliasing.asked(later.case, contract.COMPILE_ERROR)  # an error is keyed by its frame
    fake.table = {("eager", None, True): GONE}
    _recognise(_finding(dataclasses.replace(later, case=same)), [bugs.key_of(later)])
    assert not any(asked[1] == ALIASED for asked in fake.asked)


@pytest.mark.compile
def test_one_cause_written_with_other_forms_is_one_bug():
    """The entry and the same program with ``mul_`` for ``div_``, each localised afresh
    (aot_eager only): two programs, one key, which no longer reads their forms."""
    later = load(CORPUS / LATER)
    keys = set()
    for entry in (later, _other_forms(later)):
        culprit = localise(entry.case, entry.kind, entry.bug_class, "cpu", backend=entry.backend, key_only=True)
        assert culprit.stage == "aot_eager" and culprit.aliasing_changes == "later"
        keys.add(bugs.key_of(dataclasses.replace(entry, culprit=culprit)).text)
    assert keys == {KEY}


def test_the_fact_is_the_key_wherever_the_bug_shows(monkeypatch, fake):
    """Where only Inductor's scheduling reads across the windows in an order right for
    distinct inputs, the bug first shows on Inductor, blamed on a switch that moves the
    computation (a 10-minute campaign of windows filed three keys so): the same cause,
    one key; a key-only triage that has the fact probes no switch and no bisector."""
    later = load(CORPUS / LATER)
    inductor = dataclasses.replace(later.culprit, stage="inductor", aliasing_changes="later",
                                   switches={"reorder_for_peak_memory": "gone"})
    assert inductor.places and bugs.key_of(dataclasses.replace(later, culprit=inductor)).text == KEY
    from fuzzer.triage import culprit as culprits
    monkeypatch.setattr(culprits, "Probe", fake)
    fake.table = {(s, None, True): GONE for s in ("eager", "aot_eager", "aot_eager_decomp_partition")}
    fake.table.update({("inductor", ALIASED, False): GONE, ("inductor", APART, False): GONE})
    found = localise(later.case, later.kind, later.bug_class, "cpu", key_only=True)
    assert found.stage == "inductor" and found.aliasing_changes == "later" and found.key == KEY.split(" @ ")[1]
    assert {asked[1] for asked in fake.asked} == {None, ALIASED, APART}  # no switch was thrown
    # without the fact, the same triage goes on to the switches
    fake.asked.clear()
    fake.table[("inductor", APART, False)] = STAYS
    fake.table[("inductor", "reorder_for_peak_memory", True)] = GONE  # blamed: no bisection
    assert not localise(later.case, later.kind, later.bug_class, "cpu", key_only=True).aliasing_changes
    assert {asked[1] for asked in fake.asked} - {None, ALIASED, APART}


def test_no_fact_where_dynamo_recompiled_at_the_change(fake):
    """Windows along a dim other than 0 bring a stride or offset Dynamo guards on: it
    recompiles at the call where the aliasing changes, and that call ran code compiled for
    it; the probes' graphs are others, so the fact is not asked, whatever they say."""
    later = load(CORPUS / LATER)
    finding = _finding(later)
    fake.table = {("eager", None, True): GONE, ("aot_eager", ALIASED, False): GONE,
                  ("aot_eager", APART, False): GONE}
    told, untold = (bugs.key_of(_told(later, c)) for c in ("later", ""))
    fake.recompiles = {"aot_eager": (1,)}
    culprit = _recognise(finding, [told, untold])
    assert culprit is not None and culprit.aliasing_changes == ""
    assert ("aot_eager", ALIASED, False) not in fake.asked
    # a recompile at another call than the change leaves the fact to its probes
    fake.recompiles, fake.asked = {"aot_eager": (2,)}, []
    assert _recognise(finding, [told, untold]).aliasing_changes == "later"


def test_the_fact_keeps_dynamic_shapes_only():
    later = load(CORPUS / LATER)
    told = _told(later, "later")
    dynamic = dataclasses.replace(told, culprit=dataclasses.replace(told.culprit, dynamic_only=True))
    assert bugs.key_of(dynamic).text == KEY.replace(" [its", " [dynamic shapes only] [its")
    assert bugs.key_of(told).text == KEY
