"""A repeat is recognised by checking the facts its bug's key reads, never by guessing
one: two causes that share a class and a blamed switch stay two bugs."""

import dataclasses

import pytest
from helpers import case, prog

from fuzzer.campaign import entries
from fuzzer.campaign.config import Config
from fuzzer.corpus.bugs import key_of
from fuzzer.judge import contract
from fuzzer.judge.trial import Finding
from fuzzer.triage import recognise as recognition
from fuzzer.triage import switches
from fuzzer.triage.culprit import Culprit
from fuzzer.triage.probe import Outcome

GONE, STAYS, CHANGED = Outcome.GONE, Outcome.STAYS, Outcome.CHANGED
PEAK, REINPLACE = "reorder_for_peak_memory", "reinplace_inplaceable_ops"


def _switch_of(patch):
    if not patch:
        return None
    return next(s.name for s in switches.SWITCHES if s.patch == patch)


class FakeProbe:
    """Answers from a table, as a compile would: (backend, switch or None, dynamic) ->
    outcome, STAYS where the table says nothing (the bug, as the trial saw it)."""

    table: dict = {}
    asked: list = []

    def __init__(self, case, kind, bug_class, device, budget):
        self.calls, self.seconds = 0, 0.0

    def outcome(self, backend, config=None, dynamic=True, within=None):
        self.calls += 1
        asked = (backend, _switch_of(config), dynamic)
        FakeProbe.asked.append(asked)
        return FakeProbe.table.get(asked, STAYS)


def _answers(**by_switch):
    """The table of a bug first shown on Inductor: earlier stages clean, the named
    switches' outcomes, static shapes as given by ``static``."""
    static = by_switch.pop("static", STAYS)
    table = {(s, None, True): GONE for s in ("eager", "aot_eager", "aot_eager_decomp_partition")}
    table.update({("inductor", name, True): outcome for name, outcome in by_switch.items()})
    table[("inductor", None, False)] = static
    return table


@pytest.fixture
def fake(monkeypatch):
    monkeypatch.setattr(recognition, "Probe", FakeProbe)
    FakeProbe.table, FakeProbe.asked = {}, []
    return FakeProbe


def _finding():
    body = [("p_sin", ["x0"], f"v{i}", {"site": i}) for i in range(4)]
    big = case(prog({"x0": ("s0",)}, body, outputs=["v3"]))
    div = contract.Divergence(contract.EFFECT_LOG, 0, "sequence", "reordered", ("reordered",))
    return Finding(contract.EFFECT_LOG, big, [div], "cpu", "inductor")


def _key(finding, **by_switch):
    """The key a whole triage gives a finding whose switches answer so."""
    static = by_switch.pop("static", STAYS)
    found = {s.name: by_switch.get(s.name, STAYS).value for s in switches.available()}
    culprit = Culprit("inductor", kind=finding.kind, switches=found,
                      dynamic_only={GONE: True, STAYS: False}.get(static))
    config = Config(seed=0, device="cpu", corpus_dir="unused")
    return key_of(dataclasses.replace(entries.found_entry(finding, 0, config), culprit=culprit))


def _recognise(finding, keys):
    config = Config(seed=0, device="cpu", corpus_dir="unused")
    entry = entries.found_entry(finding, 0, config)
    return recognition.recognise(finding.case, finding.kind, entry.bug_class, "cpu", keys,
                                 lambda c: key_of(dataclasses.replace(entry, culprit=c)))


def test_a_repeat_is_recognised_with_only_the_probes_its_key_reads(fake):
    finding = _finding()
    known = _key(finding, **{PEAK: GONE, REINPLACE: GONE})
    assert known.endswith(f"inductor:{PEAK} (also gone with {REINPLACE} off)")
    fake.table = _answers(**{PEAK: GONE, REINPLACE: GONE})
    culprit = _recognise(finding, [known])
    assert culprit is not None and culprit.key_only
    asked = set(fake.asked)
    # the finding's own backend is not compiled again: the trial saw the bug there
    assert ("inductor", None, True) not in asked
    # switches that only move the computation, before the blamed one, are not asked
    assert not {("inductor", s.name, True) for s in switches.SWITCHES
                if s.role is switches.Role.MOVES and s.name != PEAK} & asked
    assert ("inductor", REINPLACE, True) in asked and ("inductor", None, False) in asked


