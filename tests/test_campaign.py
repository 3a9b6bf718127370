"""A campaign counts what it could not test: untested programs are never clean."""

import json

import backends
import pytest
from click.testing import CliRunner

from fuzzer.campaign.config import Budget, Config
from fuzzer.campaign.messages import Report
from fuzzer.campaign.pool import _gap
from fuzzer.campaign.session import Finished, Session, Timing, run_campaign
from fuzzer.campaign.state import CampaignFolder
from fuzzer.cli import main
from fuzzer.judge.observe import GRAPH_BREAK, REFUSED, Gap


@pytest.mark.compile
def test_a_campaign_under_graph_breaks_counts_its_programs_untested(tmp_path):
    folder = CampaignFolder(tmp_path / "state")
    config = Config(seed=0, device="cpu", corpus_dir=str(tmp_path / "corpus"), backend=backends.FAITHFUL,
                    fault="test-graph-break")
    lines = []
    stats = run_campaign(Session(config, Budget(programs=3), log=lines.append, folder=folder))
    assert stats.statuses["clean"] == 0 and not stats.findings   # missed-dce is not judged
    assert stats.statuses["untested"] == 3 and stats.untested == {"graph-break": 3}
    assert stats.mostly_untested
    assert "untested   3 (not wholly compiled, never counted clean: graph-break 3)" in stats.summary()
    state = CliRunner().invoke(main, ["stats", str(folder.path), "--json"])
    assert json.loads(state.output)["untested"] == {"graph-break": 3}
    shown = CliRunner().invoke(main, ["stats", str(folder.path)])
    assert "untested   3 (graph-break 3)" in shown.output
    # each program's line says why it is untested, in the words Dynamo gave
    logged = [line["untested"] for line in folder.program_lines()]
    assert [gap["reason"] for gap in logged] == ["graph-break"] * 3 and all(gap["message"] for gap in logged)


REFUSED_GUARDS = Gap(REFUSED, "OutsideGuards: AssertionError: Guard failed: args_0.size()[0] >= 4", "OutsideGuards")
REFUSED_DATA = Gap(REFUSED, "GuardOnDataDependentSymNode: Could not guard on data-dependent expression Eq(u0, 1)",
                   "GuardOnDataDependentSymNode")


def test_why_each_program_is_untested_is_logged_and_counted_by_its_cause(tmp_path):
    """The first gap of an untested program (``observe.Gap``) lands in its line of
    ``programs.jsonl`` whole, and the summary, the state and ``dcefuzz stats`` count
    the programs per reason and, within it, per cause; a clean program has none."""
    folder = CampaignFolder(tmp_path / "state")
    session = Session(Config(seed=4, device="cpu", corpus_dir=str(tmp_path / "corpus")), Budget(programs=9),
                      folder=folder)
    for index, gap in enumerate([REFUSED_GUARDS, REFUSED_GUARDS, REFUSED_DATA, Gap(GRAPH_BREAK, "a break"), None]):
        session.finished(Finished(index, "clean" if gap is None else "untested", untested=gap))
    session.checkpoint()
    lines = folder.program_lines()
    assert [line.get("untested") for line in lines] == [g.to_json() for g in (REFUSED_GUARDS, REFUSED_GUARDS,
                                                                            REFUSED_DATA)] + [
        {"reason": GRAPH_BREAK, "cause": "", "message": "a break"}, None]
    said = "graph-break 1, refused 3 [GuardOnDataDependentSymNode 1, OutsideGuards 2]"
    assert f"untested   4 (not wholly compiled, never counted clean: {said})" in session.stats.summary()
    state = json.loads(CliRunner().invoke(main, ["stats", str(folder.path), "--json"]).output)
    assert state["untested"] == {"refused": 3, "graph-break": 1}
    assert state["untested_causes"] == {"graph-break": {"": 1},
                                        "refused": {"GuardOnDataDependentSymNode": 1, "OutsideGuards": 2}}
    assert f"untested   4 ({said})" in CliRunner().invoke(main, ["stats", str(folder.path)]).output
    assert CampaignFolder(folder.path).load().causes == session.stats.to_state().causes


