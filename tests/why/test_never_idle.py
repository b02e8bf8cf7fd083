"""A split that was never idle says so (issue 48): not "1 idle period, 0 ms". In the figures, a stretch of no time
(a split marked idle at the replay clock's last moment, or active again at the same instant) is no idle period; on
the page, a series without an idle period reads "never idle"."""
from __future__ import annotations

import re

import pytest

from event_replay.why.page import idle_row, render


def test_the_idle_table_says_never_idle():
    summary = {"idle": {"p0": {"idle_periods": 2, "idle_ms": 65_000}, "p1": {"idle_periods": 0, "idle_ms": 0},
                        "stream": {"idle_periods": 0, "idle_ms": 0}},  # as summary.json has them: sorted
               "timelines_png": {"file": "timelines.png"}}
    page = render(summary)
    idle = re.search(r"<table id='idle'>(.*?)</table>", page).group(1)
    rows = [re.findall(r"<td[^>]*>([^<]*)</td>", r) for r in re.findall(r"<tr>(.*?)</tr>", idle)[1:]]
    assert rows == [["stream", "never idle", "\u2013"], ["p0", "2", "65.0 s"], ["p1", "never idle", "\u2013"]]
    assert idle_row("p1", {"idle_periods": 1, "idle_ms": 0})["idle periods"] == "never idle"


@pytest.mark.spark
def test_an_idle_mark_of_no_time_is_no_idle_period(spark):
    """p1 goes idle at the clock's last change (its stretch ends where it starts) and p0 goes idle and is active
    again in the same millisecond: neither was idle; p0's later idle second is one period of 1000 ms."""
    from event_replay.why.report import _idle_frame
    from event_replay.why.timelines import intervals

    rows = [(0, "split", "p0", False, 10), (0, "split", "p1", False, 10), (500, "split", "p0", True, None),
            (500, "split", "p0", False, 20), (2000, "split", "p0", True, None), (3000, "split", "p0", False, 30),
            (4000, "split", "p1", True, None)]
    wm = spark.createDataFrame(rows, "replay_time_ms long, scope string, split string, idle boolean, "
                                     "watermark_ms long")
    holders = spark.createDataFrame([], "W long, holder string")
    found = {r["series"]: (r["idle_periods"], r["idle_ms"]) for r in _idle_frame(intervals(wm, holders, 4000))
             .collect()}
    assert found == {"p0": (1, 1000)}
