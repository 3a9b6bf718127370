"""Line charts as inline SVG: a campaign's curves and a bug's hits over time, with no
plotting library and nothing fetched (the site opens from disk).

A chart is a few polylines over shared axes, each axis labelled with its range; NaN
breaks a line.  Every label is escaped: the text comes from the caller, and a series
name may come from an entry.
"""

from __future__ import annotations

import math
from html import escape

#: the chart's size in CSS pixels, and its margin for the axis labels
WIDTH, HEIGHT, MARGIN = 560, 200, 40
#: line colours, in the order the series come
COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b")


def _finite(values) -> list[float]:
    return [v for v in values if v is not None and not math.isnan(v)]


def _span(values: list[float]) -> tuple[float, float]:
    lo, hi = (min(values), max(values)) if values else (0.0, 1.0)
    return (lo, hi) if hi > lo else (lo - 0.5 if lo else 0.0, hi + 0.5 if hi else 1.0)


def _number(v: float) -> str:
    return f"{v:.0f}" if abs(v) >= 10 or v == int(v) else f"{v:.2g}"


def chart(title: str, x: list[float], series: dict[str, list[float]], x_label: str = "minutes",
          step: bool = False) -> str:
    """An SVG line chart of ``series`` (name -> values, one per ``x``); ``step``: draw
    each as a staircase (a count that changes at events)."""
    xs = _finite(x)
    ys = [v for values in series.values() for v in _finite(values)]
    if not xs or not ys:
        return f'<p class="empty">{escape(title)}: no data yet.</p>'
    (x0, x1), (y0, y1) = _span(xs), _span([0.0, *ys] if min(ys) >= 0 else ys)
    w, h = WIDTH - 2 * MARGIN, HEIGHT - 2 * MARGIN

    def px(v: float) -> float:
        return MARGIN + (v - x0) / (x1 - x0) * w

    def py(v: float) -> float:
        return HEIGHT - MARGIN - (v - y0) / (y1 - y0) * h

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" width="{WIDTH}" height="{HEIGHT}" '
             f'viewBox="0 0 {WIDTH} {HEIGHT}" role="img" aria-label="{escape(title)}">',
             f'<text x="{MARGIN}" y="16" class="title">{escape(title)}</text>',
             f'<line x1="{MARGIN}" y1="{HEIGHT - MARGIN}" x2="{WIDTH - MARGIN}" y2="{HEIGHT - MARGIN}" class="axis"/>',
             f'<line x1="{MARGIN}" y1="{MARGIN}" x2="{MARGIN}" y2="{HEIGHT - MARGIN}" class="axis"/>',
             f'<text x="{MARGIN}" y="{HEIGHT - MARGIN + 14}" class="tick">{_number(x0)}</text>',
             f'<text x="{WIDTH - MARGIN}" y="{HEIGHT - MARGIN + 14}" class="tick" text-anchor="end">'
             f'{_number(x1)} {escape(x_label)}</text>',
             f'<text x="{MARGIN - 4}" y="{HEIGHT - MARGIN}" class="tick" text-anchor="end">{_number(y0)}</text>',
             f'<text x="{MARGIN - 4}" y="{MARGIN + 4}" class="tick" text-anchor="end">{_number(y1)}</text>']
    for n, (name, values) in enumerate(series.items()):
        colour = COLOURS[n % len(COLOURS)]
        runs: list[list[str]] = [[]]
        last_y = None
        for xv, yv in zip(x, values):
            if yv is None or math.isnan(yv) or xv is None or math.isnan(xv):
                runs.append([])
                last_y = None
                continue
            if step and last_y is not None:
                runs[-1].append(f"{px(xv):.1f},{py(last_y):.1f}")
            runs[-1].append(f"{px(xv):.1f},{py(yv):.1f}")
            last_y = yv
        for run in runs:
            if run:
                parts.append(f'<polyline fill="none" stroke="{colour}" stroke-width="1.5" points="{" ".join(run)}"/>')
        parts.append(f'<text x="{WIDTH - MARGIN}" y="{MARGIN + 12 * n}" class="legend" text-anchor="end" '
                     f'fill="{colour}">{escape(name)}</text>')
    parts.append("</svg>")
    return "".join(parts)