def test_what_a_program_cost_beyond_its_trial_is_logged_from_the_workers_clock(tmp_path):
    """``Timing``: a worker's report gives its trial's seconds and the whole program's;
    the program's line in ``programs.jsonl`` keeps both parts, the trial and what came
    after it, so a repeat's cost is read per program; a program with none (cut short)
    has neither."""
    report = Report("finding", 7.5, trial_seconds=2.0)
    assert Timing.of(report.trial_seconds, report.seconds) == Timing(2.0, 5.5)
    assert Timing.of(Report("clean", 1.0).trial_seconds, 1.0) is None
    folder = CampaignFolder(tmp_path / "state")
    session = Session(Config(seed=4, device="cpu", corpus_dir=str(tmp_path / "corpus")), Budget(programs=2),
                      folder=folder)
    session.finished(Finished(0, "clean", timing=Timing(2.0, 5.5)))
    session.finished(Finished(1, "clean"))
    session.checkpoint()
    lines = folder.program_lines()
    assert [(ln.get("trial"), ln.get("after_trial")) for ln in lines] == [(2.0, 5.5), (None, None)]


def test_a_workers_report_carries_its_programs_gap_to_the_pool():
    """What the pool takes from a worker's report (``Report.untested``, a ``Gap`` as
    JSON) is the gap the trial ended on, cause and message included."""
    report = Report("untested", 1.0, untested=REFUSED_GUARDS.to_json())
    assert _gap(report) == Gap(REFUSED_GUARDS.reason, REFUSED_GUARDS.message, REFUSED_GUARDS.cause)
    assert _gap(Report("clean", 1.0)) is None


@pytest.mark.compile
def test_the_same_campaign_without_the_fault_is_clean(tmp_path):
    config = Config(seed=0, device="cpu", corpus_dir=str(tmp_path / "corpus"), backend=backends.FAITHFUL)
    stats = run_campaign(Session(config, Budget(programs=3), log=lambda line: None))
    # the eager backend keeps dead pure calls: missed-dce findings, now that it is judged
    assert stats.statuses["clean"] + stats.statuses["finding"] == 3
    assert stats.statuses["untested"] == 0 and not stats.untested and not stats.mostly_untested
    assert stats.findings["missed-dce"] >= 1


def test_dcefuzzs_own_error_is_counted_and_shown_never_a_finding(tmp_path):
    """The judge itself raises (a test-only fault): each program is an internal error,
    with its traceback in the campaign folder, nothing is saved, and the summary, the
    state and `dcefuzz stats` say so."""
    folder = CampaignFolder(tmp_path / "state")
    config = Config(seed=0, device="cpu", corpus_dir=str(tmp_path / "corpus"), backend=backends.FAITHFUL,
                    fault="test-internal-error")
    lines = []
    stats = run_campaign(Session(config, Budget(programs=2), log=lines.append, folder=folder))
    assert stats.programs == 2 and stats.statuses["internal-error"] == 2 and not stats.findings
    assert stats.internal == {"trial": 2} and not (tmp_path / "corpus").exists()
    assert "internal   2 (dcefuzz's own errors, never findings: trial 2" in stats.summary()
    assert any("dcefuzz's own error, not a finding" in line for line in lines)
    logged = [json.loads(line) for line in (folder.path / "internal-errors.jsonl").read_text().splitlines()]
    assert [e["program"] for e in logged] == [0, 1] and "the judge itself failed" in logged[0]["traceback"]
    state = json.loads(CliRunner().invoke(main, ["stats", str(folder.path), "--json"]).output)
    assert state["internal_errors"] == {"trial": 2} and state["statuses"] == {"internal-error": 2}
    assert "internal   2" in CliRunner().invoke(main, ["stats", str(folder.path)]).output


