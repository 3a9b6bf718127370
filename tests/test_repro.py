"""One contract: the package and a standalone repro script give the same verdict.

The script carries the contract as text (``fuzzer.render.repro``); this table of
cases runs each one both ways: ``replay_entry`` in this process, and the entry's
script in a subprocess (with the same stand-in backends registered first), and
checks REPRODUCES / FIXED / ERROR against exit 1 / 0 / 125.
"""

import dataclasses
import subprocess
import sys
from pathlib import Path

import backends
import pytest
import torch
from helpers import case, prog

from fuzzer.corpus.entry import Entry
from fuzzer.corpus.store import save
from fuzzer.isolation.deaths import RAISED, UNTESTED, Death, survivor_status
from fuzzer.judge import contract
from fuzzer.judge.observe import Gap
from fuzzer.judge.reading import Reading, ReadVerdict, read_death
from fuzzer.judge.trial import judge_fresh
from fuzzer.program.ir import Mode
from fuzzer.render import repro
from fuzzer.replay.rerun import ERROR, FIXED, REPRODUCES, replay_entry
from fuzzer.reduce.signature import Signature

TESTS = Path(__file__).resolve().parent
EXIT = {REPRODUCES: 1, FIXED: 0, ERROR: 125}

LOG = prog({"x0": ("s0",)}, [("p_sin", ["x0"], "v0", {"site": 0}),
                              ("e_log", ["v0"], None, {"site": 1}),
                              ("m_scale", ["x0"], None, {"site": 2})], outputs=["v0"])
#: LOG as a module whose buffer x1 the forward writes: the state the script judges
MODULE = dataclasses.replace(
    prog({"x0": ("s0",), "x1": ("s0",)}, [("p_sin", ["x0"], "v0", {"site": 0}), ("e_log", ["v0"], None, {"site": 1}),
                                          ("m_scale", ["x1"], None, {"site": 2})], outputs=["v0"]),
    mode=Mode(module=("x1",)))
#: MODULE whose state carries over from call to call: each check run rebuilds it
CARRIED = dataclasses.replace(MODULE, mode=Mode(module=("x1",), carry=True))
#: a Cache's state written, then read, then a Scale applied: the script makes the objects
OBJECTS = dataclasses.replace(
    prog({"x0": ("s0",), "x1": ("s0",)}, [("o_put", ["x0"], None, {"site": 0, "obj": "c0"}),
                                          ("o_read", ["x1"], "v0", {"site": 1, "obj": "c0"}),
                                          ("o_scale", ["v0"], "v1", {"site": 2, "obj": "q0"})], outputs=["v1"]),
    mode=Mode(objects=(("c0", "Cache", "x0"), ("q0", "Scale", "x1"))))
NARROW = prog({"x0": ("s0",)}, [("narrow", ["x0"], "v0", {"dim": 0}),
                                 ("e_log", ["v0"], None, {"site": 0})], outputs=["v0"])


def _class_on(c, backend, kind):
    """The bug class the package sees for ``kind`` (so an entry can look for it)."""
    verdict = judge_fresh(c, "cpu", backend)
    return contract.bug_class(kind, verdict.of_kind(kind))


