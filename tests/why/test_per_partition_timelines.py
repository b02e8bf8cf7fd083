"""A long range's why-report draws no panel of the whole range (issue 48): its "Watermark timelines" section names
the partitions with the most late rows, each linked to its own page once drawn (`replay why --partition D`), else
with the command that draws it; a short range keeps its one panel (test_page.py)."""
from __future__ import annotations

import re

from event_replay.why.page import WORST_DRAWN, render


def _summary(days: int, drilled: list[str]) -> dict:
    parts = [{"partition": f"2024-03-{d:02d}", "rows_read": 10, "late_rows": d % 4, "firings": 3}
             for d in range(1, days + 1)]
    return {"partitions": parts, "counts": {"rows_read": 10 * days}, "late_rows": sum(p["late_rows"] for p in parts),
            "timelines_png": None, "spans": [], "drilled": drilled,
            "watermark_lag_ms": {"mean": 640.2, "p99": 1800}, "idle": {"p0": {"idle_periods": 0, "idle_ms": 0}}}


def test_the_worst_partitions_link_their_timelines_or_say_how_to_draw_them():
    page = render(_summary(40, ["2024-03-03", "2024-03-20"]))
    assert "timelines-png" not in page and "timelines.png" not in page
    section = re.search(r"<ul id='timeline-pages'>(.*?)</ul>", page).group(1)
    items = re.findall(r"<li>(.*?)</li>", section)
    assert len(items) == WORST_DRAWN
    # 3 late rows: days 3, 7, 11, 15, 19 (by name among equals); day 3 drawn, the others with their command
    assert [re.search(r"2024-03-\d\d", i).group(0) for i in items] == [
        "2024-03-03", "2024-03-07", "2024-03-11", "2024-03-15", "2024-03-19"]
    assert items[0].startswith("<a href='partitions/2024-03-03/index.html'>")
    assert all("--partition 2024-03-" in i and "<a " not in i for i in items[1:])
    assert "Also drawn: <a href='partitions/2024-03-20/index.html'>2024-03-20</a>." in page
    assert "the lag is 640 ms on average" in page  # the range's lag still said
    served = render(_summary(40, ["2024-03-03"]), base="/replay-runs/files/x/why_report/")
    assert "href='/replay-runs/files/x/why_report/partitions/2024-03-03/index.html'" in served


def test_a_report_outside_the_outputs_names_where_its_partitions_are_drawn():
    """A DAG run's why-report is in its run folder: the command draws below it (--out), where its page links."""
    run = "/data/out/_airflow/manual__1/why_report"
    page = render({**_summary(40, []), "report_dir": run})
    assert f"--partition 2024-03-03 --out {run}/partitions/2024-03-03</code>" in page
    assert "--out" not in render(_summary(40, []))  # the outputs' own why_report/: the default place