def test_an_in_process_campaign_stops_when_its_device_is_lost(tmp_path):
    """A sticky CUDA error (a kernel that faulted) leaves the process unable to test
    anything: the campaign stops there instead of counting every later program."""
    config = Config(seed=0, device="cpu", corpus_dir=str(tmp_path / "corpus"), backend=backends.FAITHFUL,
                    fault="test-device-lost")
    lines = []
    stats = run_campaign(Session(config, Budget(programs=3), log=lines.append))
    assert stats.programs == 1 and stats.statuses["internal-error"] == 1 and not stats.findings
    assert any("CUDA error" in line and "the device is lost" in line for line in lines)


def _tap_after_scale(c):
    """Stand-in bug (no compile): m_scale writes an input that e_tap then reads."""
    from fuzzer.judge import contract

    written = set()
    for s in c.program.body:
        if s.form == "m_scale":
            written.add(s.args[0])
        if s.form == "e_tap" and s.args[0] in written:
            return contract.Verdict(contract.OK, [contract.Divergence(
                contract.EFFECT_LOG, 0, "sequence", "reordered (eager [], compiled [])", ("reordered",))])
    return contract.Verdict(contract.OK, [])


def test_a_repeat_is_shrunk_a_little_then_triaged_for_its_key(monkeypatch, tmp_path):
    """A finding of a bug with its examples gets at most ``repeat_shrink_calls``
    candidates before its key-only triage, which then sees the smaller program;
    without shrinking (``--no-shrink``) it is triaged as found."""
    from helpers import case, prog

    from fuzzer.campaign import entries
    from fuzzer.corpus.bugs import key_of
    from fuzzer.judge import contract
    from fuzzer.judge.trial import Finding
    from fuzzer.limits import TRIAGE
    from fuzzer.triage.culprit import Culprit

    seen = []

    def stub(entry, config, seconds_left=None, errors=None, key_only=False):
        seen.append((entry.statements, key_only))
        entry.culprit = Culprit(stage="inductor", kind=contract.EFFECT_LOG, key_only=key_only)
        return entry

    monkeypatch.setattr(entries, "triaged", stub)
    # what the stub's key reads off the program is not checked against cuts here (they compile)
    monkeypatch.setattr(entries, "minimal", lambda *args: True)
    body = [("p_sin", ["x0"], f"v{i}", {"site": i}) for i in range(10)]
    body[4:4] = [("m_scale", ["x0"], None, {"site": 10}), ("e_tap", ["x0"], "t", {"site": 11})]
    big = case(prog({"x0": ("s0",)}, body, outputs=["v9"]))
    finding = Finding(contract.EFFECT_LOG, big, _tap_after_scale(big).divergences, "cpu", "inductor")
    config = Config(seed=0, device="cpu", corpus_dir=str(tmp_path))
    key = key_of(stub(entries.found_entry(finding, 0, config), config))
    seen.clear()
    calls = []

    def judge(c):
        calls.append(c)
        return _tap_after_scale(c)

    counted = entries.counted_only(finding, 0, config, {key: 2}, judge=judge)
    assert counted is not None and counted.culprit.key_only
    assert 0 < len(calls) <= TRIAGE.repeat_shrink_calls
    assert seen == [(counted.statements, True)] and counted.statements < 12
    assert _tap_after_scale(counted.case).divergences          # still the bug
    # the bug's largest example is bigger than what the short shrink reached: recognised
    # all the same, to take that example's place as it is (never shrunk in full)
    replacing = entries.counted_only(finding, 0, config, {key: 20}, judge=judge)
    assert replacing is not None and replacing.statements < 12 and key_of(replacing) == key
    seen.clear()
    calls.clear()
    unshrunk = Config(seed=0, device="cpu", corpus_dir=str(tmp_path), shrink=False)
    assert entries.counted_only(finding, 0, unshrunk, {key: 2}, judge=judge).statements == 12
    assert calls == [] and seen == [(12, True)]


