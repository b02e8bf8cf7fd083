"""The why-report page rendered from a summary: one scope (the totals row is the sum of the partitions), the
one-line reading of it, and links that point at files the report has."""
from __future__ import annotations

import re

from event_replay.why.page import glance, render

SUMMARY = {
    "output_path": "/out/demo", "counts": {"rows_read": 15000, "rows_in_windows": 14935, "late_rows": 65,
                                           "quarantined_rows": 0, "skipped_rows": 0},
    "partitions": [{"partition": f"2024-01-0{i}", "rows_read": 5000, "rows_in_windows": 5000 - n, "late_rows": n,
                    "quarantined_rows": 0, "skipped_rows": 0, "firings": f}
                   for i, n, f in ((1, 19, 81), (2, 22, 87), (3, 24, 100))],
    "firings": 268, "firings_by_reason": {"watermark": 245, "late_row": 15, "end_of_input": 8}, "windows": 253,
    "splits": ["p0", "p1"], "late_rows": 65, "windows_by_holder": {"p0": 250, "end of input": 3},
    "late_rows_by_split_and_cause": [{"split": "p1", "cause": "p0", "rows": 60},
                                     {"split": "p0", "cause": "all-idle jump", "rows": 5}],
    "idle": {"stream": {"idle_periods": 2, "idle_ms": 3_600_000}},
    "window_holders_file": "window_holders.parquet",
    "timelines_png": {"file": "timelines.png", "width": 1200, "height": 700, "data": "timelines.parquet"},
    "spans": [{}, {}, {}], "tuning": [],
}


def test_totals_row_and_glance_are_the_range():
    page = render(SUMMARY)
    total = re.search(r"<tr class='total'>(.*?)</tr>", page).group(1)
    assert re.findall(r">([^<>]+)</td>", total) == ["total", "15,000", "14,935", "65", "0", "0", "268"]
    assert glance(SUMMARY) == ("15,000 rows read over 3 partitions (2024-01-01 to 2024-01-03): 268 firings of 253 "
                               "windows, 65 late rows (0.43% of the rows read); most late rows saw a watermark that "
                               "split p0 had set.")


def test_links_are_relative_to_the_report_folder_or_prefixed():
    page = render(SUMMARY)
    targets = set(re.findall(r"(?:href|src)='([^']+)'", page))
    assert targets == {"timelines.png", "timelines.parquet", "window_holders.parquet", "summary.json"}
    nav = "<a id='runs-link' href='/replay-runs/'>Replay runs</a>"
    served = render(SUMMARY, nav=nav, base="/replay-runs/files/demo/why_report/")
    assert nav in served
    assert {t for t in re.findall(r"(?:href|src)='([^']+)'", served) if t != "/replay-runs/"} == \
        {f"/replay-runs/files/demo/why_report/{t}" for t in targets}


def test_an_idle_share_near_but_not_at_the_bounds_does_not_read_as_all_or_nothing():
    from event_replay.why.page import _figure_text

    assert [_figure_text("idle_share", v) for v in (1.0, 0.9987, 0.25, 0.001, 0.0)] == [
        "100%", ">99%", "25%", "<1%", "0%"]
