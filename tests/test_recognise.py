"""A repeat is recognised by checking the facts its bug's key reads, never by guessing
one: two causes that share a class and a blamed switch stay two bugs."""

import dataclasses
from pathlib import Path

import pytest
from helpers import case, key, klass, prog

from fuzzer.campaign import entries
from fuzzer.campaign.config import Config
from fuzzer.corpus.bugs import key_of
from fuzzer.corpus.examples import Examples
from fuzzer.corpus.store import load
from fuzzer.judge import contract
from fuzzer.judge.trial import Finding
from fuzzer.limits import TRIAGE
from fuzzer.triage import recognise as recognition
from fuzzer.triage import switches
from fuzzer.triage.culprit import Culprit
from fuzzer.triage.probe import Outcome

GONE, STAYS, CHANGED = Outcome.GONE, Outcome.STAYS, Outcome.CHANGED
PEAK, REINPLACE = "reorder_for_peak_memory", "reinplace_inplaceable_ops"
#: what the fake probe's table names the case with its windows aliasing at every call by,
#: and the case with them distinct inputs at every call
ALIASED, APART = "aliased at every call", "apart at every call"

CORPUS = Path(__file__).resolve().parent.parent / "corpus"


def _switch_of(patch):
    if not patch:
        return None
    return next((s.name for s in switches.SWITCHES if s.patch == patch), "a pair")


class FakeProbe:
    """Answers from a table, as a compile would: (backend, switch or None, dynamic) ->
    outcome, STAYS where the table says nothing (the bug, as the trial saw it)."""

    table: dict = {}
    asked: list = []
    #: what a compile showed besides the bug (the kinds of another bug), as asked
    shows: dict = {}
    #: backend -> the bindings a compile of the finding's own case there recompiled at
    recompiles: dict = {}

    def __init__(self, case, kind, bug_class, device, budget, spots=None):
        self.case, self.kind = case, kind
        self.calls, self.seconds, self.seen, self.exhausted = 0, 0.0, (), False
        self.recompiled = {}

    def outcome(self, backend, config=None, dynamic=True, within=None, case=None):
        self.calls += 1
        variant = None if case is None else (ALIASED if case.program.mode.windows else APART)
        patched = getattr(within, "__name__", None)  # a patch of torch's (``edges.kept``)
        asked = (backend, variant or _switch_of(config) or patched, dynamic)
        FakeProbe.asked.append(asked)
        self.seen = FakeProbe.shows.get(asked, ())
        if case is None and config is None:
            self.recompiled[(backend, dynamic)] = FakeProbe.recompiles.get(backend, ())
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
    FakeProbe.table, FakeProbe.asked, FakeProbe.shows, FakeProbe.recompiles = {}, [], {}, {}
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
    return recognition.recognise(entry, keys, lambda c: key_of(dataclasses.replace(entry, culprit=c)))


def test_a_repeat_is_recognised_with_only_the_probes_its_key_reads(fake):
    finding = _finding()
    known = _key(finding, **{PEAK: GONE, REINPLACE: GONE})
    assert known.text.endswith(f"inductor:{PEAK} (also gone with {REINPLACE} off)")
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
    keys = [key(wrong + blame) for blame in (
        "inductor:buffer_reuse", "inductor:remove_noop_ops[aten.clone]",
        "inductor:remove_noop_ops+reinplace_inplaceable_ops", "inductor", "aot_eager {does head}",
        "aot_eager_decomp_partition", "inductor:decompose_auto_functionalized [dynamic shapes only]")]
    keys.append(key("effect-log|reordered @ eager"))
    values = klass("wrong-output|values")
    assert recognition.checkable(contract.WRONG_OUTPUT, values, "inductor", keys) == [keys[0], keys[4], keys[6]]
    assert recognition.checkable(contract.WRONG_OUTPUT, values, "inductor", keys,
                                 [recognition.Shape.STAGE]) == [keys[4]]
    # found on aot_eager (a bug a known one masks): Inductor is none of its stages
    assert recognition.checkable(contract.WRONG_OUTPUT, values, "aot_eager", keys) == [keys[4]]
    error = "compile-error|raised KeyError in torch._inductor:Scheduler.compute_ancestors"
    errors = [key(f"{error} @ {blame}") for blame in (f"inductor:{REINPLACE}", "inductor:lowerings", "inductor",
                                                      "aot_eager", "aot_eager_decomp_partition:decomposition")]
    assert recognition.checkable(contract.COMPILE_ERROR, klass(error), "inductor", errors,
                                 [recognition.Shape.STAGE]) == [key(f"{error} @ aot_eager")]
    # an error on Inductor: the bisector's answer and the switches are checked
    assert [recognition.shape_of(k, contract.COMPILE_ERROR, klass(error), "inductor") for k in errors] == [
        recognition.Shape.ERROR] * 3 + [recognition.Shape.STAGE, None]