def test_a_bug_a_found_one_masks_is_found_on_its_stage_as_a_finding_of_its_own(monkeypatch, tmp_path):
    """Two bugs in one program: an Inductor compile error (say, a known one, only
    counted) ends the compiled run, and the wrong value ``aot_eager`` shows in the same
    program is never judged; triage's stage walk saw it, and it is yielded."""
    from helpers import case, prog

    from fuzzer.campaign import entries, masked
    from fuzzer.corpus.entry import Entry, Origin
    from fuzzer.judge import contract
    from fuzzer.judge.trial import Finding, TrialResult
    from fuzzer.triage.culprit import Culprit

    c = case(prog({"x0": ("s0",)}, [("p_sin", ["x0"], "v0", {"site": 0})], outputs=["v0"]))
    wrong = contract.Divergence(contract.WRONG_OUTPUT, 0, "output 0", "differs", (contract.VALUES,))
    error = contract.Divergence(contract.COMPILE_ERROR, 0, "compile", "AssertionError: x",
                                ("raised AssertionError in torch._inductor:GraphLowering.run_node",))
    tried = []

    def trial(case_, device, backend="inductor", confirm=True):
        tried.append(backend)
        return TrialResult("finding", contract.Verdict(contract.OK, [wrong]),
                           [Finding(contract.WRONG_OUTPUT, case_, [wrong], device, backend)])

    monkeypatch.setattr(masked, "run_trial", trial)
    config = Config(seed=0, device="cpu", corpus_dir=str(tmp_path), shrink=False)
    found = Entry.build(contract.COMPILE_ERROR, c, [error], Origin(seed=0, device="cpu", backend="inductor"))
    found.culprit = Culprit("inductor", kind=contract.COMPILE_ERROR,
                            otherwise={"eager": ("invalid",), "aot_eager": (contract.WRONG_OUTPUT,),
                                       "aot_eager_decomp_partition": (contract.WRONG_OUTPUT,)})
    (behind,) = masked.masked(found, "inductor")
    assert tried == ["aot_eager"] and behind.kind == contract.WRONG_OUTPUT and behind.backend == "aot_eager"
    # what the walk saw only as a status, or of the entry's own family, is nothing more
    clean = Entry.build(contract.COMPILE_ERROR, c, [error], Origin(seed=0, device="cpu", backend="inductor"))
    clean.culprit = Culprit("inductor", kind=contract.COMPILE_ERROR, otherwise={"eager": ("invalid",)})
    assert masked.masked(clean, "inductor") == []
    same = Entry.build(contract.WRONG_OUTPUT, c, [wrong], Origin(seed=0, device="cpu", backend="inductor"))
    same.culprit = Culprit("inductor", kind=contract.WRONG_OUTPUT, otherwise={"aot_eager": (contract.WRONG_MUTATION,)})
    assert masked.masked(same, "inductor") == []
    # the masked one, found on aot_eager, yields nothing further; a campaign saves it triaged
    tried.clear()

    def triage(entry, config, seconds_left=None, errors=None, key_only=False):
        entry.culprit = Culprit(entry.backend, kind=entry.kind)
        return entry

    monkeypatch.setattr(entries, "triaged", triage)
    (made,) = entries.masked_entries([found, clean], 0, config, {})
    assert made.kind == contract.WRONG_OUTPUT and made.backend == "aot_eager" and made.culprit.stage == "aot_eager"
    assert entries.masked_entries([made], 0, config, {}) == [] and tried == ["aot_eager"]
    untriaged = Config(seed=0, device="cpu", corpus_dir=str(tmp_path), shrink=False, triage=False)
    assert entries.masked_entries([found], 0, untriaged, {}) == []


