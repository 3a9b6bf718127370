"""A campaign's stats log drawn as one PNG: is it worth keeping it running?

Three panels over elapsed time answer what a runner asks of a long campaign: is it
still finding things (distinct bugs and corpus entries, the discovery curve), has it
slowed down (programs per minute between progress lines, raw and smoothed), and is a
worker growing toward its memory cap (resident MiB per worker, with the moments a
worker was replaced).

matplotlib is an optional extra (``pip install 'dcefuzz[plot]'``): a fuzzing machine
needs none of it, so it is imported here only, when a plot is asked for, and drawn with
the Agg backend straight to a file (no display, no pyplot global state).  The series
are computed without matplotlib (:func:`series`), so they are tested where it is absent.
"""

from __future__ import annotations

import math
from pathlib import Path

from fuzzer.limits import CAMPAIGN


INSTALL_HINT = "pip install 'dcefuzz[plot]'"


class PlotUnavailable(RuntimeError):
    """matplotlib is not installed."""


def _entries(line: dict) -> int:
    # older logs have no ``entries``: ``saved`` counts the same entries
    return line.get("entries", line.get("saved", 0))


def _rate(lines: list[dict], i: int, j: int) -> float | None:
    """Programs per minute from line ``j`` to line ``i`` (None if no time passed)."""
    dt = lines[i]["seconds"] - lines[j]["seconds"]
    return (lines[i]["programs"] - lines[j]["programs"]) / dt * 60 if dt > 0 else None


def series(lines: list[dict]) -> dict:
    """What the panels draw, as plain lists over ``minutes`` (NaN where there is no value).

    ``bugs`` is None when no line carries it (a log older than the count).  ``rss`` is
    one list per worker slot; a reading of 0 (a slot with no live worker) is NaN.
    """
    nan = math.nan
    minutes = [ln["seconds"] / 60 for ln in lines]
    has_bugs = any("bugs" in ln for ln in lines)
    bugs = [ln.get("bugs", nan) for ln in lines] if has_bugs else None
    entries = [_entries(ln) for ln in lines]

    rate = [nan] + [_rate(lines, i, i - 1) for i in range(1, len(lines))]
    rate = [nan if r is None else r for r in rate]
    span = lines[-1]["seconds"] - lines[0]["seconds"] if lines else 0.0
    window = max(CAMPAIGN.smooth_min_seconds, span / 20)
    smooth, j = [], 0
    for i, ln in enumerate(lines):
        while j < i and ln["seconds"] - lines[j + 1]["seconds"] >= window:
            j += 1
        r = _rate(lines, i, j) if i else None
        smooth.append(nan if r is None else r)
    last = lines[-1] if lines else {}
    total = last["programs"] / last["seconds"] * 60 if last.get("seconds") else None

    slots = max((len(ln.get("worker_rss_mb") or []) for ln in lines), default=0)
    rss = [[(ln.get("worker_rss_mb") or [])[k] if k < len(ln.get("worker_rss_mb") or []) else 0
            for ln in lines] for k in range(slots)]
    rss = [[mb if mb else nan for mb in slot] for slot in rss]
    replaced_at, before = [], 0
    for m, ln in zip(minutes, lines):
        now = ln.get("workers_replaced", 0)
        replaced_at += [m] * max(0, now - before)
        before = now
    return {"minutes": minutes, "bugs": bugs, "entries": entries, "rate": rate,
            "smooth": smooth, "window_s": window, "mean_rate": total, "rss": rss,
            "replaced_at": replaced_at}


def _figure_api():
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        raise PlotUnavailable(f"--plot needs matplotlib, an optional extra: {INSTALL_HINT}") from None
    return Figure, FigureCanvasAgg


def plot(lines: list[dict], out: str | Path, title: str = "") -> Path:
    """Draw the three panels of ``lines`` (a stats log, at least one line) into ``out``."""
    if not lines:
        raise ValueError("no stats lines to plot")
    Figure, FigureCanvasAgg = _figure_api()
    s = series(lines)
    x = s["minutes"]

    fig = Figure(figsize=(9, 10), dpi=100, layout="constrained")
    FigureCanvasAgg(fig)
    panels = fig.subplots(3, 1, sharex=True)
    found, speed, memory = panels
    if title:
        fig.suptitle(title)
    _discovery(found, x, s)
    _throughput(speed, x, s)
    _memory(memory, x, s)
    for ax in panels:
        ax.grid(True, alpha=0.3)
    out = Path(out)
    fig.savefig(out, format="png")
    return out


def _discovery(found, x, s: dict) -> None:
    """Corpus entries and distinct bugs over time."""
    found.plot(x, s["entries"], drawstyle="steps-post", color="tab:blue", label="corpus entries")
    if s["bugs"] is not None:
        found.plot(x, s["bugs"], drawstyle="steps-post", color="tab:red", label="distinct bugs")
    found.set_ylabel("count")
    found.set_title("Discovery: corpus entries" + (" and distinct bugs" if s["bugs"] is not None
                                                   else " (no bug counts in this log)"), loc="left")
    found.set_ylim(bottom=0)
    found.yaxis.get_major_locator().set_params(integer=True)
    found.legend(loc="upper left")


def _throughput(speed, x, s: dict) -> None:
    """Programs a minute, per interval and smoothed, with the whole run's mean."""
    speed.plot(x, s["rate"], color="tab:green", alpha=0.3, linewidth=1, label="per interval")
    speed.plot(x, s["smooth"], color="tab:green", linewidth=2,
               label=f"{s['window_s'] / 60:.0f}-min average")
    if s["mean_rate"] is not None:
        speed.axhline(s["mean_rate"], color="gray", linestyle="--", linewidth=1,
                      label=f"whole run {s['mean_rate']:.1f}/min")
    speed.set_ylabel("programs / min")
    speed.set_title("Throughput", loc="left")
    speed.set_ylim(bottom=0)
    speed.legend(loc="best")


def _memory(memory, x, s: dict) -> None:
    """Each worker's resident memory, and when workers were replaced."""
    for k, slot in enumerate(s["rss"]):
        memory.plot(x, slot, linewidth=1.2, label=f"worker {k}")
    for n, m in enumerate(s["replaced_at"]):
        memory.axvline(m, color="black", linestyle=":", linewidth=1,
                       label="worker replaced" if n == 0 else None)
    memory.set_ylabel("resident MiB")
    memory.set_title("Worker memory" if s["rss"] else
                     "Worker memory: none in this log (an in-process campaign)", loc="left")
    peak = max((mb for slot in s["rss"] for mb in slot if not math.isnan(mb)), default=0)
    memory.set_ylim(0, peak * 1.3 or 1)  # headroom for the legend above the curves
    if s["rss"] or s["replaced_at"]:
        memory.legend(loc="upper left", ncol=min(4, len(s["rss"]) + 1), fontsize="small")
    memory.set_xlabel("elapsed minutes")
    memory.set_xlim(left=0, right=max(x[-1], 1 / 6))