AOT_ERROR = "compile-error|raised AssertionError in torch._higher_order_ops:_do_auto_functionalize"


def _error_finding(bug_class=AOT_ERROR):
    body = [("p_sin", ["x0"], f"v{i}", {"site": i}) for i in range(4)]
    big = case(prog({"x0": ("s0",)}, body, outputs=["v3"]))
    div = contract.Divergence(contract.COMPILE_ERROR, 0, "compile", bug_class.partition("|")[2],
                              (bug_class.partition("|")[2],))
    finding = Finding(contract.COMPILE_ERROR, big, [div], "cpu", "inductor")
    config = Config(seed=0, device="cpu", corpus_dir="unused")
    assert entries.found_entry(finding, 0, config).bug_class.text == bug_class
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
    assert known.text == f"{AOT_ERROR} @ aot_eager"
    fake.table = {("eager", None, True): GONE}
    judged, triaged = [], []
    monkeypatch.setattr(entries, "triaged", lambda entry, *a, **k: triaged.append(entry) or entry)
    config = Config(seed=0, device="cpu", corpus_dir=str(tmp_path))
    counted = entries.counted_only(finding, 0, config, {known: 2}, judge=judged.append)
    assert counted is not None and key_of(counted) == known and counted.statements == 4
    assert judged == [] and triaged == []
    assert sorted(set(fake.asked)) == [("aot_eager", None, False), ("aot_eager", None, True), ("eager", None, True)]


def test_a_finding_kept_as_another_example_is_shrunk_a_little_then_recognised(fake, monkeypatch, tmp_path):
    """A bug with fewer than its examples (``Examples.held`` 0) keeps a finding of it as
    another example, as cheaply classified: not recognised on the program as found
    (the example saved would be the whole program), but shrunk a little first, and
    recognised on what that reached; never shrunk in full."""
    finding = _error_finding()
    known = _error_key(finding, "aot_eager")
    fake.table = {("eager", None, True): GONE}
    triaged, judged = [], []
    monkeypatch.setattr(entries, "triaged", lambda entry, *a, **k: triaged.append(entry) or entry)

    def judge(candidate):
        judged.append(candidate)
        return contract.Verdict(contract.OK, list(finding.divergences))  # every candidate shows it

    config = Config(seed=0, device="cpu", corpus_dir=str(tmp_path))
    kept = entries.counted_only(finding, 0, config, {known: 0}, judge=judge)
    assert kept is not None and key_of(kept) == known and triaged == []
    assert 0 < len(judged) <= TRIAGE.repeat_shrink_calls and kept.statements < 4
    # with its examples, or known upstream, the same finding is told on its program as found
    judged.clear()
    assert entries.counted_only(finding, 0, config, {known: 2}, judge=judge).statements == 4 and judged == []
    upstream = dataclasses.replace(config, known=(known,))
    assert entries.counted_only(finding, 0, upstream, {known: 0}, judge=judge).statements == 4 and judged == []


def test_a_bug_is_held_with_the_size_a_finding_must_be_under_to_be_shrunk_in_full(tmp_path):
    base = load(CORPUS / "wrong-output-344cc751f3d6.json")
    examples = Examples(tmp_path, cap=2)
    assert examples.held() == {}
    examples.save(base)
    assert examples.held() == {key_of(base): 0}  # wants another example: any finding of it
    examples.save(dataclasses.replace(base, id="wrong-output-another"))
    assert examples.held() == {key_of(base): base.statements}


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
    assert entries.counted_only(finding, 0, config, {known: 2, key(known.text.split(":")[0]): 2}) is None
    assert len(triaged) == 1


