"""The upstream file: what is public about a bug, keyed by member entries, in bugs,
its JSON, its markdown table and its report; and campaigns that count known bugs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from fuzzer.cli import main
from fuzzer.corpus import upstream
from fuzzer.corpus.bugs import group
from fuzzer.corpus.store import entries_in, load_all
from fuzzer.render.table import markdown

CORPUS = Path(__file__).resolve().parents[1] / "corpus"
#: two entries of two different committed bugs
KNOWN, NEW = "effect-log-915158cff0e3", "wrong-output-07d276f3d739"


def _folder(tmp_path: Path, records: list[dict]) -> Path:
    for name in (KNOWN, NEW):
        shutil.copyfile(CORPUS / f"{name}.json", tmp_path / f"{name}.json")
    (tmp_path / upstream.FILE).write_text(json.dumps({"bugs": records}))
    return tmp_path


RECORDS = [
    {"entries": [KNOWN], "note": "the dropped ordering edge",
     "links": [{"ref": "pytorch/pytorch#189454", "kind": "issue", "state": "open"},
               {"ref": "pytorch/pytorch#189209", "kind": "pr", "state": "open"}]},
    {"entries": [NEW], "searched": "2026-11-30",
     "links": [{"ref": "pytorch/pytorch#133512", "kind": "issue", "state": "open", "relation": "related"}]},
]


def test_records_are_found_by_member_entry_and_say_known_or_new(tmp_path):
    folder = _folder(tmp_path, RECORDS)
    known = upstream.load(folder)
    entries, bad = load_all([folder])
    assert not bad and len(entries) == 2  # upstream.json is not read as an entry
    assert [p.name for p in entries_in([folder])[0]] == sorted(f"{n}.json" for n in (KNOWN, NEW))
    by_entry = {b.entries[0]: b for b in group(entries)}
    assert upstream.summary(known.of(by_entry[KNOWN].entries))["known"] is True
    assert upstream.summary(known.of(by_entry[NEW].entries))["known"] is False
    assert upstream.line(known.of(by_entry[NEW].entries)).startswith("new: nothing public about its cause")
    assert upstream.line(()) == "not looked up"
    assert known.check(group(entries)) == []
    table = markdown(group(entries), known)
    row = next(line for line in table.splitlines() if by_entry[KNOWN].id in line)
    assert "known: pytorch/pytorch#189454 (issue, open), pytorch/pytorch#189209 (pr, open)" in row
    row = next(line for line in table.splitlines() if by_entry[NEW].id in line)
    assert "**new**: related: pytorch/pytorch#133512 (issue, open)" in row


def test_check_names_missing_entries_and_split_names_a_cause_triage_makes_two_bugs(tmp_path):
    folder = _folder(tmp_path, [{"entries": [KNOWN, NEW, "gone-000"], "searched": "2026-11-30"}])
    entries, _ = load_all([folder])
    known = upstream.load(folder)
    problems = known.check(group(entries))
    assert problems == [f"record 0 ({upstream._label(known.records[0])}): no such entry gone-000"]
    # one cause as the reader has it, two bugs as triage has them: said, not an error
    [(record, bugs)] = known.split(group(entries))
    assert record is known.records[0] and len(bugs) == 2


@pytest.mark.parametrize("bad, says", [
    ({"records": []}, "expected"),
    ({"bugs": [{"links": []}]}, "names its entries"),
    ({"bugs": [{"entries": ["a"]}]}, "no links and no date"),
    ({"bugs": [{"entries": ["a"], "links": [{"ref": "pytorch/pytorch#1", "kind": "issue", "state": "merged"}]}]},
     "state 'merged'"),
    ({"bugs": [{"entries": ["a"], "links": [{"ref": "1", "kind": "pr", "state": "open"}]}]}, "owner/repo#number"),
    ({"bugs": [{"entries": ["a"], "links": [{"ref": "o/r#1", "kind": "pr", "state": "open", "relation": "x"}]}]},
     "relation"),
    # merged only where a release's source was read: the tracker's "closed" says no more than that
    ({"bugs": [{"entries": ["a"], "links": [{"ref": "o/r#1", "kind": "pr", "state": "merged"}]}]},
     "names the release"),
    ({"bugs": [{"entries": ["a"], "links": [{"ref": "o/r#1", "kind": "pr", "state": "closed", "release": "2.14.1"}]}]},
     "names the release"),
    ({"bugs": [{"entries": ["a"], "links": [{"ref": "o/r#1", "kind": "pr", "state": "merged", "release": "2.14"}]}]},
     "not a release number"),
    ({"bugs": [{"entries": ["a"], "links": [{"ref": "o/r#1", "kind": "pr", "state": "merged", "release": "next"}]}]},
     "not a release number"),
    ({"bugs": [{"entries": ["a"], "links": [{"ref": "o/r#1", "kind": "pr", "state": "open", "relation": "fixes"}]}]},
     "only a merged PR fixes"),
    ({"bugs": [{"entries": ["a"], "links": [{"ref": "o/r#1", "kind": "issue", "state": "fixed", "relation": "fixes"}]}]},
     "only a merged PR fixes"),
    # a hand script is a whole program: a sketch of a program's body (a bare return) is not
    ({"bugs": [{"entries": ["a"], "searched": "2026-12-05", "script": "v0 = x0 * 2\nreturn v0\n"}]},
     "not a complete program"),
    ({"bugs": [{"entries": ["a"], "searched": "2026-12-05", "cause": ["not", "text"]}]}, "are text"),
])
def test_a_bad_file_is_refused_with_the_reason(bad, says):
    with pytest.raises(upstream.UpstreamError, match=says):
        upstream.parse(bad)


#: an entry whose repro reproduces up to 2.13.0 and is fixed in 2.14.1
FIXED_IN_2141 = "compile-error-1344d7301a23"


def _fix(release: str, entry: str = FIXED_IN_2141) -> dict:
    return {"entries": [entry], "searched": "2026-12-06",
            "links": [{"ref": "pytorch/pytorch#188278", "kind": "pr", "state": "merged", "relation": "fixes",
                       "release": release}]}


def test_a_fix_names_its_release_and_makes_the_bug_known(tmp_path):
    """``fixes``: a merged PR, in a release whose source holds it, that removed the
    bug; it makes the bug known, and every rendering says fixed by it and where."""
    shutil.copyfile(CORPUS / f"{FIXED_IN_2141}.json", tmp_path / f"{FIXED_IN_2141}.json")
    folder = _folder(tmp_path, [_fix("2.14.1"), {"entries": [NEW], "searched": "2026-12-06", "links": [
        {"ref": "o/r#2", "kind": "pr", "state": "closed", "relation": "related"},
        {"ref": "o/r#3", "kind": "pr", "state": "merged", "release": "2.13.0", "relation": "related"}]}])
    known = upstream.load(folder)
    bugs = group(load_all([folder])[0])
    by_entry = {b.entries[0]: b for b in bugs}
    fixed = known.of(by_entry[FIXED_IN_2141].entries)
    assert upstream.summary(fixed)["known"] is True
    assert upstream.summary(fixed)["links"][0]["release"] == "2.14.1"
    assert upstream.line(fixed) == "fixed by pytorch/pytorch#188278 (pr, merged in 2.14.1)"
    # a closed PR, and a merged one only related, leave a bug new
    assert upstream.summary(known.of(by_entry[NEW].entries))["known"] is False
    table = markdown(bugs, known)
    row = next(line for line in table.splitlines() if by_entry[FIXED_IN_2141].id in line)
    assert row.endswith("| known: fixed by pytorch/pytorch#188278 (pr, merged in 2.14.1) |")
    row = next(line for line in table.splitlines() if by_entry[NEW].id in line)
    assert row.endswith("| **new**: related: o/r#2 (pr, closed), o/r#3 (pr, merged in 2.13.0) |")
    assert known.check(bugs) == []


@pytest.mark.parametrize("release, entry, says", [
    ("2.13.0", FIXED_IN_2141, "where it reproduces"),  # named before the release that fixed it
    ("2.10.0", FIXED_IN_2141, "where it was not run"),  # a release its repros never ran under
    ("2.14.1", KNOWN, "where it reproduces"),  # a bug that still reproduces there
])
def test_check_refuses_a_fix_the_replay_verdicts_contradict(tmp_path, release, entry, says):
    shutil.copyfile(CORPUS / f"{FIXED_IN_2141}.json", tmp_path / f"{FIXED_IN_2141}.json")
    folder = _folder(tmp_path, [_fix(release, entry)])
    bugs = group(load_all([folder])[0])
    holder = next(b for b in bugs if entry in b.entries)
    [problem] = upstream.load(folder).check(bugs)
    assert problem.endswith(f"pytorch/pytorch#188278 fixes {holder.id} in {release}, {says}")


def test_a_records_cause_and_script_are_read_kept_and_summed_up():
    """The cause as read and the hand script a record carries come back out as they went
    in, and a bug's summary has each cause once and the shortest script."""
    script = "import torch\n\nprint(torch.ones(2) * 2)\n"
    longer = "import torch\n\nx = torch.ones(2)\nprint(x * 2)\n"
    data = {"bugs": [{"entries": ["a"], "searched": "2026-12-05", "cause": "one read", "script": longer},
                     {"entries": ["b"], "searched": "2026-12-05", "cause": "one read", "script": script},
                     {"entries": ["c"], "searched": "2026-12-05"}]}
    known = upstream.parse(data)
    assert [(r.cause, r.script) for r in known.records] == [("one read", longer), ("one read", script), ("", "")]
    assert upstream.parse({"bugs": [r.to_json() for r in known.records]}) == known
    assert "cause" not in known.records[2].to_json() and "script" not in known.records[2].to_json()
    summed = upstream.summary(known.of(["a", "b"]))
    assert summed["causes"] == ["one read"] and summed["script"] == script
    assert upstream.summary(known.of(["c"]))["causes"] == [] and upstream.summary(known.of(["c"]))["script"] == ""


