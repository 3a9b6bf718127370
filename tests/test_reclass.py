"""``dcefuzz reclass``: entries saved under an old bug class are judged again and
saved under today's, with their history, their script and the upstream file's ids."""

import ast
import json

import backends
import torch
from helpers import case, prog

from fuzzer.corpus.entry import Entry, Origin
from fuzzer.corpus.store import load, save
from fuzzer.judge import contract
from fuzzer.judge.trial import judge_fresh
from fuzzer.replay.reclass import LEFT, RENAMED, UNCHANGED, legacy_class, reclass_entry, rename_upstream
from fuzzer.replay.rerun import REPRODUCES, replay_entry
from fuzzer.reduce.signature import Signature

LOG = prog({"x0": ("s0",)}, [("p_sin", ["x0"], "v0", {"site": 0}),
                              ("e_log", ["v0"], None, {"site": 1})], outputs=["v0"])


def _saved(folder, signature_class: str, hits: int = 3) -> Entry:
    entry = Entry(id="compile-error-000000000000", kind=contract.COMPILE_ERROR,
                  signature=Signature.parse(f"{signature_class} :: old"), seed=None, device="cpu",
                  backend=backends.RAISE,
                  torch_version=torch.__version__, case=case(LOG), detail=["[compile-error] old words"], hits=hits)
    save(entry, folder)
    (folder / "upstream.json").write_text(json.dumps({"bugs": [
        {"entries": [entry.id], "searched": "2026-12-01", "note": "n", "links": []}]}))
    return entry


def test_an_entry_of_the_old_class_is_renamed_under_where_its_error_was_raised(tmp_path):
    divs = judge_fresh(case(LOG), "cpu", backends.RAISE).of_kind(contract.COMPILE_ERROR)
    today, old = contract.bug_class(contract.COMPILE_ERROR, divs), legacy_class(contract.COMPILE_ERROR, divs)
    # the stand-in backend raises in the test's code, so Dynamo's call into it is the place
    assert today.text.startswith("compile-error|raised RuntimeError in torch._dynamo:") and \
        today.text.endswith(": planted backend failure")
    assert old.text == "compile-error|BackendCompilerFailed: backend='dcefuzz_test_raise' raised: RuntimeError: " \
                  "planted backend failure"
    entry = _saved(tmp_path, old)
    saved = load(tmp_path / f"{entry.id}.json")
    # the class it was saved under is not what a replay sees now
    assert replay_entry(tmp_path / f"{entry.id}.json").outcome != REPRODUCES
    result = reclass_entry(tmp_path / f"{entry.id}.json")
    assert result.outcome == RENAMED and result.new_id != entry.id
    assert not (tmp_path / f"{entry.id}.json").exists() and not (tmp_path / f"{entry.id}.py").exists()
    new = load(tmp_path / f"{result.new_id}.json")
    assert new.bug_class == today and new.hits == 3 and new.found == saved.found
    assert _spec(tmp_path / f"{result.new_id}.py")["bug_class"] == today.text  # what its script looks for
    assert replay_entry(tmp_path / f"{result.new_id}.json").outcome == REPRODUCES
    assert rename_upstream(tmp_path, {entry.id: result.new_id}) == 1
    assert json.loads((tmp_path / "upstream.json").read_text())["bugs"][0]["entries"] == [result.new_id]
    # judged again, it is what it is now; a stale script is written afresh
    script = tmp_path / f"{result.new_id}.py"
    script.write_text("# an old script\n")
    again = reclass_entry(tmp_path / f"{result.new_id}.json")
    assert again.outcome == UNCHANGED and "script rewritten" in again.detail
    assert _spec(script)["bug_class"] == today.text