def test_a_cause_that_shares_the_class_and_the_blamed_switch_is_not_taken_for_it(fake):
    """Both are gone with the peak-memory reordering off; only one is also gone with
    reinplacing off, and the key says so: the blamed switch alone would merge them."""
    finding = _finding()
    known = _key(finding, **{PEAK: GONE, REINPLACE: GONE})
    fake.table = _answers(**{PEAK: GONE, REINPLACE: STAYS})
    assert _recognise(finding, [known]) is None
    other = _key(finding, **{PEAK: GONE})
    assert _recognise(finding, [known, other]).switches[REINPLACE] == STAYS.value
    # and the other way round: the bug known without reinplacing is not this one
    fake.table = _answers(**{PEAK: GONE, REINPLACE: GONE})
    assert _recognise(finding, [other]) is None


@pytest.mark.parametrize("blamed, answers, first", [
    ("buffer_reuse", {"buffer_reuse": GONE, PEAK: GONE}, None),   # a later switch is blamed
    (PEAK, {REINPLACE: GONE}, None),                              # the blamed one does not remove it
    (PEAK, {"static": GONE, PEAK: GONE}, None),                   # needs dynamic shapes: another key
    (PEAK, {PEAK: GONE}, "aot_eager"),                            # shows before Inductor
])
def test_a_finding_whose_facts_differ_in_one_is_not_recognised(fake, blamed, answers, first):
    finding = _finding()
    known = _key(finding, **{blamed: GONE})
    fake.table = _answers(**answers)
    if first:
        fake.table[(first, None, True)] = STAYS
    assert _recognise(finding, [known]) is None


def test_only_a_stage_without_subsystems_or_one_switch_of_inductor_is_checked():
    wrong = "corrupted-value|values @ "
    keys = [wrong + "inductor:buffer_reuse", wrong + "inductor:remove_noop_ops[aten.clone]",
            wrong + "inductor:remove_noop_ops+reinplace_inplaceable_ops", wrong + "inductor",
            wrong + "aot_eager {does head}", wrong + "aot_eager_decomp_partition",
            wrong + "inductor:decompose_auto_functionalized [dynamic shapes only]", "effect-log|reordered @ eager"]
    assert recognition.checkable(contract.WRONG_OUTPUT, "wrong-output|values", "inductor", keys) == [
        keys[0], keys[4], keys[6]]
    assert recognition.checkable(contract.WRONG_OUTPUT, "wrong-output|values", "inductor", keys,
                                 [recognition.Shape.STAGE]) == [keys[4]]
    # found on aot_eager (a bug a known one masks): Inductor is none of its stages
    assert recognition.checkable(contract.WRONG_OUTPUT, "wrong-output|values", "aot_eager", keys) == [keys[4]]
    error = "compile-error|raised KeyError in torch._inductor:Scheduler.compute_ancestors"
    assert recognition.checkable(contract.COMPILE_ERROR, error, "inductor",
                                 [f"{error} @ inductor:{REINPLACE}", f"{error} @ inductor:lowerings",
                                  f"{error} @ inductor", f"{error} @ aot_eager"]) == [f"{error} @ aot_eager"]


AOT_ERROR = "compile-error|raised AssertionError in torch._higher_order_ops:_do_auto_functionalize"


def _error_finding(bug_class=AOT_ERROR):
    body = [("p_sin", ["x0"], f"v{i}", {"site": i}) for i in range(4)]
    big = case(prog({"x0": ("s0",)}, body, outputs=["v3"]))
    div = contract.Divergence(contract.COMPILE_ERROR, 0, "compile", bug_class.partition("|")[2],
                              (bug_class.partition("|")[2],))
    finding = Finding(contract.COMPILE_ERROR, big, [div], "cpu", "inductor")
    config = Config(seed=0, device="cpu", corpus_dir="unused")
    assert entries.found_entry(finding, 0, config).bug_class == bug_class
    return finding


def _error_key(finding, stage_name, static=STAYS, named_by=()):
    culprit = Culprit(stage_name, kind=finding.kind, dynamic_only={GONE: True, STAYS: False}.get(static),
                      named_by=named_by)
    config = Config(seed=0, device="cpu", corpus_dir="unused")
    return key_of(dataclasses.replace(entries.found_entry(finding, 0, config), culprit=culprit))