def test_a_key_no_answer_could_make_is_passed_over_without_a_compile(fake):
    """A wrong value at ``aot_eager`` is keyed by what its 1-minimal program does; a
    finding whose program does otherwise cannot be it, whatever the probes say."""
    body = [("p_sin", ["x0"], f"v{i}", {"site": i}) for i in range(4)]
    big = case(prog({"x0": ("s0",)}, body, outputs=["v3"]))
    div = contract.Divergence(contract.WRONG_OUTPUT, 0, "output 0", "values differ", ("values",))
    finding = Finding(contract.WRONG_OUTPUT, big, [div], "cpu", "inductor")
    held = key("corrupted-value|values @ aot_eager {does head, mul_; strided}")
    assert recognition.checkable(finding.kind, klass("wrong-output|values"), "inductor", [held])
    fake.table = {("eager", None, True): GONE}
    assert _recognise(finding, [held]) is None and fake.asked == []
    config = Config(seed=0, device="cpu", corpus_dir="unused")
    own = key_of(dataclasses.replace(entries.found_entry(finding, 0, config),
                                     culprit=Culprit("aot_eager", kind=finding.kind, dynamic_only=False)))
    assert _recognise(finding, [own]) is not None and fake.asked


def test_a_switch_key_whose_buffers_are_not_the_findings_is_passed_over_without_a_compile(fake):
    """A wrong value a moving switch hides is keyed by what its program tells of its
    buffers (``bugs.buffers_told``), read off the program: a finding whose program tells
    otherwise cannot be it, and no probe is made for it."""
    body = [("p_sin", ["x0"], f"v{i}", {"site": i}) for i in range(4)]
    plain = case(prog({"x0": ("s0",)}, body, outputs=["v3"]))
    div = contract.Divergence(contract.WRONG_OUTPUT, 0, "output 0", "values differ", ("values",))
    finding = Finding(contract.WRONG_OUTPUT, plain, [div], "cpu", "inductor")
    region = key(f"corrupted-value|values @ inductor:{PEAK} {{buffers grad, in a region}}")
    assert recognition.checkable(finding.kind, klass("wrong-output|values"), "inductor", [region])
    fake.table = _answers(**{PEAK: GONE})
    assert _recognise(finding, [region]) is None and fake.asked == []
    assert _recognise(finding, [key(f"corrupted-value|values @ inductor:{PEAK} {{buffers none}}")]) is not None
    assert fake.asked


def _on_bindings(kind, bindings, total=4):
    body = [("p_sin", ["x0"], f"v{i}", {"site": i}) for i in range(4)]
    big = case(prog({"x0": ("s0",)}, body, outputs=["v3"]), [{"s0": n} for n in (4, 7, 2, 5)[:total]])
    divs = [contract.Divergence(kind, b, "sequence", "reordered", ("reordered",)) for b in bindings]
    return Finding(kind, big, divs, "cpu", "inductor")


@pytest.mark.parametrize("bindings, kept", [([0], 1), ([1], 2), ([0, 2], 3), ([3], 4)])
def test_a_repeat_is_judged_on_its_bindings_up_to_the_last_that_showed_its_kind(bindings, kept):
    """What a binding shows depends only on the bindings before it: the case is cut
    after the last that showed the finding's kind, never before one that showed it."""
    cut = entries.own_bindings(_on_bindings(contract.EFFECT_LOG, bindings))
    assert len(cut.case.bindings) == kept and cut.case.bindings == tuple({"s0": n} for n in (4, 7, 2, 5)[:kept])
    assert cut.divergences == _on_bindings(contract.EFFECT_LOG, bindings).divergences


@pytest.mark.parametrize("bindings, kept", [([0, 1, 2, 3], 1), ([2, 3], 3), ([3], 4)])
def test_an_error_is_judged_up_to_the_first_binding_that_raised_it(bindings, kept):
    """An error is classed by its first divergence, and a compile error raises again on
    every later binding: the case is cut after the first, its class unchanged."""
    whole = _on_bindings(contract.COMPILE_ERROR, bindings)
    cut = entries.own_bindings(whole)
    assert len(cut.case.bindings) == kept and [d.binding for d in cut.divergences] == [bindings[0]]
    assert contract.bug_class(cut.kind, cut.divergences) == contract.bug_class(whole.kind, whole.divergences)


