"""The committed corpus as a regression suite, with real Inductor compiles.

On the torch an entry was found with, it must still reproduce (the corpus holds
only confirmed findings); on any other torch it may have been fixed, or fail another
way (torch 2.14.1 words the compile error anew, or raises an error of another kind
first), so REPRODUCES, FIXED, "another bug of this kind" or "fails another way" is
accepted there, never another ERROR.  One repro script runs as a
subprocess to show its exit-code contract; a clean program's script exits 0.
"""

import subprocess
import sys
from pathlib import Path

import pytest
import torch
from helpers import case, prog

from fuzzer.corpus import store
from fuzzer.corpus.store import Entry, entries_in, load
from fuzzer.judge import kinds
from fuzzer.replay.rerun import FIXED, REPRODUCES, replay_entry
from fuzzer.reduce.signature import Signature

CORPUS = Path(__file__).resolve().parent.parent / "corpus"
ENTRIES = entries_in([CORPUS])[0]


#: the stale-cache entry the default run replays, the quickest (18 s on two cores); a
#: stale-cache entry replays as two cache pairs, four fresh processes, so the others
#: (20 to 45 s each) run with ``-m slow``, or ``dcefuzz replay corpus``
STALE_REPLAYED = "stale-cache-e5ad2999bb7c"


def _slow(path: Path) -> bool:
    return path.name.startswith("stale-cache-") and path.stem != STALE_REPLAYED


REPLAYED = [pytest.param(p, marks=pytest.mark.slow) if _slow(p) else p for p in ENTRIES]


def test_the_replayed_stale_cache_entry_exists():
    assert (CORPUS / f"{STALE_REPLAYED}.json").exists()

pytestmark = pytest.mark.compile


def release(version: str) -> tuple[int, ...]:
    """``2.13.0+cpu`` and ``2.13.0`` are one release: the local build tag is not."""
    return tuple(int(part) for part in version.split("+")[0].split(".")[:3] if part.isdigit())


def _same_torch(entry: Entry) -> bool:
    return release(entry.torch_version) == release(torch.__version__) and entry.device.startswith("cpu")


def test_a_local_build_tag_is_the_same_release():
    assert release("2.13.0+cpu") == release("2.13.0") == (2, 13, 0)
    assert release("2.13.0") != release("2.14.1+cu128")


def test_corpus_is_not_empty():
    assert ENTRIES, "corpus/ should hold the confirmed findings"


@pytest.mark.parametrize("path", REPLAYED, ids=lambda p: p.stem)
def test_corpus_entry_replays(path):
    entry = load(path)
    result = replay_entry(path, "cpu")
    if _same_torch(entry) and not entry.fault:
        assert result.outcome == REPRODUCES, result.detail
    elif entry.fault:
        assert result.outcome == FIXED, result.detail   # the planted fault is not here
    else:
        assert result.outcome in (REPRODUCES, FIXED) or result.detail.startswith(
            ("another bug of this kind", "fails another way")), result.detail


def _run_scripts(*paths: Path) -> list[subprocess.CompletedProcess]:
    """Run repro scripts side by side (each a process of its own: a compile is mostly
    one core's work, and CI has two)."""
    running = [subprocess.Popen([sys.executable, str(p), "cpu"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True) for p in paths]
    done = []
    for process in running:
        out, err = process.communicate(timeout=600)
        done.append(subprocess.CompletedProcess(process.args, process.returncode, out, err))
    return done


def test_repro_script_exit_codes(tmp_path):
    real = [load(p) for p in ENTRIES]
    real = [e for e in real if _same_torch(e) and not e.fault and e.kind != "missed-dce"]
    if not real:
        pytest.skip("no entry from this torch to reproduce")
    smallest = min(real, key=lambda e: e.statements)
    clean = Entry(id="clean", kind="effect-log", signature=Signature.parse("effect-log|missing :: clean"), seed=None,
                  device="cpu", backend="inductor", torch_version=torch.__version__, detail=["none"],
                  case=case(prog({"x0": ("s0",)}, [("e_log", ["x0"], None, {"site": 0}),
                                                   ("p_sin", ["x0"], "v0", {"site": 1})],
                                 outputs=["v0"])))
    path, _ = store.save(clean, tmp_path)
    script = tmp_path / f"{smallest.id}.py"  # the committed corpus keeps no scripts: rendered here
    script.write_text(kinds.script(smallest))
    done, fine = _run_scripts(script, path.with_suffix(".py"))
    assert done.returncode == 1, done.stdout + done.stderr
    assert "REPRODUCES" in done.stdout
    assert fine.returncode == 0, fine.stdout + fine.stderr
    assert "does not reproduce" in fine.stdout
