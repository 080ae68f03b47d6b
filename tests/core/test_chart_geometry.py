"""Chart geometry (core.charts) and its drawing by the templates in templates/core/."""

import re
from pathlib import Path

import numpy as np
import pytest
import scipy.stats
from django.template.loader import render_to_string

from core import charts
from core.charts import PALETTE, bar_chart, gaussian_kde, nice_step, short_label, tick_values, violin_chart

EVIL = "<script>alert(1)</script>"
ROOT = Path(__file__).resolve().parents[2]


def test_bars_have_heights_in_proportion_and_carry_their_values():
    chart = bar_chart(groups=["a", "b"], series=[("s", [10, 5])], y_max=10)
    first, second = chart.bars
    assert first.height == pytest.approx(2 * second.height, abs=0.2)
    assert first.y + first.height == second.y + second.height == chart.frame.baseline
    assert (first.value, first.text, second.text) == (10.0, "10", "5")
    assert first.height == pytest.approx(chart.frame.baseline - chart.frame.top, abs=0.1)  # 10 of 10


def test_missing_values_draw_no_bar_but_keep_their_place_and_two_series_get_a_legend():
    chart = bar_chart(groups=["a", "b"], series=[("one", [1, None]), ("two", [2, 3])])
    assert [bar.drawn for bar in chart.bars] == [True, True, False, True]
    assert [(bar.group, bar.series) for bar in chart.bars] == [
        ("a", "one"),
        ("a", "two"),
        ("b", "one"),
        ("b", "two"),
    ]
    assert chart.bars[2].text == "n/a" and chart.bars[2].height == 0
    assert [(e.name, e.colour) for e in chart.legend] == [("one", PALETTE[0]), ("two", PALETTE[1])]
    # the two bars of a group stand side by side inside the group
    assert chart.bars[0].x + chart.bars[0].width <= chart.bars[1].x < chart.bars[2].x


def test_an_all_zero_chart_still_has_an_axis_and_flat_bars():
    chart = bar_chart(groups=["a"], series=[("s", [0])])
    assert chart.bars[0].height == 0.0 and chart.bars[0].drawn
    assert [t.text for t in chart.frame.ticks] == ["0", "1"]
    empty = bar_chart(groups=[], series=[])
    assert empty.bars == () and empty.frame.ticks


def test_count_axis_ends_on_a_round_number_above_the_largest_value():
    chart = bar_chart(groups=["a", "b"], series=[("s", [88, 20])])
    assert [t.text for t in chart.frame.ticks] == ["0", "25", "50", "75", "100"]
    ys = [t.y for t in chart.frame.ticks]
    assert ys == sorted(ys, reverse=True) and ys[0] == chart.frame.baseline and ys[-1] == chart.frame.top


def test_percent_axis_runs_from_0_to_100_percent_with_a_chance_line_halfway():
    chart = bar_chart(groups=["run"], series=[("accuracy", [0.667])], percent=True, y_max=1.0, chance=0.5)
    assert [t.text for t in chart.frame.ticks] == ["0%", "25%", "50%", "75%", "100%"]
    assert chart.bars[0].text == "66.7%"
    assert chart.chance_y == pytest.approx((chart.frame.top + chart.frame.baseline) / 2, abs=0.1)
    assert bar_chart(groups=["run"], series=[("a", [0.5])]).chance_y is None


def test_values_outside_the_axis_are_clipped_to_it():
    chart = bar_chart(groups=["a", "b"], series=[("s", [1.7, -0.2])], percent=True, y_max=1.0)
    assert chart.bars[0].y == chart.frame.top and chart.bars[1].height == 0
    assert chart.bars[0].text == "170.0%"  # the number itself is not clipped


def test_long_group_labels_keep_both_ends_and_the_whole_text():
    name = "import-winowhy-votes-rater-1"
    chart = bar_chart(groups=[name], series=[("s", [1])])
    label = chart.labels[0]
    assert label.full == name and len(label.text) == charts.LABEL_CHARS
    assert label.text.startswith("import-") and label.text.endswith("rater-1") and "…" in label.text
    assert short_label("zoe") == "zoe"


def test_many_groups_widen_the_chart_so_each_keeps_room_for_its_label():
    narrow = bar_chart(groups=[str(i) for i in range(5)], series=[("s", [1] * 5)])
    wide = bar_chart(groups=[str(i) for i in range(200)], series=[("s", [1] * 200)])
    assert narrow.frame.width == 680
    assert wide.frame.width > 200 * 24
    centres = [label.x for label in wide.labels]
    assert min(b - a for a, b in zip(centres, centres[1:], strict=False)) >= 24 - 0.1


def test_the_first_long_label_stays_inside_the_drawing():
    for n in (1, 5, 40):
        chart = bar_chart(groups=["x" * 30] * n, series=[("s", [1] * n)])
        first = chart.labels[0]
        assert first.x - 5.3 * len(first.text) >= 0  # its far end, at about 6 px a character and -30 degrees
    short = bar_chart(groups=["a", "b"], series=[("s", [1, 2])])
    assert short.frame.left == 56


def test_one_palette_colours_the_series_in_order_and_cycles():
    series = [(f"s{i}", [1.0]) for i in range(len(PALETTE) + 1)]
    chart = bar_chart(groups=["g"], series=series)
    assert [bar.colour for bar in chart.bars] == [*PALETTE, PALETTE[0]]