#: (name, case, backend, kind, bug class looked for (None: what the package sees), expected)
TABLE = [
    ("faithful compile", case(LOG), backends.FAITHFUL, contract.EFFECT_LOG, "effect-log|missing", FIXED),
    ("dropped effect", case(LOG), backends.DROP_LOG, contract.EFFECT_LOG, "effect-log|missing", REPRODUCES),
    ("same kind, other bug", case(LOG), backends.DROP_LOG, contract.EFFECT_LOG, "effect-log|reordered", ERROR),
    ("lost mutation", case(LOG), backends.DROP_LOG_AND_MUTATION, contract.WRONG_MUTATION,
     "wrong-mutation|values", REPRODUCES),
    ("compile error", case(LOG), backends.RAISE, contract.COMPILE_ERROR, None, REPRODUCES),
    # a compile error hides whether the effect would have been dropped: not fixed
    ("raises another way", case(LOG), backends.RAISE, contract.EFFECT_LOG, "effect-log|missing", ERROR),
    # another kind that is no error (the dropped effect) leaves the mutation judged: fixed
    ("another kind, no error", case(LOG), backends.DROP_LOG, contract.WRONG_MUTATION, "wrong-mutation|values",
     FIXED),
    # a module's buffer, the same tensor over the calls and a new one each call
    ("module, faithful", case(MODULE, [{"s0": 5}] * 3), backends.FAITHFUL, contract.WRONG_MUTATION,
     "wrong-mutation|values", FIXED),
    ("module, lost buffer write", case(MODULE, [{"s0": 5}] * 3), backends.DROP_LOG_AND_MUTATION,
     contract.WRONG_MUTATION, "wrong-mutation|values", REPRODUCES),
    ("module, lost write, new buffers", case(MODULE), backends.DROP_LOG_AND_MUTATION, contract.WRONG_MUTATION,
     "wrong-mutation|values", REPRODUCES),
    ("carried state, faithful", case(CARRIED, [{"s0": 5}] * 3), backends.FAITHFUL, contract.WRONG_MUTATION,
     "wrong-mutation|values", FIXED),
    ("carried state, lost write", case(CARRIED, [{"s0": 5}] * 3), backends.DROP_LOG_AND_MUTATION,
     contract.WRONG_MUTATION, "wrong-mutation|values", REPRODUCES),
    # opaque objects made by the step: the state never written is a wrong output
    ("objects, faithful", case(OBJECTS), backends.FAITHFUL, contract.WRONG_OUTPUT, "wrong-output|values", FIXED),
    ("object state lost", case(OBJECTS), backends.DROP_OBJECT_WRITES, contract.WRONG_OUTPUT, "wrong-output|values",
     REPRODUCES),
    ("eager raises", case(NARROW, [{"s0": 3}, {"s0": 0}]), backends.DROP_LOG, contract.EFFECT_LOG,
     "effect-log|missing", ERROR),
]


@pytest.mark.compile
@pytest.mark.parametrize("name, c, backend, kind, wanted, expected", TABLE, ids=[t[0] for t in TABLE])
def test_package_and_script_agree(tmp_path, name, c, backend, kind, wanted, expected):
    wanted = wanted or _class_on(c, backend, kind)
    entry = Entry(id=f"case-{abs(hash(name)) % 10**6}", kind=kind, signature=Signature.parse(f"{wanted} :: {name}"),
                  seed=None, device="cpu", backend=backend, torch_version=torch.__version__, case=c,
                  detail=[f"[{kind}] {name}"])
    path, _ = save(entry, tmp_path)
    package = replay_entry(path)
    run = subprocess.run(
        [sys.executable, "-c",
         "import runpy, sys; sys.path.insert(0, sys.argv[1]); import backends; "
         "sys.argv = sys.argv[2:]; runpy.run_path(sys.argv[0], run_name='__main__')",
         str(TESTS), str(path.with_suffix(".py"))],
        capture_output=True, text=True, timeout=300)
    assert package.outcome == expected, package.detail
    assert run.returncode == EXIT[expected], run.stdout + run.stderr


def test_the_script_carries_the_contract_not_a_copy(tmp_path):
    entry = Entry(id="x", kind=contract.EFFECT_LOG, signature=Signature.parse("effect-log|missing :: x"), seed=None,
                  device="cpu", backend="inductor", torch_version=torch.__version__, case=case(LOG),
                  detail=["x"])
    script = repro.render(entry)
    for module in repro.CARRIED:
        assert repro.carried_source(module) in script
    assert "from fuzzer" not in script and "import fuzzer" not in script


#: a program that marks dims unbacked and whose op's backward logs: what it asks of the
#: compiler beyond its marks' kinds (the dims marked unbacked, the events of a backward)
ASKING = dataclasses.replace(
    prog({"x0": ("s0", "s1"), "x1": ("s0",)}, [("p_gradlog", ["x1"], "v0", {"site": 0}),
                                               ("p_sin", ["x0"], "v1", {"site": 1})], outputs=["v0", "v1"]),
    mode=Mode(marks=(("x0", 1, "unbacked"), ("x1", 0, "dynamic"), ("x1", 0, "unbacked")), grad=True))


