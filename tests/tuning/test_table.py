"""The tuning table as people read it (tuning/table.py): durations in ms or s, shares in percent, '-' for a missing
figure, the live columns only when the grid ran against the live output, the same cells in Markdown and HTML."""
from __future__ import annotations

import pytest

from event_replay.tuning.table import (DISPLAY, LIVE_DISPLAY, display_columns, display_value, html_table,
                                      markdown_table, ms_text)


@pytest.mark.parametrize("v, text", [(None, "-"), (0, "0 ms"), (999, "999 ms"), (1000, "1.00 s"),
                                     (1234.5, "1.23 s"), (-2500, "-2.50 s"), (-20, "-20 ms")])
def test_ms_text(v, text):
    assert ms_text(v) == text


@pytest.mark.parametrize("col, v, text", [
    ("late_share", 0.01234, "1.234%"), ("live_score", 0.5, "50.00%"), ("live_agreement_pct", 99.5, "99.50%"),
    ("wm_lag_mean_ms", 2500, "2.50 s"), ("first_fire_delay_mean_ms", 12.0, "12 ms"),
    ("max_out_of_orderness_ms", 5000, "5000"),  # a setting, written as the config has it, not as a lag
    ("late_rows", 7, "7"), ("variant", "delay 1s, idle none, lateness 0ms", "delay 1s, idle none, lateness 0ms"),
    ("late_share", None, "-"), ("wm_lag_p99_ms", None, "-"),
])
def test_display_value(col, v, text):
    assert display_value(col, v) == text


ROWS = [{"variant": "delay 1s | idle none", "late_rows": 3, "late_share": 0.25, "wm_lag_mean_ms": 1500,
         "wm_lag_p99_ms": None}]


def test_live_columns_only_when_the_grid_ran_against_live():
    assert display_columns(ROWS) == DISPLAY
    assert display_columns([*ROWS, {**ROWS[0], "live_score": 0.9}]) == DISPLAY + LIVE_DISPLAY
    assert display_columns([]) == DISPLAY


def test_markdown_table_one_line_a_variant_and_no_stray_pipe():
    lines = markdown_table(ROWS).split("\n")
    assert len(lines) == 3 and lines[0].startswith("| variant | late rows | late share |")
    assert lines[1] == "| " + " | ".join("---" for _ in DISPLAY) + " |"
    cells = lines[2].strip("| ").split(" | ")
    assert cells[:5] == ["delay 1s / idle none", "3", "25.000%", "-", "1.50 s"] and len(cells) == len(DISPLAY)


def test_html_table_shows_the_same_cells_escaped():
    html = html_table([{**ROWS[0], "variant": "delay <1s>"}], table_id="grid")
    assert html.startswith("<table id='grid'>") and "<th>late share</th>" in html
    assert "delay &lt;1s&gt;" in html and "<td class='n'>25.000%</td>" in html and "<tr class='variant'>" in html
