"""The one-shot CUDA check's dry run: the same steps on the CPU with tiny budgets, so the
script a lent GPU machine runs cannot rot (docs/cuda.md)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.compile


def test_the_dry_run_runs_every_step(tmp_path):
    env = dict(os.environ, OUT=str(tmp_path), PYTHON=sys.executable)
    done = subprocess.run(["bash", str(ROOT / "scripts" / "cuda-check.sh"), "--dry-run"], cwd=ROOT, env=env, check=False,
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
    summary = (tmp_path / "summary.md").read_text()
    for step in ("tests", "selftest", "campaign", "overhead", "replay", "replay-aoti", "figures"):
        assert f"- **{step}**: ok" in summary, summary
    assert "dry run on the CPU" in summary
    assert "Replay of corpus/ on the device: {'REPRODUCES': 1}" in summary
    assert "programs   2 in" in summary
    assert (tmp_path / "figures.json").exists() and (tmp_path / "campaign" / "state.json").exists()
    assert (tmp_path / "overhead" / "state.json").exists() and "Replay through aoti on the device: {" in summary


def test_the_gpu_limits_end_within_the_lease():
    """The GPU branch's step limits, each with the 5 s a step has to die after it, end
    within 560 s, whatever hangs (docs/cuda.md)."""
    import re

    script = (ROOT / "scripts" / "cuda-check.sh").read_text()
    gpu = script.split("else\n", 1)[1].split("\nfi\n", 1)[0]
    limits = {name: int(n) for name, n in re.findall(r"\b([A-Z]+)_LIMIT=(\d+)", gpu)}
    assert set(limits) == {"INSTALL", "TESTS", "SELFTEST", "CAMPAIGN", "OVERHEAD", "REPLAY", "AOTI", "FIGURES"}
    assert sum(limits.values()) + 5 * len(limits) <= 560, limits