@pytest.mark.parametrize("target", ["compile", "export", "compiled-autograd"])
def test_the_script_asks_what_the_package_asks(target):
    """The script's contract reads the program's asks from its spec: the same as the
    package's (``trial.asks_of``), field for field."""
    from fuzzer.judge.trial import asks_of
    from fuzzer.render.driver import spec_asks

    entry = Entry(id="x", kind=contract.EFFECT_LOG, signature=Signature.parse("effect-log|extra :: x"), seed=None,
                  device="cpu", backend="inductor", torch_version=torch.__version__, case=case(ASKING), detail=["x"],
                  target=target)
    asked = spec_asks(repro.spec(entry))
    assert asked.unbacked == {(0, 1), (1, 0)} and asked.backward_logs == {("e_log", 0)}
    assert asked == asks_of(ASKING, target)


@pytest.mark.parametrize("carried", ["repro", "cache-pair"])
def test_every_module_a_carried_module_imports_from_the_package_is_carried_before_it(carried):
    """A script drops the carried modules' ``from fuzzer...`` lines: what they import must
    be carried too, earlier (a cache pair's sides once lacked ``raised``, and died on it)."""
    import ast
    import inspect

    from fuzzer.cache import scripts

    modules = repro.CARRIED if carried == "repro" else scripts.PAIR_CARRIED
    for i, module in enumerate(modules):
        earlier = {m.__name__ for m in modules[:i]}
        for node in ast.walk(ast.parse(inspect.getsource(module))):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("fuzzer"):
                names = {node.module} if node.module != "fuzzer.judge" else \
                    {f"fuzzer.judge.{a.name}" for a in node.names}
                assert names <= earlier, (module.__name__, names - earlier)


@pytest.mark.compile
def test_not_wholly_compiled_is_never_fixed(tmp_path, pytester):
    """Under a compiler that graph-breaks at every custom op, an effect-log entry's bug
    does not show, and nothing was compiled that could show it: replay says ERROR (not
    FIXED), the script exits 125 (not 0: git bisect skips), the pytest plugin skips,
    and ``assert_contract`` raises CannotJudge (outside Hypothesis)."""
    import os

    from fuzzer import faults
    from fuzzer.testing import CannotJudge, assert_contract

    entry = Entry(id="not-compiled", kind=contract.EFFECT_LOG, signature=Signature.parse("effect-log|missing :: x"),
                  seed=None, device="cpu", backend=backends.FAITHFUL, torch_version=torch.__version__, case=case(LOG),
                  detail=["[effect-log] x"])
    path, _ = save(entry, tmp_path)
    assert replay_entry(path).outcome == FIXED   # wholly compiled, the bug absent: fixed
    with faults.planted("test-graph-break"):
        result = replay_entry(path)
        assert result.outcome == ERROR and not result.judged and "graph-break" in result.detail
        with pytest.raises(CannotJudge, match="untested"):
            assert_contract(case(LOG), backend=backends.FAITHFUL)
        items = pytester.runpytest_inprocess("--dcefuzz-corpus", str(tmp_path), "-p", "no:cacheprovider")
        items.assert_outcomes(skipped=1)
    run = subprocess.run(
        [sys.executable, "-c",
         "import runpy, sys; sys.path.insert(0, sys.argv[1]); import backends; "
         "sys.argv = sys.argv[2:]; runpy.run_path(sys.argv[0], run_name='__main__')",
         str(TESTS), str(path.with_suffix(".py"))],
        capture_output=True, text=True, timeout=300, env=dict(os.environ, DCEFUZZ_TEST_FAULT="test-graph-break"))
    assert run.returncode == 125 and "not wholly compiled" in run.stdout, run.stdout + run.stderr



CRASH_SPEC = {"kind": contract.CRASH, "bug_class": "crash|process died: SIGSEGV", "device": "cpu",
              "death": "SIGSEGV", "time_limit_s": 60}
_COMPILE_ERROR = contract.Divergence(contract.COMPILE_ERROR, 0, "compiled", "RuntimeError: planted",
                                     ("torch._dynamo:planted",))


