import importlib.util
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

from fuzzer.pytest_plugin import under_one_hash_seed

sys.path.insert(0, os.path.dirname(__file__))

#: ``pytester`` runs pytest in-process on the example tests and the corpus plugin
pytest_plugins = ["pytester"]

#: the fast tier's guard: on PYTHONPATH, so the processes the tests start refuse too
NO_INDUCTOR = Path(__file__).parent / "noinductor"
#: where this run's refused compiles leave their files (stashed only in the fast tier)
_FOLDER = pytest.StashKey[Path]()
#: the most processes ``-n auto`` starts: each imports torch and compiles cold, so more
#: than a few cost memory and repeated cold compiles for little gain
MOST_WORKERS: int = 4


def pytest_xdist_auto_num_workers(config) -> int:
    """``-n auto`` (README's test command): one worker a core, at most ``MOST_WORKERS``;
    ``--dist loadfile`` keeps a file's tests, and the compiles its fixtures share, on
    one worker."""
    return max(1, min(os.cpu_count() or 1, MOST_WORKERS))


def pytest_configure(config) -> None:
    """The corpus replays in this process, under the hash seed its entries were found
    with; a run that leaves out ``compile`` refuses every Inductor compile
    (tests/noinductor)."""
    under_one_hash_seed(config)
    if not re.search(r"\bnot\s+compile\b", config.option.markexpr or ""):
        return
    spec = importlib.util.spec_from_file_location("no_inductor", NO_INDUCTOR / "sitecustomize.py")
    guard = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(guard)
    folder = tempfile.mkdtemp(prefix="dcefuzz-no-inductor-")
    os.environ[guard.ENV] = folder
    os.environ["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(NO_INDUCTOR), os.environ.get("PYTHONPATH")) if p)
    guard.install()
    config.stash[_FOLDER] = Path(folder)



def pytest_unconfigure(config) -> None:
    folder = config.stash.get(_FOLDER, None)
    if folder is not None:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(autouse=True)
def _no_inductor(request):
    """Fail a fast-tier test that compiled with Inductor here or in a child it started."""
    folder = request.config.stash.get(_FOLDER, None)
    yield
    if folder is None:
        return
    refused = list(folder.iterdir())
    for path in refused:
        path.unlink()
    if refused:
        pytest.fail(f"{request.node.nodeid} compiled with Inductor {len(refused)} time(s) "
                    "in a run without `compile`: mark it @pytest.mark.compile", pytrace=False)
