"""The site's charts (``fuzzer.website.svg``): an SVG line per series, broken where a value
is missing, a staircase for counts, text escaped; no data said in words."""

import math
import re

from fuzzer.website import svg


def _lines(text):
    return re.findall(r'points="([^"]*)"', text)


def test_no_data_is_said_in_words_escaped():
    assert svg.chart("a <b>", [], {"x": []}) == '<p class="empty">a &lt;b&gt;: no data yet.</p>'
    assert "no data yet" in svg.chart("t", [1.0], {"x": [None]})


def test_each_series_is_a_line_broken_where_a_value_is_missing():
    text = svg.chart("t <&>", [0, 1, 2, 3], {"a": [1, 2, None, 4], "b": [0, 0, 1, 1]})
    assert text.startswith("<svg") and text.endswith("</svg>") and "t &lt;&amp;&gt;" in text
    a_runs, b_runs = _lines(text)[:2], _lines(text)[2:]
    assert [len(r.split()) for r in a_runs] == [2, 1] and [len(r.split()) for r in b_runs] == [4]
    assert text.count('class="legend"') == 2 and svg.COLOURS[1] in text


def test_a_count_is_drawn_as_a_staircase():
    (line,) = _lines(svg.chart("t", [0, 1], {"hits": [1, 2]}, step=True))
    (first, flat, up) = line.split()
    assert flat.split(",")[1] == first.split(",")[1] and flat.split(",")[0] == up.split(",")[0]
    assert math.isclose(float(up.split(",")[1]), svg.MARGIN)  # the top of the scale


def test_ticks_read_as_numbers():
    assert svg._number(12.4) == "12" and svg._number(0.25) == "0.25" and svg._number(3.0) == "3"
    assert svg._span([2.0, 2.0]) == (1.5, 2.5) and svg._span([]) == (0.0, 1.0)
