"""The corpus as pytest items (``fuzzer.pytest_plugin``): one item per entry, a known
bug expected to reproduce, an entry that cannot be judged here skipped; replays stood in,
no compile."""

import pytest
from helpers import case, divergence_on, prog

from fuzzer import pytest_plugin
from fuzzer.corpus import store
from fuzzer.corpus.entry import Entry, Origin
from fuzzer.judge import contract
from fuzzer.replay import rerun


def _save(folder, n, known=None):
    body = [("p_sin", ["x0"], f"v{k}", {"site": k + 1}) for k in range(n - 1)]
    c = case(prog({"x0": ("s0",)}, [*body, ("e_log", ["x0"], None, {"site": 0})]))
    e = Entry.build(contract.EFFECT_LOG, c, [divergence_on(0)], Origin(seed=1, device="cpu", backend="inductor"))
    e.known_bug = known
    path, _ = store.save(e, folder)
    return path.stem


@pytest.fixture
def replays(monkeypatch):
    """Each entry's replay outcome, by its id."""
    outcomes = {}
    monkeypatch.setattr(rerun, "replay_entry", lambda path, device=None: rerun.ReplayResult(
        str(path), path.stem, "effect-log", *outcomes[path.stem]))
    return outcomes


def test_each_entry_is_an_item_a_known_bug_expected_to_reproduce(pytester, replays, tmp_path):
    corpus = tmp_path / "corpus"
    unmarked, known, fixed, away = _save(corpus, 1), _save(corpus, 2, "pytorch/pytorch#1"), _save(corpus, 3), \
        _save(corpus, 4)
    (corpus / "upstream.json").write_text('{"bugs": []}')
    replays.update({unmarked: (rerun.REPRODUCES, "x"), known: (rerun.REPRODUCES, "x"), fixed: (rerun.FIXED, ""),
                    away: (rerun.ERROR, "cannot run on cuda", False)})
    result = pytester.runpytest_inprocess(pytest_plugin.OPTION, str(corpus), "-p", "no:cacheprovider")
    result.assert_outcomes(failed=1, xfailed=1, passed=1, skipped=1)
    assert f"{unmarked} reproduces" in result.stdout.str()


def test_a_folder_that_is_not_there_is_a_usage_error(pytester, tmp_path):
    result = pytester.runpytest_inprocess(pytest_plugin.OPTION, str(tmp_path / "missing"))
    assert result.ret == pytest.ExitCode.USAGE_ERROR
