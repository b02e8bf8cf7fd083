"""FixedWalk.java: tumbling and sliding windows' firings in one pass over elements sorted by (key, window, replay
order): the early elements' one timer firing (pending, index 0, at the last early element), then one late firing
per later element with everything so far, each with the running aggregates (Running, tested in test_Running.py)."""
from __future__ import annotations

import pytest
from pyspark.sql.types import DoubleType, LongType, StringType, StructField, StructType

pytestmark = pytest.mark.spark

MIN = -2 ** 63
SCHEMA = StructType([StructField("key", StringType()), StructField("__ws", LongType(), False),
                     StructField("__we", LongType(), False), StructField("arrival_time", LongType(), False),
                     StructField("wm_before", LongType(), False), StructField("v", DoubleType())])
AGGS = (["n", "n_v", "total"], ["count", "count", "sum"], ["*", "v", "v"])


def _walk(java, rows, aggs=AGGS):
    df = java.spark.createDataFrame(rows, SCHEMA).coalesce(1)
    return java.frame(java.jvm.io.eventreplay.spark.FixedWalk.walk(df._jdf, *aggs, True, "pending", "late_row"))


def test_the_output_columns(java):
    out = _walk(java, [])
    assert out.columns == ["key", "__ws", "__we", "__pos", "fire_index", "fire_reason", "fire_watermark",
                           "arrival_time", "n", "n_v", "total"]
    assert [f.nullable for f in out.schema.fields[-3:]] == [False, False, True]  # a sum is null before a value
    assert out.collect() == []


def test_early_elements_fire_once_at_the_last_of_them_and_each_later_one_fires_at_once(java):
    rows = [("a", 0, 10, 1, MIN, 1.0), ("a", 0, 10, 2, 8, 2.0),  # early: the watermark is below 9
            ("a", 0, 10, 3, 9, 4.0), ("a", 0, 10, 4, 12, None)]  # at or past the max timestamp: late
    assert [tuple(r)[3:] for r in _walk(java, rows).collect()] == [
        (2, 0, "pending", None, 2, 2, 2, 3.0),
        (3, 1, "late_row", 9, 3, 3, 3, 7.0),
        (4, 2, "late_row", 12, 4, 4, 3, 7.0),
    ]


def test_a_window_without_early_elements_starts_its_firings_at_index_0(java):
    rows = [("a", 10, 20, 5, 30, None), ("a", 10, 20, 6, 31, 1.0)]
    assert [tuple(r)[3:] for r in _walk(java, rows).collect()] == [
        (1, 0, "late_row", 30, 5, 1, 0, None),
        (2, 1, "late_row", 31, 6, 2, 1, 1.0),
    ]


def test_windows_and_keys_are_told_apart(java):
    """A new window starts at a new key or new bounds; a null key is a key; early-only windows fire at the end
    of their elements, the partition's last one at the end of input."""
    rows = [(None, 0, 10, 1, MIN, 1.0),
            ("b", 0, 10, 1, MIN, 1.0), ("b", 5, 15, 2, MIN, 2.0),  # sliding: same key, another window
            ("c", 5, 15, 3, MIN, 4.0), ("c", 5, 15, 4, MIN, 8.0)]  # same bounds, another key
    assert [tuple(r) for r in _walk(java, rows).collect()] == [
        (None, 0, 10, 1, 0, "pending", None, 1, 1, 1, 1.0),
        ("b", 0, 10, 1, 0, "pending", None, 1, 1, 1, 1.0),
        ("b", 5, 15, 1, 0, "pending", None, 2, 1, 1, 2.0),
        ("c", 5, 15, 2, 0, "pending", None, 4, 2, 2, 12.0),
    ]


def test_an_early_element_after_a_late_one_is_refused(java):
    rows = [("a", 0, 10, 1, 9, 1.0), ("a", 0, 10, 2, 3, 1.0)]  # the watermark went back: not replay order
    with pytest.raises(Exception, match="an early element after a late one in window \\[0, 10\\)"):
        _walk(java, rows).collect()


@pytest.mark.parametrize("aggs, message", [
    ((["n", "m"], ["count"], ["*"]), "one function and one column per aggregate name"),
    ((["n"], ["count"], ["*", "v"]), "one function and one column per aggregate name"),
    ((["m"], ["avg"], ["v"]), "the walk evaluates count, sum, min and max, not avg"),
])
def test_bad_aggregates_are_refused_before_the_pass(java, aggs, message):
    df = java.spark.createDataFrame([], SCHEMA)
    with pytest.raises(Exception, match=message):
        java.jvm.io.eventreplay.spark.FixedWalk.walk(df._jdf, *aggs, True, "pending", "late_row")