def test_a_campaign_saves_the_new_bug_a_known_one_masks(monkeypatch, tmp_path):
    """In-process: the program's Inductor error is a known bug, only counted; the
    aot_eager divergence its triage saw behind it is saved as a new bug."""
    from helpers import case, prog

    from fuzzer.campaign import entries, masked, session
    from fuzzer.corpus.entry import Entry, Origin
    from fuzzer.corpus.store import load
    from fuzzer.judge import contract
    from fuzzer.judge.trial import Finding, TrialResult
    from fuzzer.triage.culprit import Culprit

    c = case(prog({"x0": ("s0",)}, [("p_sin", ["x0"], "v0", {"site": 0})], outputs=["v0"]))
    wrong = contract.Divergence(contract.WRONG_OUTPUT, 0, "output 0", "differs", (contract.VALUES,))
    error = contract.Divergence(contract.COMPILE_ERROR, 0, "compile", "AssertionError: x",
                                ("raised AssertionError in torch._inductor:GraphLowering.run_node",))

    def program_trial(pseed, config, case_=None):
        return TrialResult("finding", contract.Verdict(contract.OK, [error]),
                           [Finding(contract.COMPILE_ERROR, c, [error], "cpu", "inductor")])

    def known(finding, seed, config, full, seconds_left=None, errors=None, judge=None):
        if finding.kind != contract.COMPILE_ERROR:
            return None
        entry = Entry.build(finding.kind, finding.case, finding.divergences,
                            Origin(seed=seed, device="cpu", backend=finding.backend))
        entry.culprit = Culprit("inductor", kind=finding.kind, key_only=True,
                                otherwise={"aot_eager": (contract.WRONG_OUTPUT,)})
        return entry

    def stage_trial(case_, device, backend="inductor", confirm=True):
        return TrialResult("finding", contract.Verdict(contract.OK, [wrong]),
                           [Finding(contract.WRONG_OUTPUT, case_, [wrong], device, backend)])

    def triage(entry, config, seconds_left=None, errors=None, key_only=False):
        entry.culprit = Culprit(entry.backend, kind=entry.kind)
        return entry

    monkeypatch.setattr(session, "trial_of", program_trial)
    monkeypatch.setattr(session, "counted_only", known)
    monkeypatch.setattr(entries, "counted_only", known)
    monkeypatch.setattr(masked, "run_trial", stage_trial)
    monkeypatch.setattr(entries, "triaged", triage)
    config = Config(seed=0, device="cpu", corpus_dir=str(tmp_path / "corpus"), shrink=False)
    stats = run_campaign(Session(config, Budget(programs=1), log=lambda line: None))
    saved = [load(p) for p in (tmp_path / "corpus").glob("*.json")]
    assert sorted((e.kind, e.backend) for e in saved) == [(contract.COMPILE_ERROR, "inductor"),
                                                          (contract.WRONG_OUTPUT, "aot_eager")]
    assert stats.findings[contract.WRONG_OUTPUT] == 1 and len(stats.new_bugs) == 2


def test_shards_merged_keep_their_untested_causes(tmp_path):
    from fuzzer.campaign.merge import merge
    from fuzzer.campaign.state import Shard

    for name, shard, gap in (("a", Shard(1, 2), REFUSED_GUARDS), ("b", Shard(2, 2), REFUSED_DATA)):
        session = Session(Config(seed=4, device="cpu", corpus_dir=str(tmp_path / name / "corpus")),
                          Budget(programs=1), shard=shard, folder=CampaignFolder(tmp_path / name))
        session.finished(Finished(shard.index - 1, "untested", untested=gap))
        session.checkpoint()
    merge(tmp_path / "out", [tmp_path / "a", tmp_path / "b"])
    assert CampaignFolder(tmp_path / "out").load().causes == {(REFUSED, "OutsideGuards"): 1,
                                                             (REFUSED, "GuardOnDataDependentSymNode"): 1}


