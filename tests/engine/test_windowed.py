"""The row filter's verdict at the windows stage (engine/windowed.py): with a verdict column, only the rows whose
verdict is true go on, without the column; without one, the rows pass as the very same DataFrame (a replay without
a filter keeps its plan). Through a whole replay: tests/io/test_io_row_filter.py, engine/test_filter_vs_reference.py."""
from __future__ import annotations

import pytest

from event_replay.engine.windowed import windowed_only
from event_replay.io.row_filter import WINDOWED

pytestmark = pytest.mark.spark


def test_without_a_verdict_the_rows_pass_unchanged(spark):
    rows = spark.createDataFrame([(1, "a"), (2, None)], "id INT, key STRING")
    assert windowed_only(rows) is rows


def test_only_rows_the_filter_keeps_reach_the_windows_without_the_verdict(spark):
    rows = spark.createDataFrame([(1, "a", True), (2, "b", False), (3, "c", None), (4, None, True)],
                                 f"id INT, key STRING, {WINDOWED} BOOLEAN")
    kept = windowed_only(rows)
    assert kept.columns == ["id", "key"]
    assert sorted((r.id, r.key) for r in kept.collect()) == [(1, "a"), (4, None)]  # a NULL verdict is not kept


def test_a_filter_that_keeps_nothing_leaves_an_empty_frame_of_the_same_columns(spark):
    rows = spark.createDataFrame([(1, False), (2, False)], f"id INT, {WINDOWED} BOOLEAN")
    kept = windowed_only(rows)
    assert kept.columns == ["id"] and kept.count() == 0