@pytest.mark.parametrize("verdict", [
    contract.Verdict(contract.INVALID, reason="eager raised"),
    contract.Verdict(contract.OK, [_COMPILE_ERROR]),
    contract.Verdict(contract.OK, untested=[Gap("graph-break", "a break")]),
], ids=["eager raises", "compile raises another way", "not wholly compiled"])
def test_a_surviving_crash_child_that_could_not_judge_says_125(monkeypatch, verdict):
    """The child of a crash or timeout script survived, but eager raised, the compile
    raised another error (which may come before the death) or it was not wholly
    compiled: it says 125, never 0 (fixed), and its parent says 125 on."""
    from fuzzer.render import driver

    monkeypatch.setattr(driver, "judge", lambda *args: verdict)
    import faulthandler

    for armed in ("enable", "dump_traceback_later"):  # the child's arming, not pytest's business
        monkeypatch.setattr(faulthandler, armed, lambda *a, **k: None)
    assert driver.main(CRASH_SPEC, None, {}, argv=["--child"]) == driver.CANNOT_JUDGE_EXIT
    monkeypatch.setattr(driver, "judge", lambda *args: contract.Verdict(contract.OK))
    assert driver.main(CRASH_SPEC, None, {}, argv=["--child"]) == driver.FIXED_EXIT


#: the child a crash script's parent starts, standing in: it ends as told, eager done
_CHILD = """import os, signal, sys
open(os.environ["DCEFUZZ_EAGER_DONE"], "w").close()
how = sys.argv[1]
if how.startswith("SIG"):
    os.kill(os.getpid(), getattr(signal, how))
sys.exit(int(how))
"""


@pytest.mark.parametrize("how, expected", [("SIGSEGV", 1), ("SIGABRT", 125), ("0", 0), ("125", 125), ("3", 125)])
def test_a_crash_script_judges_how_its_child_ended(tmp_path, monkeypatch, how, expected):
    """The recorded death reproduces; another death (another signal, an exit status)
    cannot be judged (it was once "does not reproduce"); only a child that ran to
    completion and judged (0) says fixed."""
    from fuzzer.render import driver

    child = tmp_path / "child.py"
    child.write_text(_CHILD)
    monkeypatch.setattr(sys, "argv", [str(child)])
    assert driver.run_isolated(CRASH_SPEC, [how]) == expected


def _saved(tmp_path, kind, wanted):
    entry = Entry(id=f"{kind}-replayed", kind=kind, signature=Signature.parse(f"{wanted} :: x"), seed=None,
                  device="cpu", backend=backends.FAITHFUL, torch_version=torch.__version__, case=case(LOG),
                  detail=[f"[{kind}] binding 0, process: process died: SIGSEGV"])
    return save(entry, tmp_path)[0]


@pytest.mark.parametrize("death, outcome, judged", [
    (Death(contract.CRASH, "process died: SIGSEGV"), REPRODUCES, True),
    (Death(contract.CRASH, "process died: SIGABRT"), ERROR, True),          # another death
    (Death(None, "ran to completion (invalid)", status=contract.INVALID), ERROR, False),
    (Death(None, "ran to completion (raised)", status=RAISED), ERROR, False),
    (Death(None, "ran to completion (ok)", status=contract.OK), FIXED, True),
    (Death(contract.CRASH, "process died: SIGSEGV", after_eager=False), ERROR, False),
], ids=["same death", "another death", "eager raises", "raises another way", "ran clean", "died in eager"])
def test_a_crash_replay_is_fixed_only_where_its_child_ran_clean(tmp_path, monkeypatch, death, outcome, judged):
    from fuzzer.replay import rerun

    monkeypatch.setattr(rerun, "probe", lambda *args, **kwargs: death)
    result = replay_entry(_saved(tmp_path, contract.CRASH, "crash|process died: SIGSEGV"))
    assert (result.outcome, result.judged) == (outcome, judged), result.detail


def test_what_a_surviving_child_says_of_a_death():
    assert survivor_status(contract.Verdict(contract.INVALID)) == contract.INVALID
    assert survivor_status(contract.Verdict(contract.OK, [_COMPILE_ERROR])) == RAISED
    assert survivor_status(contract.Verdict(contract.OK, untested=[Gap("graph-break", "")])) == UNTESTED
    wrong = contract.Divergence(contract.WRONG_OUTPUT, 0, "output 0", "values", ("values",))
    assert survivor_status(contract.Verdict(contract.OK, [wrong])) == contract.OK