def test_a_withdrawn_casualty_stays_visible_with_why_and_a_confirmed_one_stays_a_finding(tmp_path):
    """A casualty whose own case did not die so again in a fresh process leaves the
    corpus, and is kept with why in the log, the summary, the state (across a resume),
    ``dcefuzz stats`` and the campaign's page; one that died so again stays a finding."""
    from fuzzer.campaign.casualties import CasualtyShrinker, Shrunk
    from fuzzer.corpus import store
    from fuzzer.corpus.entry import Entry, Origin
    from fuzzer.judge.contract import CRASH, Divergence
    from fuzzer.limits import PoolLimits
    from fuzzer.program.generate import generate, program_seed
    from fuzzer.reduce.casualty import Confirmation

    config = Config(seed=0, device="cpu", corpus_dir=str(tmp_path / "corpus"))
    folder = CampaignFolder(tmp_path / "state")
    lines = []
    session = Session(config, Budget(programs=1), folder=folder, log=lines.append)
    entries = [Entry.build(CRASH, generate(program_seed(0, i)), [Divergence(CRASH, 0, "process", f"process died: {d}")],
                           Origin(seed=program_seed(0, i), device="cpu", backend="inductor"))
               for i, d in ((0, "heap corruption"), (1, "SIGSEGV"))]
    suspect, kept = entries
    shrinker = CasualtyShrinker(config, PoolLimits(poll_seconds=0.001), log=lines.append)
    try:
        gone = Confirmation(("ran to completion (ok)", "crash: process died: SIGBUS"), False)
        for entry, confirmation in ((suspect, gone), (kept, Confirmation(("crash: process died: SIGSEGV",), True))):
            path, _ = store.save(entry, config.corpus_dir)
            session.stats.findings[CRASH] += 1
            shrinker.waiting += 1
            shrinker.done.put(Shrunk(entry, str(path), None, confirmation.why(), confirmation=confirmation))
        shrinker.adopt(session)
    finally:
        shrinker.finish(until=None)
    session.checkpoint()
    why = "it did not die so again in 2 fresh processes (ran to completion (ok), crash: process died: SIGBUS)"
    assert session.stats.findings[CRASH] == 1 and [e.id for e in store.load_all([config.corpus_dir])[0]] == [kept.id]
    assert any(f"{suspect.id} withdrawn: {why}" in line for line in lines)
    summary = session.stats.summary()
    assert "withdrawn  1 (" in summary and suspect.id in summary and why in summary and kept.id not in summary
    state = json.loads((folder.path / "state.json").read_text())
    assert [(w["id"], w["bug_class"], w["why"]) for w in state["withdrawn"]] == \
        [(suspect.id, "crash|process died: heap corruption", why)]
    resumed = Session(config, Budget(programs=1), folder=folder, resume=True, log=lines.append)
    assert [w.id for w in resumed.stats.to_state().withdrawn] == [suspect.id]
    shown = CliRunner().invoke(main, ["stats", str(folder.path)]).output
    assert "withdrawn  1 (" in shown and why in shown and kept.id not in shown
    pytest.importorskip("jinja2")
    pytest.importorskip("markdown_it")
    r = CliRunner().invoke(main, ["site", str(folder.path), "--out", str(tmp_path / "site")])
    assert r.exit_code == 0, r.output
    page = (tmp_path / "site" / "campaign.html").read_text()
    assert suspect.id in page and "ran to completion (ok), crash: process died: SIGBUS" in page and kept.id not in page


@pytest.mark.parametrize("triage, dies, smaller", [(True, True, False), (True, True, True), (False, True, False),
                                                    (True, False, False)])
