"""The server-side SVG charts: bars in proportion, every text escaped."""

import re

from annotation.agreement.charts import bar_chart_svg


def test_bars_have_heights_in_proportion_and_carry_their_values():
    svg = bar_chart_svg(chart_id="c", title="T", x_labels=["a", "b"], series=[("s", [10, 5])], y_max=10)
    heights = [float(h) for h in re.findall(r'class="bar"[^>]*height="([0-9.]+)"', svg)]
    assert len(heights) == 2 and abs(heights[0] - 2 * heights[1]) < 0.2
    assert 'data-value="10.0"' in svg and 'data-value="5.0"' in svg


def test_missing_values_draw_no_bar_and_two_series_get_a_legend():
    svg = bar_chart_svg(
        chart_id="c", title="T", x_labels=["a", "b"], series=[("one", [1, None]), ("two", [2, 3])]
    )
    assert svg.count('class="bar"') == 3
    assert ">one</text>" in svg and ">two</text>" in svg


def test_every_text_is_escaped():
    evil = '<script>alert("x")</script>'
    svg = bar_chart_svg(chart_id="c", title=evil, x_labels=[evil], series=[(evil, [1])])
    assert "<script>" not in svg
    assert "&lt;script&gt;" in svg


def test_an_empty_or_all_zero_chart_still_draws_axes():
    svg = bar_chart_svg(chart_id="c", title="T", x_labels=["a"], series=[("s", [0])])
    assert svg.startswith("<svg") and svg.endswith("</svg>")
    assert 'height="0.0"' in svg