def test_an_error_before_inductor_is_recognised_as_found_without_a_compile_of_inductor(fake, monkeypatch,
                                                                                    tmp_path):
    """The most hit bug of the corpus, a compile error at ``aot_eager``: its key is the
    stage walk and static shapes, three compiles, none of them Inductor's; nothing is
    shrunk and nothing triaged."""
    finding = _error_finding()
    known = _error_key(finding, "aot_eager")
    assert known == f"{AOT_ERROR} @ aot_eager"
    fake.table = {("eager", None, True): GONE}
    judged, triaged = [], []
    monkeypatch.setattr(entries, "triaged", lambda entry, *a, **k: triaged.append(entry) or entry)
    config = Config(seed=0, device="cpu", corpus_dir=str(tmp_path))
    counted = entries.counted_only(finding, 0, config, {known: 2}, judge=judged.append)
    assert counted is not None and key_of(counted) == known and counted.statements == 4
    assert judged == [] and triaged == []
    assert sorted(set(fake.asked)) == [("aot_eager", None, False), ("aot_eager", None, True), ("eager", None, True)]


@pytest.mark.parametrize("table", [
    {("eager", None, True): STAYS},                                      # shows at eager already
    {("eager", None, True): GONE, ("aot_eager", None, True): GONE},      # not at aot_eager
    {("eager", None, True): GONE, ("aot_eager", None, False): GONE},     # needs dynamic shapes
])
def test_an_error_whose_stage_or_shapes_differ_is_not_the_known_one(fake, table):
    finding = _error_finding()
    fake.table = table
    assert _recognise(finding, [_error_key(finding, "aot_eager")]) is None


def test_a_failed_lookup_is_recognised_only_with_the_same_locals(fake, monkeypatch):
    """Two causes fail the same lookup at the same place; the locals that hold the
    missing key tell them apart, and are probed."""
    error = "compile-error|raised KeyError in torch._functorch:lookup_somewhere"
    finding = _error_finding(error)
    fake.table = {("eager", None, True): GONE}
    monkeypatch.setattr(recognition.lookup, "probe_lookup", lambda probe, where: ("node",))
    held = _error_key(finding, "aot_eager", named_by=("node",))
    other = _error_key(finding, "aot_eager", named_by=("dep_node_name",))
    assert held != other
    assert _recognise(finding, [other]) is None
    assert _recognise(finding, [other, held]).named_by == ("node",)


def test_a_recognised_repeat_is_counted_without_its_key_only_triage(fake, monkeypatch, tmp_path):
    """The old way triaged every repeat key-only; a recognised one needs no triage, and
    one of a family whose every full bug recognition checked is not triaged key-only
    either: that triage's key could match none of them."""
    finding = _finding()
    triaged = []
    monkeypatch.setattr(entries, "triaged", lambda entry, *a, **k: triaged.append(entry) or entry)
    config = Config(seed=0, device="cpu", corpus_dir=str(tmp_path), shrink=False)
    known = _key(finding, **{PEAK: GONE})
    fake.table = _answers(**{PEAK: GONE})
    counted = entries.counted_only(finding, 0, config, {known: 2})
    assert counted is not None and key_of(counted) == known and triaged == []
    fake.table = _answers(**{"buffer_reuse": GONE})
    assert entries.counted_only(finding, 0, config, {known: 2}) is None and triaged == []
    # a key recognition cannot check: the key-only triage as before
    assert entries.counted_only(finding, 0, config, {known: 2, known.split(":")[0]: 2}) is None
    assert len(triaged) == 1


def test_a_key_no_answer_could_make_is_passed_over_without_a_compile(fake):
    """A wrong value at ``aot_eager`` is keyed by what its 1-minimal program does; a
    finding whose program does otherwise cannot be it, whatever the probes say."""
    body = [("p_sin", ["x0"], f"v{i}", {"site": i}) for i in range(4)]
    big = case(prog({"x0": ("s0",)}, body, outputs=["v3"]))
    div = contract.Divergence(contract.WRONG_OUTPUT, 0, "output 0", "values differ", ("values",))
    finding = Finding(contract.WRONG_OUTPUT, big, [div], "cpu", "inductor")
    key = "corrupted-value|values @ aot_eager {does head, mul_; strided}"
    assert recognition.checkable(finding.kind, "wrong-output|values", "inductor", [key])
    fake.table = {("eager", None, True): GONE}
    assert _recognise(finding, [key]) is None and fake.asked == []
    config = Config(seed=0, device="cpu", corpus_dir="unused")
    own = key_of(dataclasses.replace(entries.found_entry(finding, 0, config),
                                     culprit=Culprit("aot_eager", kind=finding.kind, dynamic_only=False)))
    assert _recognise(finding, [own]) is not None and fake.asked