def test_the_casualty_shrinker_finds_the_stage_of_a_casualty_that_stands(tmp_path, monkeypatch, triage, dies,
                                                                          smaller):
    """Once a casualty stands (a smaller case died so, or its own did again), the
    shrinker's thread walks its stages within the triage budget and the campaign saves
    the culprit in what stands for it; not where the campaign does not triage, nor for
    a casualty withdrawn."""
    import dataclasses
    import time

    import fuzzer.campaign.casualties as casualties
    from fuzzer.corpus import store
    from fuzzer.corpus.entry import Entry, Origin
    from fuzzer.judge.contract import CRASH, Divergence
    from fuzzer.limits import OracleBudget, PoolLimits
    from fuzzer.program.generate import generate, program_seed
    from fuzzer.reduce.casualty import Confirmation, Reduced
    from fuzzer.triage.culprit import Culprit

    died = [Divergence(CRASH, 0, "process", "process died: heap corruption")]
    entry = Entry.build(CRASH, generate(program_seed(0, 0)), died, Origin(seed=0, device="cpu", backend="inductor"))
    program = dataclasses.replace(entry.case.program, body=entry.case.program.body[:1])
    reduced = Reduced(dataclasses.replace(entry.case, program=program), died, {"statements": 1})
    monkeypatch.setattr(casualties, "shrink_casualty", lambda *args, **kwargs: reduced if smaller else None)
    monkeypatch.setattr(casualties, "dies_again", lambda *args: Confirmation(("crash: process died: SIGSEGV",), dies))
    walked = []

    def localise(e, device, budget, limits, stop):
        walked.append((e.id, budget))
        return Culprit(stage="inductor", kind=e.kind, oracle_calls=4, seconds=20.0)

    monkeypatch.setattr(casualties.triage, "localise", localise)
    config = Config(seed=0, device="cpu", corpus_dir=str(tmp_path / "corpus"), triage=triage,
                    triage_budget=OracleBudget(oracle_calls=80, seconds=120))
    lines = []
    session = Session(config, Budget(programs=1), folder=CampaignFolder(tmp_path / "state"), log=lines.append)
    path, _ = store.save(entry, config.corpus_dir)
    shrinker = casualties.CasualtyShrinker(config, PoolLimits(poll_seconds=0.001), lines.append,
                                           seconds_left=lambda: 30.0)
    assert shrinker.submit(entry, str(path))
    deadline = time.monotonic() + 30
    while shrinker.done.empty() and time.monotonic() < deadline:
        time.sleep(0.01)
    shrinker.finish(until=None)
    moved = shrinker.adopt(session)
    standing = store.load(moved[0][1] if moved else path) if dies else None
    if triage and dies:
        assert standing.culprit.stage == "inductor" and walked[0][1].seconds == 30.0  # cut to the time left
        assert walked[0][0] == standing.id and (standing.statements == 1) is smaller
    else:
        assert not walked and (standing is None or standing.culprit is None)


def test_a_stage_walk_stopped_at_the_end_of_a_campaign_keeps_what_the_shrink_found(tmp_path, monkeypatch):
    import dataclasses

    import fuzzer.campaign.casualties as casualties
    from fuzzer.corpus.entry import Entry, Origin
    from fuzzer.isolation.process import Aborted
    from fuzzer.judge.contract import CRASH, Divergence
    from fuzzer.limits import PoolLimits
    from fuzzer.program.generate import generate, program_seed
    from fuzzer.reduce.casualty import Reduced

    died = [Divergence(CRASH, 0, "process", "process died: SIGSEGV")]
    entry = Entry.build(CRASH, generate(program_seed(0, 0)), died, Origin(seed=0, device="cpu", backend="inductor"))
    program = dataclasses.replace(entry.case.program, body=entry.case.program.body[:1])
    reduced = Reduced(dataclasses.replace(entry.case, program=program), died, {"statements": 1})
    monkeypatch.setattr(casualties, "shrink_casualty", lambda *args, **kwargs: reduced)

    def stopped(*args):
        raise Aborted()

    monkeypatch.setattr(casualties.triage, "localise", stopped)
    config = Config(seed=0, device="cpu", corpus_dir=str(tmp_path / "corpus"))
    shrinker = casualties.CasualtyShrinker(config, PoolLimits(poll_seconds=0.001), lambda line: None)
    try:
        done = shrinker._shrunk(entry, "path")
    finally:
        shrinker.finish(until=None)
    assert done.reduced is not None and done.reduced.statements == 1 and done.culprit is None
