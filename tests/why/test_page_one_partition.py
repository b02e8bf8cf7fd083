"""A drill-down page of one partition says so (issue 48's screenshot pass): "in partition D", not "over 1 partition
(D to D)"; the range's sentence is test_page.py's."""
from __future__ import annotations

from event_replay.why.page import glance


def test_one_partition_reads_as_one():
    s = {"counts": {"rows_read": 20}, "partitions": [{"partition": "2024-02-28"}], "firings": 12, "windows": 12,
         "late_rows": 3, "late_rows_by_split_and_cause": [{"split": "p0", "cause": "p1", "rows": 3}]}
    assert glance(s) == ("20 rows read in partition 2024-02-28: 12 firings of 12 windows, 3 late rows (15.00% of the "
                         "rows read); most late rows saw a watermark that split p1 had set.")
