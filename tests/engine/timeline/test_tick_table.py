"""engine/timeline/tick_table.py: the tick a row is published at and the per-(split, tick) table, from the rows,
from the read's partials and by hand, all equal (side inputs only in the row ticks and the event-time range)."""
from __future__ import annotations

import pyarrow as pa
import pytest
from pyspark.sql import functions as F

from event_replay.engine.timeline import tick_table

# split, arrival_time, event_time; "side" is not a main split
ROWS = [("a", 0, 10), ("a", 150, 40), ("a", 200, 5), ("b", 90, 70), ("a", 420, 300), ("side", 610, 900),
        ("b", -30, -20)]
MAIN = ["a", "b"]


def _published(arrival: int, first: int, interval: int) -> int:
    return max(first, -(-arrival // interval) * interval)


@pytest.mark.spark
def test_a_row_is_published_at_the_first_tick_at_or_after_it(spark):
    df = spark.createDataFrame([(a,) for _, a, _ in ROWS], "arrival_time long")
    got = [r[0] for r in df.select(tick_table.publish_tick(F.col("arrival_time"), 0, 200)).collect()]
    assert got == [_published(a, 0, 200) for _, a, _ in ROWS] == [0, 200, 200, 200, 600, 800, 0]


def _by_hand(first: int, interval: int):
    groups: dict[tuple[int, int], int] = {}
    for s, a, e in ROWS:
        if s in MAIN:
            k = (MAIN.index(s), _published(a, first, interval))
            groups[k] = max(groups.get(k, e), e)
    keys = sorted(groups)
    return keys, [groups[k] for k in keys], sorted({_published(a, first, interval) for _, a, _ in ROWS})


def _as_lists(table: tick_table.TickTable):
    return (list(zip(table.split.tolist(), table.tick.tolist())), table.max_event_time.tolist(),
            table.row_ticks.tolist(), (table.min_event_time, table.max_event_time_all))


@pytest.mark.spark
def test_the_tick_table_from_rows_equals_the_one_by_hand(spark):
    df = spark.createDataFrame(ROWS, "split string, arrival_time long, event_time long")
    keys, maxima, row_ticks = _by_hand(0, 200)
    assert _as_lists(tick_table.collect_tick_table(df, MAIN, 0, 200, limit=100)) == (keys, maxima, row_ticks, (-20, 900))
    entries = len({(s, _published(a, 0, 200)) for s, a, _ in ROWS})  # every split's entries count for the bound
    assert tick_table.collect_tick_table(df, MAIN, 0, 200, limit=entries) is not None
    assert tick_table.collect_tick_table(df, MAIN, 0, 200, limit=entries - 1) is None


def test_the_tick_table_from_partials_equals_the_one_by_hand():
    # the read's partials: several entries per (split, tick), ticks before the first one not yet clamped
    entries = [(s, -(-a // 200) * 200, e, e) for s, a, e in ROWS] + [("a", 200, 1, 1)]
    table = pa.table({"split": [x[0] for x in entries], "tick": pa.array([x[1] for x in entries], pa.int64()),
                      "max_event_time": pa.array([x[2] for x in entries], pa.int64()),
                      "min_event_time": pa.array([x[3] for x in entries], pa.int64())})
    keys, maxima, row_ticks = _by_hand(200, 200)  # the first tick after some rows' ticks
    assert _as_lists(tick_table.combine_partials(table, MAIN, 200, 100)) == (keys, maxima, row_ticks, (-20, 900))
    assert tick_table.combine_partials(table, MAIN, 200, len(keys) - 1) is None