def test_a_death_is_not_cut():
    """A crash or timeout is not a binding's outcome in one compiled function."""
    crash = _on_bindings(contract.CRASH, [0])
    assert entries.own_bindings(crash) is crash


def test_recognition_probes_the_cut_case(fake, monkeypatch, tmp_path):
    finding = _on_bindings(contract.EFFECT_LOG, [1])
    known = _key(finding, **{PEAK: GONE})
    fake.table = _answers(**{PEAK: GONE})
    probed = []
    real_init = FakeProbe.__init__
    monkeypatch.setattr(FakeProbe, "__init__",
                        lambda self, case, *a: probed.append(case) or real_init(self, case, *a))
    config = Config(seed=0, device="cpu", corpus_dir=str(tmp_path), shrink=False)
    counted = entries.counted_only(finding, 0, config, {known: 2})
    assert counted is not None and key_of(counted) == known
    assert probed and all(len(c.bindings) == 2 for c in probed) and len(counted.case.bindings) == 2


INDUCTOR_ERROR = "compile-error|raised RuntimeError in torch.fx:FakeTensorProp.run_node"


@pytest.fixture
def bisector(monkeypatch):
    """The bisector's answer, from a list: (subsystem, application), asked at most once."""
    from fuzzer.triage import bisect

    answer, asked = [bisect.Bisection(None, None)], []

    def fake_bisect(probe, stage, applications=True):
        asked.append((stage, applications))
        return answer[0]
    monkeypatch.setattr(bisect, "available", lambda: True)
    monkeypatch.setattr(bisect, "bisect", fake_bisect)
    return answer, asked


def _inductor_error_key(finding, subsystem=None, application=None, static=STAYS, **by_switch):
    found = {s.name: by_switch.get(s.name, STAYS).value for s in switches.available()} if not subsystem else {}
    culprit = Culprit("inductor", subsystem=subsystem, pass_name=application, switches=found, kind=finding.kind,
                      dynamic_only={GONE: True, STAYS: False}.get(static))
    config = Config(seed=0, device="cpu", corpus_dir="unused")
    return key_of(dataclasses.replace(entries.found_entry(finding, 0, config), culprit=culprit))


def _inductor_table(static=STAYS, **by_switch):
    table = _answers(**by_switch)
    table[("inductor", None, False)] = static
    return table


def test_an_error_on_inductor_is_recognised_by_the_bisectors_answer(fake, bisector):
    """Its key is the bisector's pass (or subsystem): the stage walk, static shapes and
    the bisection without a lowering's application, not Inductor's own compile again."""
    from fuzzer.triage.bisect import Bisection

    answer, asked = bisector
    finding = _error_finding(INDUCTOR_ERROR)
    pass_key = _inductor_error_key(finding, "post_grad_passes", "decompose_auto_functionalized")
    lowering_key = _inductor_error_key(finding, "lowerings")
    assert pass_key.text.endswith("@ inductor:decompose_auto_functionalized")
    fake.table = _inductor_table()
    answer[0] = Bisection("post_grad_passes", "decompose_auto_functionalized")
    assert _recognise(finding, [lowering_key, pass_key]).pass_name == "decompose_auto_functionalized"
    assert asked == [("inductor", False)] and ("inductor", None, True) not in fake.asked
    answer[0] = Bisection("post_grad_passes", "reinplace_inplaceable_ops")
    assert _recognise(finding, [lowering_key, pass_key]) is None
    answer[0] = Bisection("lowerings", None)
    assert _recognise(finding, [pass_key, lowering_key]).subsystem == "lowerings"


