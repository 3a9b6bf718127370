"""One contract: the package and a standalone repro script give the same verdict.

The script carries the contract as text (``fuzzer.render.repro``); this table of
cases runs each one both ways: ``replay_entry`` in this process, and the entry's
script in a subprocess (with the same stand-in backends registered first), and
checks REPRODUCES / FIXED / ERROR against exit 1 / 0 / 125.
"""

import subprocess
import sys
from pathlib import Path

import backends
import pytest
import torch
from helpers import case, prog

from fuzzer.corpus.entry import Entry
from fuzzer.corpus.store import save
from fuzzer.judge import contract
from fuzzer.judge.trial import judge_fresh
from fuzzer.render import repro
from fuzzer.replay.rerun import ERROR, FIXED, REPRODUCES, replay_entry

TESTS = Path(__file__).resolve().parent
EXIT = {REPRODUCES: 1, FIXED: 0, ERROR: 125}

LOG = prog({"x0": ("s0",)}, [("p_sin", ["x0"], "v0", {"site": 0}),
                              ("e_log", ["v0"], None, {"site": 1}),
                              ("m_scale", ["x0"], None, {"site": 2})], outputs=["v0"])
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
    ("eager raises", case(NARROW, [{"s0": 3}, {"s0": 0}]), backends.DROP_LOG, contract.EFFECT_LOG,
     "effect-log|missing", ERROR),
]


@pytest.mark.parametrize("name, c, backend, kind, wanted, expected", TABLE, ids=[t[0] for t in TABLE])
def test_package_and_script_agree(tmp_path, name, c, backend, kind, wanted, expected):
    wanted = wanted or _class_on(c, backend, kind)
    entry = Entry(id=f"case-{abs(hash(name)) % 10**6}", kind=kind, signature=f"{wanted} :: {name}", seed=None,
                  device="cpu", backend=backend, torch_version=torch.__version__, case=c,
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
    entry = Entry(id="x", kind=contract.EFFECT_LOG, signature="effect-log|missing :: x", seed=None,
                  device="cpu", backend="inductor", torch_version=torch.__version__, case=case(LOG),
                  detail=["x"])
    script = repro.render(entry)
    for module in repro.CARRIED:
        assert repro.carried_source(module) in script
    assert "from fuzzer" not in script and "import fuzzer" not in script


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


def test_not_wholly_compiled_is_never_fixed(tmp_path, pytester):
    """Under a compiler that graph-breaks at every custom op, an effect-log entry's bug
    does not show, and nothing was compiled that could show it: replay says ERROR (not
    FIXED), the script exits 125 (not 0: git bisect skips), the pytest plugin skips,
    and ``assert_contract`` raises CannotJudge (outside Hypothesis)."""
    import os

    from fuzzer import faults
    from fuzzer.testing import CannotJudge, assert_contract

    entry = Entry(id="not-compiled", kind=contract.EFFECT_LOG, signature="effect-log|missing :: x", seed=None,
                  device="cpu", backend=backends.FAITHFUL, torch_version=torch.__version__, case=case(LOG),
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