def _spec(script) -> dict:
    tree = ast.parse(script.read_text())
    node = next(n for n in tree.body if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", "") == "SPEC")
    return ast.literal_eval(node.value)


def test_an_entry_that_shows_another_bug_is_left_as_it_was(tmp_path):
    entry = _saved(tmp_path, "compile-error|InductorError: AssertionError: something else")
    result = reclass_entry(tmp_path / f"{entry.id}.json")
    assert result.outcome == LEFT and "does not show its bug again" in result.detail
    assert (tmp_path / f"{entry.id}.json").exists()


def test_triage_of_an_entry_of_an_old_class_stops_at_once_and_says_to_reclass(tmp_path, monkeypatch):
    """Probes look for the entry's class; an older dcefuzz's class (an error's words, where
    today's names where torch raised it) never shows again.  Triage used to walk every
    stage, call it "not localised" and save that; it stops at the first compile that
    shows the bug under today's class, leaves the entry as it was and says to reclass."""
    from click.testing import CliRunner

    from fuzzer.cli import main
    from fuzzer.triage import probe as probe_module
    from fuzzer.triage.culprit import localise
    from fuzzer.triage.probe import OutdatedClass

    raised = contract.Divergence(contract.COMPILE_ERROR, 0, "compile", "AssertionError: 3 nodes, expected 2",
                                 ("raised AssertionError in torch._inductor:Match.replace_by_example",))
    compiles = []

    def judged(case_, device, backend, dynamic=True, target="compile"):
        compiles.append(backend)
        return contract.Verdict(contract.OK, [raised])

    monkeypatch.setattr(probe_module, "judge_fresh", judged)
    old, today = legacy_class(contract.COMPILE_ERROR, [raised]), contract.bug_class(contract.COMPILE_ERROR, [raised])
    assert old.text == "compile-error|AssertionError: # nodes, expected #" and old != today
    try:
        localise(case(LOG), contract.COMPILE_ERROR, old, "cpu")
        raise AssertionError("an old class was probed as if it could show")
    except OutdatedClass as exc:
        assert exc.saved == old and exc.today == today and "dcefuzz reclass" in str(exc)
    assert compiles == ["eager"]  # the first compile says it
    # today's class is localised as ever (the stand-in judge shows it on every stage)
    compiles.clear()
    assert localise(case(LOG), contract.COMPILE_ERROR, today, "cpu").stage == "eager"
    # the command: the entry is left as it was, the line says why and what to run
    entry = Entry(id="compile-error-000000000001", kind=contract.COMPILE_ERROR,
                  signature=Signature.parse(f"{old} :: old"),
                  seed=None, device="cpu", backend="inductor", torch_version=torch.__version__, case=case(LOG),
                  detail=["[compile-error] old words"])
    path, _ = save(entry, tmp_path)
    before = path.read_text()
    result = CliRunner().invoke(main, ["triage", str(tmp_path), "--device", "cpu"])
    assert result.exit_code == 2, result.output
    assert "out of date" in result.output and "dcefuzz reclass" in result.output
    assert "not localised" not in result.output.split("bugs in")[0]
    assert path.read_text() == before and load(path).culprit is None


def _crash(folder, died: str) -> Entry:
    entry = Entry(id="crash-000000000000", kind=contract.CRASH,
                  signature=Signature.parse(f"crash|process died: {died} :: old"),
                  seed=None, device="cpu", backend="inductor", torch_version=torch.__version__, case=case(LOG),
                  detail=[f"[crash] binding 0, process: process died: {died}", "  at evaluate (sizes.py:78)"])
    save(entry, folder)
    return entry


def test_a_crash_saved_by_its_signal_is_renamed_where_it_dies_of_a_corrupted_heap(tmp_path, monkeypatch):
    """A SIGABRT saved before a heap corruption was one death by either signal: where it
    dies again after glibc's heap words, it is saved as ``heap corruption``."""
    from fuzzer.isolation.deaths import Death
    from fuzzer.replay import reclass

    entry = _crash(tmp_path, "SIGABRT")
    deaths = iter([Death(contract.CRASH, "process died: SIGSEGV"),
                   Death(contract.CRASH, "process died: heap corruption")])
    monkeypatch.setattr(reclass, "probe", lambda *args: next(deaths))
    r = reclass_entry(tmp_path / f"{entry.id}.json")
    assert r.outcome == RENAMED and r.detail == "crash|process died: heap corruption", r
    new = load(tmp_path / f"{r.new_id}.json")
    assert new.bug_class.text == "crash|process died: heap corruption"
    assert new.detail[1] == "  at evaluate (sizes.py:78)"
    assert not (tmp_path / f"{entry.id}.json").exists()


def test_a_crash_that_dies_its_plain_signal_again_is_unchanged(tmp_path, monkeypatch):
    from fuzzer.isolation.deaths import Death
    from fuzzer.replay import reclass

    entry = _crash(tmp_path, "SIGABRT")
    monkeypatch.setattr(reclass, "probe", lambda *args: Death(contract.CRASH, "process died: SIGABRT"))
    assert reclass_entry(tmp_path / f"{entry.id}.json").outcome == UNCHANGED
    monkeypatch.setattr(reclass, "probe", lambda *args: Death(None, "ran to completion (ok)", status=contract.OK))
    assert reclass_entry(tmp_path / f"{entry.id}.json").outcome == LEFT


def test_a_class_saved_with_fxs_numbered_placeholder_names_is_todays_renamed():
    """A class saved before FX's suffixed names (``arg3_1``) lost their numbers is read
    as today's by ``reclass`` and triage's probes (``legacy.renamed``), never as another
    bug: the corpus's entries of the effect token's placeholder were renamed so."""
    from fuzzer.judge.legacy import renamed

    message = "Expected positional argument for parameter arg3_1, but one was not passed in!"
    raised = contract.Divergence(contract.COMPILE_ERROR, 0, "compile", f"RuntimeError: {message}",
                                 (f"raised RuntimeError in torch.fx:FakeTensorProp.run_node: "
                                  f"{contract.normalise_message(message)}",))
    today = contract.bug_class(contract.COMPILE_ERROR, [raised])
    saved = contract.BugClass.parse(today.text.replace("arg#", "arg3_1"))
    assert saved != today and renamed(saved) == today and renamed(today) == today


def test_an_entry_saved_before_spots_gets_them_from_its_judgement(tmp_path):
    """An entry that records no spots (``Entry.spots``) gets where its bug shows when it is
    judged again, so its triage's probes look for its bug there."""
    divs = judge_fresh(case(LOG), "cpu", backends.DROP_LOG).of_kind(contract.EFFECT_LOG)
    entry = Entry.build(contract.EFFECT_LOG, case(LOG), divs,
                        Origin(seed=None, device="cpu", backend=backends.DROP_LOG))
    entry.spots = None
    save(entry, tmp_path)
    assert load(tmp_path / f"{entry.id}.json").spots is None
    assert reclass_entry(tmp_path / f"{entry.id}.json").outcome == UNCHANGED
    from fuzzer.judge.spots import SITE, Spot
    assert load(tmp_path / f"{entry.id}.json").spots == {Spot(SITE, "1")}