def test_counts_get_whole_ticks_and_short_labels_leave_the_plot_more_room():
    counts = bar_chart(groups=["0.0", "0.2"], series=[("reasons", [9, 3])])
    assert [t.text for t in counts.frame.ticks] == ["0", "5", "10"]
    shares = bar_chart(groups=["a"], series=[("s", [0.9])])
    assert [t.text for t in shares.frame.ticks] == ["0.00", "0.25", "0.50", "0.75", "1.00"]
    long = bar_chart(groups=["x" * 30], series=[("s", [1])])
    assert counts.frame.baseline > long.frame.baseline and long.frame.height == counts.frame.height


def test_round_steps_and_ticks():
    assert nice_step(1.0) == 0.25
    assert nice_step(88) == 25
    assert nice_step(505) == 200
    assert nice_step(0) == 1.0
    assert nice_step(9, whole=True) == 5 and nice_step(1, whole=True) == 1 and nice_step(88, whole=True) == 25
    assert tick_values(0.07, 0.93, 0.2) == [0.2, 0.4, 0.6, 0.8]
    assert charts.format_number(0.4, 0.2) == "0.4" and charts.format_number(7.5, 2.5) == "7.5"
    assert charts.format_number(50.0, 25) == "50"


def test_kernel_density_matches_scipy():
    values = [0.1, 0.3, 0.35, 0.8, 0.5, 0.45]
    grid = np.linspace(-0.2, 1.2, 15)
    assert gaussian_kde(values, grid) == pytest.approx(list(scipy.stats.gaussian_kde(values)(grid)))
    assert gaussian_kde([], grid) == [0.0] * 15
    assert max(gaussian_kde([0.5, 0.5], [0.5])) > 0  # equal values: a spike, not a division by 0


def test_violin_chart_draws_one_violin_per_series_within_its_own_values():
    chart = violin_chart([("a<b", [0.1, 0.2, 0.3, 0.9]), ("empty", [])], title="x & y")
    full, empty = chart.violins
    assert (full.label, full.n, empty.n) == ("a<b", 4, 0)
    assert empty.median_y is None and full.median_y is not None
    assert full.q3_y is not None and full.q1_y is not None
    assert full.q3_y < full.median_y < full.q1_y  # higher values stand higher (smaller y)
    ys = [float(y) for y in re.findall(r",(-?[0-9.]+)", full.path)]
    frame = chart.frame
    assert frame.top <= min(ys) and max(ys) <= frame.baseline
    assert re.fullmatch(r"M[-0-9., L]+ Z", full.path)  # numbers only: nothing to escape
    assert full.x < empty.x and full.label_y > frame.baseline
    assert [t.text for t in frame.ticks] == ["0.2", "0.4", "0.6", "0.8"]


def test_violin_chart_of_equal_values_or_nothing_still_has_an_axis():
    assert violin_chart([("same", [0.5, 0.5, 0.5])]).frame.ticks
    chart = violin_chart([])
    assert chart.violins == () and chart.frame.ticks


# --------------------------------------------------------------------------- drawing


def test_the_bar_chart_template_escapes_crowd_written_labels_and_names():
    chart = bar_chart(
        chart_id="c", title=EVIL, groups=[EVIL], series=[(EVIL, [1.0]), ("two", [2.0])], y_label=EVIL
    )
    svg = render_to_string("core/_bar_chart.svg.html", {"chart": chart})
    assert EVIL not in svg and "<script" not in svg
    assert svg.count("&lt;script&gt;alert(1)&lt;/script&gt;") >= 5  # title, label, series, legend, axis
    assert svg.count('class="bar"') == 2 and 'data-value="2.0"' in svg
    assert 'data-chart="c"' in svg


def test_the_violin_template_escapes_its_labels_and_title():
    chart = violin_chart([(EVIL, [0.1, 0.2, 0.3])], title=EVIL)
    svg = render_to_string("core/_violin_chart.svg.html", {"chart": chart})
    assert EVIL not in svg and "<script" not in svg
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in svg
    assert svg.count("<path") == 1 and "n = 3" in svg


def test_charts_draw_with_dots_whatever_the_locale(settings):
    settings.LANGUAGE_CODE = "de"
    settings.USE_THOUSAND_SEPARATOR = True
    from django.utils import translation

    with translation.override("de"):
        svg = render_to_string(
            "core/_bar_chart.svg.html", {"chart": bar_chart(groups=["a"], series=[("s", [1234.5])])}
        )
    assert re.search(r'height="[0-9]+\.[0-9]"', svg) and 'data-value="1234.5"' in svg


def test_no_app_code_or_template_marks_text_safe():
    """Crowd-written text reaches pages only through auto-escaping (DESIGN section 10)."""
    offenders = []
    apps = ("annotation", "config", "core", "datasets", "evaluation", "releases", "templates")
    for path in (p for app in apps for p in (ROOT / app).rglob("*")):
        if path.suffix not in (".py", ".html"):
            continue
        found = len(
            re.findall(r"mark_safe\(|\|\s*safe\b|autoescape off|SafeString", path.read_text(encoding="utf-8"))
        )
        if found != ALLOWED_SAFE.get(str(path.relative_to(ROOT)), 0):
            offenders.append(str(path.relative_to(ROOT)))
    assert offenders == []


# The exceptions, counted: the release card's HTML and the docs pages (repository text, no
# crowd-written word in them), both made by markdown-it with raw HTML off (every character
# escaped by the renderer; tests/releases/test_bundle.py).
ALLOWED_SAFE = {"releases/views.py": 1, "core/docs.py": 1}