@pytest.mark.compile
def test_bugs_json_markdown_and_report_carry_upstream(tmp_path):
    folder = _folder(tmp_path, RECORDS)
    runner = CliRunner()
    listed = json.loads(runner.invoke(main, ["bugs", str(folder), "--json"]).output)
    by_entry = {b["entries"][0]: b for b in listed}
    assert by_entry[KNOWN]["upstream"]["known"] is True
    assert by_entry[KNOWN]["upstream"]["links"][0]["ref"] == "pytorch/pytorch#189454"
    assert by_entry[NEW]["upstream"]["known"] is False
    text = runner.invoke(main, ["bugs", str(folder)]).output
    assert "upstream  pytorch/pytorch#189454 (issue, open)" in text
    table = runner.invoke(main, ["bugs", str(folder), "--markdown"]).output
    assert table.startswith("| bug | what | culprit | entries |")
    issue = runner.invoke(main, ["report", KNOWN, str(folder)]).output
    assert "### Already public" in issue and "pytorch/pytorch#189454 (issue, open)" in issue
    (folder / upstream.FILE).write_text("{")
    refused = runner.invoke(main, ["bugs", str(folder)])
    assert refused.exit_code == 2 and upstream.FILE in refused.output


def test_known_upstream_keys_are_the_linked_bugs(tmp_path):
    from fuzzer.cli.launching import known_keys_of
    from fuzzer.corpus.bugs import key_of

    folder = _folder(tmp_path, RECORDS)
    entries = {e.id: e for e in load_all([folder])[0]}
    assert known_keys_of(str(folder)) == (key_of(entries[KNOWN]),)


