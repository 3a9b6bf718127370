"""dcefuzz stats --plot: the series drawn, the PNG, and the errors without matplotlib or lines.

Logs are written by hand: no campaign and no compile is needed."""

import json
import math
import struct
import sys

import pytest
from click.testing import CliRunner

from fuzzer.campaign.plot import series
from fuzzer.campaign.state import CampaignFolder, CampaignState, Shard
from fuzzer.cli import main

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _line(seconds, programs, saved, rss, replaced=0, **extra):
    return {"time": 1_800_000_000 + seconds, "seed": 3, "shard": "1/1", "programs": programs,
            "seconds": seconds, "findings": {"effect-log": saved}, "saved": saved, "repeats": 0,
            "untested": {}, "workers_alive": len(rss), "workers_replaced": replaced,
            "worker_rss_mb": rss, **extra}


def _log(n=30, new_keys=True):
    """A two-worker campaign of ``n`` intervals: a worker replaced at 150 s."""
    lines = []
    for i in range(1, n + 1):
        extra = {"bugs": i // 6, "entries": i // 3} if new_keys else {}
        lines.append(_line(10 * i, 12 * i, i // 4, [300 + 5 * i, 0 if i == 15 else 310 + 2 * i],
                           replaced=int(i >= 15), **extra))
    return lines


def _folder(tmp_path, lines):
    cf = CampaignFolder(tmp_path / "camp")
    last = lines[-1] if lines else {"programs": 0, "seconds": 0.0}
    cf.save(CampaignState(seed=3, shard=Shard(), programs=last["programs"], seconds=last["seconds"]))
    (cf.path / "stats.jsonl").write_text("".join(json.dumps(ln) + "\n" for ln in lines))
    return cf.path


def _png_size(path):
    data = path.read_bytes()
    assert data[:8] == PNG_MAGIC and data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


def test_series_rates_fallbacks_and_worker_gaps():
    s = series(_log(30))
    assert s["minutes"][:2] == [10 / 60, 20 / 60]
    assert math.isnan(s["rate"][0]) and s["rate"][1:] == [72.0] * 29  # 12 programs per 10 s
    assert s["smooth"][1:] == pytest.approx([72.0] * 29) and s["mean_rate"] == pytest.approx(72.0)
    assert s["bugs"][-1] == 5 and s["entries"][-1] == 10
    assert len(s["rss"]) == 2 and math.isnan(s["rss"][1][14]) and s["rss"][0][14] == 375
    assert s["replaced_at"] == [150 / 60]
    old = series(_log(30, new_keys=False))
    assert old["bugs"] is None and old["entries"][-1] == 30 // 4  # entries fall back to saved


def test_series_smooths_over_a_window_not_one_interval():
    lines = [_line(10 * i, 12 * i + (60 if i >= 10 else 0), 0, []) for i in range(1, 31)]
    s = series(lines)
    assert s["rate"][9] == pytest.approx(432.0)  # the burst, in its own interval
    assert s["window_s"] == 60 and s["smooth"][9] < 150  # diluted over a minute
    assert s["rss"] == [] and s["replaced_at"] == []


def test_stats_plot_writes_a_png_and_still_prints_the_stats(tmp_path):
    pytest.importorskip("matplotlib")
    folder = _folder(tmp_path, _log(30))
    out = tmp_path / "camp.png"
    r = CliRunner().invoke(main, ["stats", str(folder), "--plot", str(out)])
    assert r.exit_code == 0, r.output
    assert "programs   360 in 300s" in r.stdout and f"plot       {out}" in r.stdout
    assert _png_size(out) == (900, 1000) and out.stat().st_size > 20_000


@pytest.mark.parametrize("lines", [_log(30, new_keys=False), _log(1), [_line(10, 1, 0, [])]],
                         ids=["older-log", "one-line", "in-process"])
def test_stats_plot_draws_older_short_and_in_process_logs(tmp_path, lines):
    pytest.importorskip("matplotlib")
    out = tmp_path / "camp.png"
    r = CliRunner().invoke(main, ["stats", str(_folder(tmp_path, lines)), "--plot", str(out)])
    assert r.exit_code == 0, r.output
    assert _png_size(out) == (900, 1000)


def test_stats_json_with_a_plot_keeps_stdout_json(tmp_path):
    pytest.importorskip("matplotlib")
    out = tmp_path / "camp.png"
    r = CliRunner().invoke(main, ["stats", str(_folder(tmp_path, _log(5))), "--json", "--plot", str(out)])
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["programs"] == 60 and "plot" in r.stderr
    assert out.read_bytes()[:8] == PNG_MAGIC


def test_stats_plot_without_matplotlib_names_the_extra(tmp_path, monkeypatch):
    for name in [m for m in sys.modules if m.startswith("matplotlib.")] + ["matplotlib"]:
        monkeypatch.setitem(sys.modules, name, None)  # None: import raises ImportError
    out = tmp_path / "camp.png"
    r = CliRunner().invoke(main, ["stats", str(_folder(tmp_path, _log(5))), "--plot", str(out)])
    assert r.exit_code == 2, r.output
    assert "matplotlib" in r.stderr and "pip install 'dcefuzz[plot]'" in r.stderr
    assert "programs   60 in 50s" in r.stdout  # the text stats come first
    assert not out.exists()


def test_stats_plot_of_an_empty_log_is_an_error(tmp_path):
    out = tmp_path / "camp.png"
    r = CliRunner().invoke(main, ["stats", str(_folder(tmp_path, [])), "--plot", str(out)])
    assert r.exit_code == 2, r.output
    assert "stats.jsonl has no lines to plot" in r.stderr and not out.exists()


def test_stats_plot_into_a_missing_folder_is_an_error(tmp_path):
    pytest.importorskip("matplotlib")
    out = tmp_path / "no" / "such" / "camp.png"
    r = CliRunner().invoke(main, ["stats", str(_folder(tmp_path, _log(5))), "--plot", str(out)])
    assert r.exit_code == 2, r.output
    assert "cannot write the plot" in r.stderr
