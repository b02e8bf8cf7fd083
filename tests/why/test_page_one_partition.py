"""A drill-down page of one partition says so (issue 48's screenshot pass): "in partition D", not "over 1 partition
(D to D)"; the range's sentence is test_page.py's."""
from __future__ import annotations

from event_replay.why.page import glance


def test_one_partition_reads_as_one():
    s = {"counts": {"rows_read": 20}, "partitions": [{"partition": "2024-02-28"}], "firings": 12, "windows": 12,
         "late_rows": 3, "late_rows_by_split_and_cause": [{"split": "p0", "cause": "p1", "rows": 3}]}
    assert glance(s) == ("20 rows read in partition 2024-02-28: 12 firings of 12 windows, 3 late rows (15.00% of the "
                         "rows read); most late rows saw a watermark that split p1 had set.")


def test_one_partition_has_no_second_total_row():
    """A busy hour or a drilled day: its row is its total; an unpartitioned output's one row reads "total"."""
    import re

    from event_replay.why.page import render

    row = {"partition": "2024-05-01T06", "rows_read": 20000, "late_rows": 108, "firings": 351}
    page = render({"counts": {"rows_read": 20000, "late_rows": 108}, "firings": 351, "partitions": [row]})
    body = re.search(r"<table id='partitions'>.*?<tbody>(.*?)</tbody>", page).group(1)
    assert body.count("<tr") == 1 and "2024-05-01T06" in body and "class='total'" not in body
    page = render({"counts": {"rows_read": 20}, "firings": 3, "partitions": [{"partition": None, "rows_read": 20}]})
    body = re.search(r"<table id='partitions'>.*?<tbody>(.*?)</tbody>", page).group(1)
    assert re.findall(r"<td[^>]*>([^<]*)</td>", body)[:2] == ["total", "20"]
