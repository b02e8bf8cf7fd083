"""A comparison's summary read without Spark (compare/summary.py): the one line `replay compare` and make demo print,
percentages that never round onto 100 % or 0 %, and whether the comparison differs (a window of any class of
difference, or a late row on one side only; duplicates in the live output alone do not)."""
from __future__ import annotations

import pytest

from event_replay.compare.summary import comparison_line, differs, pct


def summary(**totals):
    t = {"windows": 10, "agreeing": 10, "differing": 0, "value_differs": 0, "replay_only": 0, "live_only": 0,
         "agreement_pct": 100.0, **totals}
    return {"totals": t, "page": "/out/compare/index.html"}


def test_the_line_names_every_count_and_the_page():
    s = summary(windows=8, agreeing=5, differing=3, value_differs=1, replay_only=2, agreement_pct=62.5)
    assert comparison_line(s) == ("compare: windows compared 8, equal 5, differing 3 (value 1, replay only 2, live only 0)"
                               ", agreement 62.50% -> /out/compare/index.html")


def test_duplicates_and_late_rows_are_said_only_when_there_are_some():
    line = comparison_line(summary(duplicate=2, late_matched=4, late_replay_only=1, late_live_only=0))
    assert ", duplicates 2, late rows matched 4, replay only 1, live only 0 ->" in line
    assert "duplicates" not in comparison_line(summary(duplicate=0))
    assert "late rows" not in comparison_line(summary())  # no live late output compared


def test_the_line_points_at_the_folder_when_no_page_was_written():
    s = summary()
    del s["page"]
    s["out_dir"] = "/out/compare"
    assert comparison_line(s).endswith("-> /out/compare")


@pytest.mark.parametrize("totals, expected", [
    ({}, False),
    ({"duplicate": 3, "agreeing": 10}, False),  # an at-least-once sink's copies: not a difference
    ({"late_matched": 5, "late_replay_only": 0, "late_live_only": 0}, False),
    ({"differing": 1, "value_differs": 1}, True),
    ({"differing": 1, "live_only": 1}, True),
    ({"late_replay_only": 1}, True),
    ({"late_live_only": 2}, True),
])
def test_differs(totals, expected):
    assert differs(summary(**totals)) is expected


@pytest.mark.parametrize("v, text", [
    (None, "-"), (0, "0.00%"), (99.8333, "99.83%"), (99.994, "99.99%"), (100.0, "100%"), (100, "100%"),
    # Two decimals would say 100.00% or 0.00%: more digits, until the figure is not rounded onto the bound.
    (99.995, "99.995%"), (99.9951, "99.995%"), (99.9999, "99.9999%"), (99.99999, "99.99999%"),
    (0.004, "0.004%"), (0.0049, "0.005%"), (0.00001, "0.00001%"),
    (100 - 1e-12, "< 100%"), (1e-12, "> 0%"),  # closer than any digits shown: said in words
])
def test_pct(v, text):
    assert pct(v) == text


def test_the_line_never_says_100_for_a_window_that_differs():
    s = summary(windows=100_000, agreeing=99_999, differing=1, value_differs=1, agreement_pct=99.999)
    assert "agreement 99.999% ->" in comparison_line(s)