def test_a_known_bug_whose_key_cannot_tell_causes_apart_is_not_known(tmp_path):
    """A crash whose stack holds no frame of torch names no cause: linked to an issue or
    not, findings under its key are never counted as known."""
    from fuzzer.cli.launching import known_keys_of
    from fuzzer.corpus.bugs import key_of, separates

    crash = "crash-8caa0f144a94"
    shutil.copyfile(CORPUS / f"{crash}.json", tmp_path / f"{crash}.json")
    folder = _folder(tmp_path, RECORDS + [
        {"entries": [crash], "links": [{"ref": "pytorch/pytorch#139628", "kind": "issue", "state": "open"}]}])
    entries = {e.id: e for e in load_all([folder])[0]}
    assert not separates(entries[crash]) and separates(entries[KNOWN])
    assert known_keys_of(str(folder)) == (key_of(entries[KNOWN]),)


def test_the_committed_upstream_file_fits_the_committed_corpus():
    """Every record names entries of corpus/, each record within one bug, and
    docs/bugs.md's table is what ``dcefuzz bugs corpus --markdown`` prints."""
    entries, bad = load_all([CORPUS])
    assert not bad
    known = upstream.load(CORPUS)
    assert known.records, "corpus/upstream.json is missing"
    assert known.check(group(entries)) == []
    table = markdown(group(entries), known)
    assert table in (CORPUS.parent / "docs" / "bugs.md").read_text()
