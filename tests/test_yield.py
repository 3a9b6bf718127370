"""The benchmarks' accounting: yield.py's curves and known-bug share, rejudge.py's
choice of programs, timesplit.py's split of a campaign's time."""

import importlib.util
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _yield_module():
    spec = importlib.util.spec_from_file_location("yield_benchmark", ROOT / "benchmarks" / "yield.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _timesplit_module():
    spec = importlib.util.spec_from_file_location("timesplit_benchmark", ROOT / "benchmarks" / "timesplit.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _write(path: Path, rows: list[dict]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def test_rejudge_takes_the_programs_whose_every_finding_an_earlier_program_hit():
    spec = importlib.util.spec_from_file_location("rejudge_benchmark", ROOT / "benchmarks" / "rejudge.py")
    rejudge = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(rejudge)
    lines = [{"index": 0, "done": 5.0, "bugs": [["bug-a", "new"]]},
             {"index": 2, "done": 3.0, "bugs": []},
             {"index": 1, "done": 9.0, "bugs": [["bug-a", "counted"]]},               # a repeat
             {"index": 3, "done": 7.0, "bugs": [["bug-a", "repeat"], ["bug-b", "new"]]},  # one new bug
             {"index": 4, "done": 8.0, "bugs": [["bug-b", "new"]]}]                    # b came first at 7 s
    assert [ln["index"] for ln in rejudge.repeats(lines)] == [4, 1]


def test_a_configurations_own_gain_reads_its_curve_at_a_share_of_the_trial():
    bench = _yield_module()
    # a 10-minute trial: three bugs by its fifth minute, five by its end
    record = {"minutes": 10, "bugs": {"a": 20.0, "b": 100.0, "c": 300.0, "d": 301.0, "e": 599.0}}
    assert bench.own_gain(record, 0.5) == 5 / 3
    assert bench.own_gain(record, 0.7) == 5 / 4     # 420 s: a to d
    assert bench.own_gain({"minutes": 10, "bugs": {"a": 400.0}}, 0.5) is None


def test_a_campaigns_time_splits_into_clean_first_hits_and_known_bugs():
    timesplit = _timesplit_module()
    lines = [{"index": 0, "done": 5.0, "status": "finding", "bugs": [["bug-a", "new"]]},
             {"index": 1, "done": 9.0, "status": "finding", "bugs": [["bug-a", "counted"]]},
             {"index": 2, "done": 3.0, "status": "clean", "bugs": []},
             {"index": 3, "done": 7.0, "status": "finding", "bugs": [["bug-a", "repeat"], ["bug-b", "new"]]},
             {"index": 4, "done": 8.0, "status": "untested", "bugs": []}]
    got = [(line["index"], kind) for line, kind in timesplit.kinds(lines)]
    assert got == [(2, "clean"), (0, "first"), (3, "first"), (4, "untested"), (1, "known")]
    # a campaign on a corpus that held bug-c: its first hit, only counted, is known
    held = lines + [{"index": 5, "done": 1.0, "status": "finding", "bugs": [["bug-c", "counted"]]},
                    {"index": 6, "done": 2.0, "status": "finding", "bugs": [["bug-d", "new"]]}]
    assert [k for line, k in timesplit.kinds(held) if line["index"] in (5, 6)] == ["first", "first"]
    assert [k for line, k in timesplit.kinds(held, held=True) if line["index"] in (5, 6)] == ["known", "first"]
    # bug-a is not held: its first hit is new, so program 3 (bug-b new) stays a first hit
    assert dict((line["index"], k) for line, k in timesplit.kinds(held, held=True))[3] == "first"


def test_a_repeats_cost_after_its_trial_is_split_by_what_became_of_it(capsys):
    """``timesplit``: a log with the worker's clock splits the findings' programs into
    trials and what came after, and the known ones into those that kept an example and
    those only counted, each with its median."""
    timesplit = _timesplit_module()
    lines = [{"index": 0, "done": 1.0, "bugs": [["bug-a", "new"]], "trial": 2.0, "after_trial": 20.0},
             {"index": 1, "done": 2.0, "bugs": [["bug-a", "new"]], "trial": 2.0, "after_trial": 6.0},
             {"index": 2, "done": 3.0, "bugs": [["bug-a", "counted"]], "trial": 3.0, "after_trial": 1.0},
             {"index": 3, "done": 4.0, "bugs": [["bug-a", "counted"]], "trial": 3.0, "after_trial": 2.0},
             {"index": 4, "done": 5.0, "bugs": [["bug-a", "repeat"]], "trial": 3.0, "after_trial": 4.0}]
    timesplit._beyond_trial(timesplit.kinds(lines))
    out = capsys.readouterr().out.splitlines()
    assert out[1].split()[-4:] == ["1", "2", "20", "20.0"]                 # first: program 0
    assert out[2].split()[-4:] == ["1", "2", "6", "6.0"]                   # known, an example kept
    assert out[3].split()[-4:] == ["3", "9", "7", "2.0"]                   # known, counted only
    timesplit._beyond_trial(timesplit.kinds([{k: v for k, v in ln.items() if k != "after_trial"} for ln in lines]))
    assert capsys.readouterr().out == ""                                   # an older log: nothing to say


def test_the_known_bug_share_counts_the_held_bugs_from_the_first_program(tmp_path):
    """A campaign on a held corpus: a program that hits only a bug the corpus held
    (``bugs.jsonl``'s ``new`` false) is known though no earlier program hit it; a new
    bug's first hit is not, its later hits are."""
    bench = _yield_module()
    _write(tmp_path / "programs.jsonl", [
        {"index": 0, "done": 1.0, "status": "finding", "seconds": 5.0, "bugs": [["bug-held", "new"]]},
        {"index": 1, "done": 2.0, "status": "finding", "seconds": 3.0, "bugs": [["bug-new", "new"]]},
        {"index": 2, "done": 3.0, "status": "finding", "seconds": 2.0, "bugs": [["bug-new", "counted"]]},
        {"index": 3, "done": 4.0, "status": "clean", "seconds": 10.0, "bugs": []},
    ])
    _write(tmp_path / "bugs.jsonl", [{"program": 0, "bug": "bug-held", "new": False},
                                     {"program": 1, "bug": "bug-new", "new": True}])
    assert bench.known_share(tmp_path) == 0.35


def test_the_known_time_is_split_by_the_bug_each_program_showed_again():
    """``timesplit --by-bug``: each known program's trial and after-trial seconds go to the
    bugs it showed again, shared where it showed several; first hits and clean programs
    count for none; most time first."""
    timesplit = _timesplit_module()
    lines = [{"index": 0, "done": 1.0, "bugs": [["bug-a", "new"]], "trial": 2.0, "after_trial": 20.0},
             {"index": 1, "done": 2.0, "bugs": [["bug-a", "counted"]], "trial": 3.0, "after_trial": 5.0},
             {"index": 2, "done": 3.0, "bugs": [["bug-b", "counted"]], "trial": 1.0, "after_trial": 30.0},
             {"index": 3, "done": 4.0, "bugs": [["bug-a", "counted"], ["bug-c", "counted"]], "trial": 4.0,
              "after_trial": 2.0},
             {"index": 4, "done": 5.0, "status": "clean", "bugs": [], "trial": 9.0, "after_trial": 0.0}]
    got = timesplit.by_bug(timesplit.kinds(lines, held=True))
    assert got == [("bug-b", 1, 1.0, 30.0), ("bug-a", 2, 5.0, 6.0), ("bug-c", 1, 2.0, 1.0)]


def test_avoidable_splits_each_kind_by_whether_the_rule_would_set_its_program_aside(tmp_path, monkeypatch):
    """``avoidable.py``: each program the campaign ran is drawn again from its logged seed
    with the campaign's weights and asked of the avoidance rule; its seconds go to its
    kind, set aside or kept."""
    spec = importlib.util.spec_from_file_location("avoidable_benchmark", ROOT / "benchmarks" / "avoidable.py")
    avoidable = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(avoidable)
    from fuzzer.program import generate

    (tmp_path / "state.json").write_text(json.dumps({"features": {}}))
    _write(tmp_path / "programs.jsonl", [
        {"index": 0, "seed": 11, "done": 1.0, "status": "finding", "bugs": [["bug-a", "new"]], "seconds": 5.0},
        {"index": 1, "seed": 12, "done": 2.0, "status": "finding", "bugs": [["bug-a", "counted"]], "seconds": 7.0},
        {"index": 2, "seed": 13, "done": 3.0, "status": "finding", "bugs": [["bug-a", "counted"]], "seconds": 3.0},
        {"index": 3, "seed": 12, "done": 4.0, "status": "clean", "bugs": [], "seconds": 2.0}])
    aside = generate.generate(12).program

    class Stub:
        examples, causes = (), ()

        def held_by(self, program):
            return ("bug-a",) if program == aside else ()
    monkeypatch.setattr(avoidable.Avoidance, "of_folders", classmethod(lambda cls, *a: Stub()))
    programs, seconds, _ = avoidable.split(tmp_path, tmp_path)
    assert dict(programs) == {("first", False): 1, ("known", True): 1, ("known", False): 1, ("clean", True): 1}
    assert seconds[("known", True)] == 7.0 and seconds[("known", False)] == 3.0 and seconds[("clean", True)] == 2.0