def test_an_error_the_bisector_names_nothing_for_is_recognised_without_a_switch(fake, bisector):
    """``@ inductor`` says that no subsystem removes the error; a switch that avoids it
    only reshapes the raising code's input and is no part of its key, so none is
    probed.  A key whose static shapes disagree is not bisected for."""
    answer, asked = bisector
    finding = _error_finding(INDUCTOR_ERROR)
    bare = _inductor_error_key(finding)
    assert bare.text.endswith("@ inductor")
    assert _inductor_error_key(finding, fusion=GONE) == bare
    fake.table = _inductor_table(fusion=GONE)
    assert _recognise(finding, [bare]) is not None
    assert not any(name for (stage, name, _) in fake.asked if stage == "inductor" and name)
    asked.clear()
    fake.table = _inductor_table(static=GONE)
    assert _recognise(finding, [bare]) is None and asked == []
    assert _recognise(finding, [_inductor_error_key(finding, static=GONE)]) is not None


def test_a_repeat_of_an_error_on_inductor_is_counted_without_its_key_only_triage(fake, bisector, monkeypatch,
                                                                                tmp_path):
    finding = _error_finding(INDUCTOR_ERROR)
    triaged = []
    monkeypatch.setattr(entries, "triaged", lambda entry, *a, **k: triaged.append(entry) or entry)
    config = Config(seed=0, device="cpu", corpus_dir=str(tmp_path), shrink=False)
    known = _inductor_error_key(finding)
    fake.table = _inductor_table()
    counted = entries.counted_only(finding, 0, config, {known: 2})
    assert counted is not None and key_of(counted) == known and triaged == []
    fake.table = _inductor_table(static=GONE)
    assert entries.counted_only(finding, 0, config, {known: 2}) is None and triaged == []


def test_a_repeat_of_an_error_on_inductor_is_shrunk_a_little_before_it_is_recognised(fake, bisector,
                                                                                    monkeypatch, tmp_path):
    """A probe that shows an error runs the compile up to where it is raised, late in
    Inductor for some: on a whole program that cost more than the short shrink, so an
    error's key is checked on what the short shrink reached (a stage before Inductor's,
    which compiles nothing of Inductor, on the program as found)."""
    finding = _error_finding(INDUCTOR_ERROR)
    shrunk = []
    monkeypatch.setattr(entries, "_shrunk_a_little", lambda f, entry, *a, **k: shrunk.append(entry) or entry)
    config = Config(seed=0, device="cpu", corpus_dir=str(tmp_path))
    known = _inductor_error_key(finding)
    fake.table = _inductor_table()
    counted = entries.counted_only(finding, 0, config, {known: 2})
    assert counted is not None and key_of(counted) == known and len(shrunk) == 1


def test_a_recognised_repeat_keeps_the_other_bug_an_earlier_stage_showed(fake, bisector, tmp_path):
    """A known Inductor error can mask a new wrong value at ``aot_eager``: the stages
    the check walked keep what they showed, so the masked bug is still looked for."""
    from fuzzer.campaign import masked

    finding = _error_finding(INDUCTOR_ERROR)
    known = _inductor_error_key(finding)
    fake.table = _inductor_table()
    fake.table[("aot_eager", None, True)] = CHANGED
    fake.shows = {("aot_eager", None, True): (contract.WRONG_OUTPUT,)}
    config = Config(seed=0, device="cpu", corpus_dir=str(tmp_path), shrink=False)
    counted = entries.counted_only(finding, 0, config, {known: 2})
    assert counted is not None and key_of(counted) == known
    assert counted.culprit.otherwise == {"aot_eager": (contract.WRONG_OUTPUT,)}
    assert masked.masked_stage(counted) == "aot_eager"


class _RuleProbe(FakeProbe):
    """Answers by a rule of the program compiled (the finding's, or a cut of it): the bug
    shows on ``aot_eager`` (and on it with static shapes) where ``needs`` holds, never on ``eager``."""

    needs = staticmethod(lambda c: True)

    def outcome(self, backend, config=None, dynamic=True, within=None, case=None):
        self.calls += 1
        FakeProbe.asked.append((backend, case is not None, dynamic))
        return STAYS if backend != "eager" and _RuleProbe.needs(case or self.case) else GONE