_DROPPED = contract.Divergence(contract.EFFECT_LOG, 0, "effects", "e_log dropped", ("missing",))
_REORDERED = contract.Divergence(contract.EFFECT_LOG, 0, "effects", "e_log moved", ("reordered",))


@pytest.mark.parametrize("second, outcome, judged", [
    (contract.Verdict(contract.OK, [_DROPPED]), REPRODUCES, True),
    (contract.Verdict(contract.OK), FIXED, True),                                   # flaky
    (contract.Verdict(contract.INVALID, reason="eager raised"), ERROR, False),
    (contract.Verdict(contract.OK, untested=[Gap("graph-break", "a break")]), ERROR, False),
    (contract.Verdict(contract.OK, [_COMPILE_ERROR]), ERROR, False),
    (contract.Verdict(contract.OK, [_REORDERED]), ERROR, True),                     # another bug class
], ids=["recurs", "judged clean", "invalid", "untested", "raises another way", "another bug class"])
def test_a_second_compile_that_cannot_judge_is_no_flaky_fix(tmp_path, monkeypatch, second, outcome, judged):
    """An entry that reproduced once is FIXED (flaky) only where a fresh compile judged
    clean; a second run that was invalid, untested, raised another way or showed
    another bug class of its kind is an ERROR (it once was "fixed (flaky)")."""
    from fuzzer.replay import rerun

    verdicts = iter([contract.Verdict(contract.OK, [_DROPPED]), second])
    monkeypatch.setattr(rerun.kinds, "oracle", lambda *args: lambda c: next(verdicts))
    result = replay_entry(_saved(tmp_path, contract.EFFECT_LOG, "effect-log|missing"))
    assert (result.outcome, result.judged) == (outcome, judged), result.detail


#: a child that wrote glibc's words on a corrupted heap before it died
_HEAP_CHILD = _CHILD.replace('how = sys.argv[1]\n', 'how = sys.argv[1]\nif "words" in sys.argv:\n'
                             '    sys.stderr.write("invalid fastbin entry (free)\\n"); sys.stderr.flush()\n')


@pytest.mark.parametrize("how, words, death, expected", [
    ("SIGABRT", True, "heap corruption", 1),
    ("SIGSEGV", True, "heap corruption", 1),    # the same corruption, the other signal
    ("SIGSEGV", False, "heap corruption", 1),   # a corruption met by a plain fault: dies so
    ("SIGABRT", False, "heap corruption", 1),   # ... or by a plain abort
    ("SIGSEGV", False, "SIGSEGV", 1),
    ("SIGABRT", True, "SIGABRT", 1),            # a heap corruption, where a plain abort was recorded
    ("SIGABRT", False, "SIGSEGV", 125),         # two plain signals: nothing says either was the heap
    ("SIGBUS", False, "heap corruption", 125),  # not a death a corrupted heap is met by
])
def test_a_crash_script_classes_a_corrupted_heap_by_its_words(tmp_path, monkeypatch, capsys, how, words, death,
                                                              expected):
    """glibc's words make a SIGABRT or SIGSEGV a heap corruption, and a heap corruption
    reproduces by any death a corrupted heap is met by (``death.dies_so``)."""
    from fuzzer.render import driver

    child = tmp_path / "child.py"
    child.write_text(_HEAP_CHILD)
    monkeypatch.setattr(sys, "argv", [str(child)])
    assert driver.run_isolated({**CRASH_SPEC, "death": death}, [how, *(["words"] if words else [])]) == expected
    assert ("invalid fastbin entry" in capsys.readouterr().err) == words  # passed on to the script's stderr


@pytest.mark.parametrize("deaths, outcome, probes", [
    (["process died: SIGBUS", "process died: heap corruption"], REPRODUCES, 2),  # its own death the second time
    (["process died: SIGBUS"] * 3, ERROR, 3),
    (["process died: SIGSEGV"], REPRODUCES, 1),  # a corrupted heap met by a plain fault
    ([None, None, "process died: heap corruption"], REPRODUCES, 3),
    ([None] * 3, FIXED, 3),
], ids=["another death, then its own", "another death each time", "a fault where the heap spoke",
        "clean, then its death", "clean each time"])
