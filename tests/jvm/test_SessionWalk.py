"""SessionWalk.java: session windows' pass over rows partitioned by key and sorted in replay order, each key walked
alone (KeyWalk, tested in test_KeyWalk.py); per fired window one element per row it holds (kind m, the window's id
= its creating row's split and offset), per late row one record (kind l); every record keeps its row's columns."""
from __future__ import annotations

import pytest
from pyspark.sql.types import LongType, StringType, StructField, StructType

pytestmark = pytest.mark.spark

MIN = -2 ** 63
SCHEMA = StructType([StructField("key", StringType()), StructField("split", StringType()),
                     StructField("offset", LongType()), StructField("event_time", LongType()),
                     StructField("wm_before", LongType()), StructField("payload", StringType())])
PASS = ["kind", "__wid_split", "__wid_offset", "__ws", "__we", "__pos", "fire_index", "fire_reason",
        "fire_watermark"]


def _walk(java, rows, gap=10, lateness=0):
    df = java.spark.createDataFrame(rows, SCHEMA).coalesce(1)
    return java.frame(java.jvm.io.eventreplay.spark.SessionWalk.walk(df._jdf, gap, lateness, "pending",
                                                                     "late_row"))


def test_the_output_is_the_input_columns_then_the_pass(java):
    out = _walk(java, [])
    assert out.columns == SCHEMA.fieldNames() + PASS
    assert out.collect() == []


def test_each_key_is_walked_alone_and_each_row_of_a_fired_window_is_an_element(java):
    rows = [(None, "s0", 1, 0, MIN, "n"),
            ("k1", "s0", 1, 0, MIN, "x"), ("k1", "s1", 7, 10, MIN, "y"),  # touching: one window, made by row y
            ("k2", "s0", 2, 0, MIN, "z")]  # same times, another key: a window of its own
    got = [tuple(r) for r in _walk(java, rows).collect()]
    assert got == [
        (None, "s0", 1, 0, MIN, "n", "m", "s0", 1, 0, 10, 1, 0, "pending", None),
        ("k1", "s0", 1, 0, MIN, "x", "m", "s1", 7, 0, 20, 1, None, None, None),
        ("k1", "s1", 7, 10, MIN, "y", "m", "s1", 7, 0, 20, 2, 0, "pending", None),
        ("k2", "s0", 2, 0, MIN, "z", "m", "s0", 2, 0, 10, 1, 0, "pending", None),
    ]


def test_late_rows_and_late_firings(java):
    rows = [("k", "s0", 1, 0, MIN, "a"),
            ("k", "s0", 2, 0, 9, "b"),  # the timer fired at 9; within lateness: a late firing
            ("k", "s0", 3, 0, 20, "c")]  # past cleanup (9 + 5): a late row
    got = [tuple(r)[5:] for r in _walk(java, rows, lateness=5).collect()]
    assert got == [
        ("a", "m", "s0", 1, 0, 10, 1, 0, "pending", None),
        ("b", "m", "s0", 1, 0, 10, 2, 1, "late_row", 9),
        ("c", "l", None, None, None, None, None, None, None, 20),
    ]


@pytest.mark.parametrize("gap, lateness, message", [
    (0, 0, "gap must be positive, got 0"), (10, -1, "lateness must not be negative, got -1")])
def test_bad_rules_are_refused(java, gap, lateness, message):
    df = java.spark.createDataFrame([], SCHEMA)
    with pytest.raises(Exception, match=message):
        java.jvm.io.eventreplay.spark.SessionWalk.walk(df._jdf, gap, lateness, "pending", "late_row")