def _tagged_finding():
    """``v0 = p_sin(x0); m_scale(x0); x0.mul_(0.5); return (v0,)``: a wrong value at
    ``aot_eager`` (a stand-in's), whatever ``p_sin`` does; no cause of
    ``fuzzer.triage.causes`` applies to it."""
    p = prog({"x0": ("s0",)}, [("p_sin", ["x0"], "v0", {"site": 0}), ("m_scale", ["x0"], None, {"site": 1}),
                               ("mul_", ["x0"], None, {"c": 0.5})], outputs=["v0"])
    div = contract.Divergence(contract.WRONG_MUTATION, 0, "input x0", "values", ("values",))
    return Finding(contract.WRONG_MUTATION, case(p), [div], "cpu", "aot_eager")


def _stage_key(finding, forms):
    """The key of a wrong value at ``aot_eager`` whose 1-minimal program has ``forms``."""
    config = Config(seed=0, device="cpu", corpus_dir="unused")
    entry = entries.found_entry(finding, 0, config)
    body = tuple(s for s in entry.case.program.body if s.form in forms)
    minimal = dataclasses.replace(entry.case, program=dataclasses.replace(entry.case.program, body=body))
    return key_of(dataclasses.replace(entry, case=minimal, culprit=Culprit("aot_eager", kind=finding.kind,
                                                                             dynamic_only=False)))


def _recognise_cut(finding, keys):
    from fuzzer.reduce.cuts import cuts

    config = Config(seed=0, device="cpu", corpus_dir="unused")
    entry = entries.found_entry(finding, 0, config)
    return recognition.recognise(entry, keys,
                                 lambda c, case=entry.case: key_of(dataclasses.replace(entry, culprit=c, case=case)),
                                 backend="aot_eager", cuts=cuts)


def test_a_key_of_forms_is_not_read_off_a_program_that_does_more_than_its_bug_needs(monkeypatch):
    """The issue's shape: a held ``{does m_scale, mul_, p_sin}`` is not this finding's bug when
    the program without ``p_sin`` still shows it (its own key is ``{does m_scale, mul_}``)."""
    monkeypatch.setattr(recognition, "Probe", _RuleProbe)
    FakeProbe.asked = []
    finding = _tagged_finding()
    _RuleProbe.needs = staticmethod(lambda c: {"m_scale", "mul_"} <= {s.form for s in c.program.body})
    held = _stage_key(finding, {"p_sin", "m_scale", "mul_"})
    assert held.text.endswith("{does m_scale, mul_, p_sin}")
    assert _recognise_cut(finding, [held]) is None
    assert any(cut for _, cut, _ in FakeProbe.asked)  # a cut was compiled
    # the bug held with p_sin's part in it is this one where the cut without p_sin loses it
    _RuleProbe.needs = staticmethod(lambda c: {"m_scale", "mul_", "p_sin"} <= {s.form for s in c.program.body})
    assert _recognise_cut(finding, [held]) is not None


def test_a_key_only_triage_of_a_repeat_reads_its_forms_only_off_a_program_nothing_can_be_cut_from(monkeypatch,
                                                                                                   tmp_path):
    """Where recognition cannot check every held key (here a pair's), a repeat is triaged
    for its key alone; a key that reads its program is then taken for a held one only
    where no cut of the program still shows the bug, as recognition asks."""
    finding = _tagged_finding()
    held_key = _stage_key(finding, {"p_sin", "m_scale", "mul_"})
    pair = key("corrupted-value|values @ inductor:remove_noop_ops+reinplace_inplaceable_ops")

    def stub(entry, config, seconds_left=None, errors=None, key_only=False):
        entry.culprit = Culprit("aot_eager", kind=entry.kind, dynamic_only=False, key_only=key_only)
        return entry

    monkeypatch.setattr(entries, "triaged", stub)
    monkeypatch.setattr(recognition, "Probe", _RuleProbe)
    monkeypatch.setattr(entries, "Probe", _RuleProbe)
    config = Config(seed=0, device="cpu", corpus_dir=str(tmp_path), shrink=False)
    _RuleProbe.needs = staticmethod(lambda c: {"m_scale", "mul_"} <= {s.form for s in c.program.body})
    assert entries.counted_only(finding, 0, config, {held_key: 3, pair: 3}) is None
    _RuleProbe.needs = staticmethod(lambda c: {"m_scale", "mul_", "p_sin"} <= {s.form for s in c.program.body})
    counted = entries.counted_only(finding, 0, config, {held_key: 3, pair: 3})
    assert counted is not None and key_of(counted) == held_key