def test_a_crash_replay_gets_more_than_one_fresh_process(tmp_path, monkeypatch, deaths, outcome, probes):
    """A corrupted heap dies when, and how, the allocator notices: a crash entry is
    replayed in up to ``VERSIONS.flaky_tries`` processes, and one death of its own is enough."""
    from fuzzer.replay import rerun

    seen = iter([Death(contract.CRASH, d) if d else Death(None, "ran to completion (ok)", status=contract.OK)
                 for d in deaths])
    calls = []
    monkeypatch.setattr(rerun, "probe", lambda *args, **kwargs: calls.append(kwargs) or next(seen))
    result = replay_entry(_saved(tmp_path, contract.CRASH, "crash|process died: heap corruption"))
    assert (result.outcome, len(calls)) == (outcome, probes), result.detail
    assert all(kwargs.get("checked") for kwargs in calls)  # each process's heap checked


@pytest.mark.parametrize("seen, eager_done, judged, reading", [
    ("crash: SIGSEGV", False, False, Reading.NOT_JUDGED),  # before its eager runs were done
    ("crash: SIGSEGV", True, False, Reading.REPRODUCES),
    ("crash: SIGABRT", True, False, Reading.ANOTHER_BUG),  # another death
    (None, True, False, Reading.UNTESTED),                 # survived, could not judge its run
    (None, False, True, Reading.ABSENT),                   # survived, judged whole and clean
])
def test_how_a_process_ended_is_read_for_its_death(seen, eager_done, judged, reading):
    assert read_death("crash: SIGSEGV", seen, eager_done, judged).reading is reading


@pytest.mark.parametrize("reading, exit_code, outcome", [
    (Reading.REPRODUCES, 1, REPRODUCES), (Reading.ABSENT, 0, FIXED), (Reading.ANOTHER_BUG, 125, ERROR),
    (Reading.NOT_JUDGED, 125, ERROR), (Reading.UNTESTED, 125, ERROR)])
def test_a_crash_script_and_a_replay_read_a_death_by_one_ladder(tmp_path, monkeypatch, reading, exit_code, outcome):
    """Whatever the ladder of ``fuzzer.judge.reading`` says of a death, the script's
    parent and a replay say it alike: neither reads a process's end by a ladder of its own."""
    from types import SimpleNamespace

    from fuzzer.render import driver
    from fuzzer.replay import rerun

    for module in (driver, rerun):
        monkeypatch.setattr(module, "read_death", lambda *args, **kwargs: ReadVerdict(reading, "x"))
    child = tmp_path / "child.py"
    child.write_text(_CHILD)
    monkeypatch.setattr(sys, "argv", [str(child)])
    assert driver.run_isolated(CRASH_SPEC, ["SIGSEGV"]) == exit_code
    entry = SimpleNamespace(kind=contract.CRASH, bug_class=contract.BugClass.parse("crash: SIGSEGV"))
    said = rerun._death_read(entry, Death(contract.CRASH, "process died: SIGSEGV"))
    assert (said.outcome, said.judged) == (outcome, reading not in (Reading.NOT_JUDGED, Reading.UNTESTED))


def test_the_spec_holds_the_keys_its_record_names():
    """``repro.spec`` writes every key ``ReproSpec`` requires and none it does not name,
    over the committed corpus and an entry that asks for more (marks, a backward's logs,
    another target)."""
    from fuzzer.corpus.store import load_all
    from fuzzer.render.spec import ReproSpec

    entries, _ = load_all([str(Path(__file__).resolve().parent.parent / "corpus")])
    entries.append(Entry(id="x", kind=contract.EFFECT_LOG, signature=Signature.parse("effect-log|extra :: x"),
                         seed=None, device="cpu", backend="inductor", torch_version=torch.__version__,
                         case=case(ASKING), detail=["x"], target="export", threads=2, hash_seed="7"))
    named = set(ReproSpec.__annotations__)
    for entry in entries:
        written = set(repro.spec(entry))
        assert ReproSpec.__required_keys__ <= written and written <= named, (entry.id, written ^ named)
