"""report.html of a long history reads at once (issue 48): the totals in one line above the table, and a table of
more than a month of partitions folded under them (a month's stays open)."""
from __future__ import annotations

import datetime as dt
import re

from event_replay.orchestration.report_page import FOLD_ABOVE, render_html


def _report(days: int) -> dict:
    first = dt.date(2024, 1, 1)
    parts = [{"partition": (first + dt.timedelta(days=i)).isoformat(),
              "rows": {"windows": 10, "late_events": i % 3, "watermarks": 30, "quarantine": 0, "counts": 1},
              "missing_outputs": [], "state": None} for i in range(days)]
    totals = {ds: sum(p["rows"][ds] for p in parts) for ds in parts[0]["rows"]}
    return {"run_id": "manual__1", "dag_id": "event_time_backfill", "output_path": "/runs/out", "partitions": parts,
            "totals": totals}


def test_a_year_shows_its_totals_first_and_folds_the_partitions():
    page = render_html(_report(366), "/runs/out/_airflow/manual__1")
    line = re.search(r"<p id='report-totals'>(.*?)</p>", page).group(1)
    assert re.sub("<[^>]+>", "", line) == ("366 partitions (2024-01-01 to 2024-12-31): 3,660 firings, 366 late rows, "
                                          "10,980 watermark rows, 0 quarantined rows, 366 count rows.")
    assert page.index("report-totals") < page.index("<details><summary>Every partition (366)</summary>") \
        < page.index("id='report-partitions'")


def test_a_month_keeps_its_table_open():
    page = render_html(_report(FOLD_ABOVE), "/runs/out/_airflow/manual__1")
    assert "<details>" not in page and "id='report-partitions'" in page
    assert f"{FOLD_ABOVE} partitions (2024-01-01 to 2024-01-31)" in page
