"""The batches the suites run on (quality/prepare.py): every time as epoch ms, the config as `cfg_*` columns, the
one-row accounting batch beside the outputs it counts, the last firing of each window (a session swallowed by a
larger one left out), and the partitions of a `dt=` history. The suites on them: test_expectations.py."""
from __future__ import annotations

import datetime as dt

import pytest
from pyspark.sql import functions as F
from pyspark.sql import types as T

from event_replay.quality.prepare import OutputsMissing, count_star_column, last_firings, partition_ids, prepare, \
    to_ms, windows_per_row
from event_replay.semantics.config import parse_config
from event_replay.semantics.reference import replay
from quality_outputs import write_case
from strategies import random_case

pytestmark = pytest.mark.spark


def _cfg(window: dict, aggregations: dict | None = None):
    return parse_config({"source": {"path": "unused"}, "window": window,
                         "watermark": {"max_out_of_orderness": "1s"},
                         "aggregations": aggregations or {"total": "sum(value)", "n": "COUNT( * )"},
                         "output": {"path": "unused"}})


def test_the_count_star_aggregate_and_windows_per_row():
    assert count_star_column(_cfg({"type": "tumbling", "size": "10s"})) == "n"
    assert count_star_column(_cfg({"type": "tumbling", "size": "10s"}, {"n": "count(value)"})) is None
    assert windows_per_row(_cfg({"type": "sliding", "size": "10s", "slide": "3s"})) == 4
    assert windows_per_row(_cfg({"type": "sliding", "size": "10s", "slide": "5s"})) == 2
    assert windows_per_row(_cfg({"type": "session", "gap": "10s"})) == 1


def test_every_time_type_becomes_epoch_ms(spark):
    ts = dt.datetime(2024, 1, 1, 0, 0, 1, 500_000, tzinfo=dt.timezone.utc)
    df = spark.createDataFrame([(ts, "1704067201500", " 2024-01-01T00:00:01.500Z ", 1704067201500)],
                               "t timestamp, s1 string, s2 string, n long")
    got = df.select(*[to_ms(F.col(c), df.schema[c].dataType).alias(c) for c in df.columns]).first()
    assert tuple(got) == (1704067201500,) * 4
    assert spark.range(1).select(to_ms(F.lit("soon"), T.StringType())).first()[0] is None


def test_last_firings_leave_out_a_session_swallowed_by_a_larger_one(spark):
    cfg = _cfg({"type": "session", "gap": "10s"})
    rows = [("a", 0, 20, 0, 2), ("a", 0, 20, 1, 3), ("a", 5, 15, 0, 1), ("a", 30, 40, 0, 4), ("b", 5, 15, 0, 6)]
    windows = spark.createDataFrame(
        [(k, s, e, i, "watermark", e - 1, n) for k, s, e, i, n in rows],
        "key string, window_start long, window_end long, fire_index int, fire_reason string, fire_watermark long, "
        "n long")
    every, last = last_firings(windows, cfg)
    assert sorted(tuple(r) for r in every.collect()) == [("a", 0, 20, 3), ("a", 5, 15, 1), ("a", 30, 40, 4),
                                                         ("b", 5, 15, 6)]
    assert sorted(tuple(r) for r in last.collect()) == [("a", 0, 20, 3), ("a", 30, 40, 4), ("b", 5, 15, 6)]
    assert last_firings(windows.drop("n"), cfg) is None  # no count(*) column


def test_last_firings_of_cumulate_windows_keep_the_longest_of_each_start(spark):
    """A row is in every cumulate window of its start that ends after it: of nested windows only the longest written
    one counts for the upper bound (keyless: the null key is one key). With a HAVING the longest may be dropped."""
    cfg = _cfg({"type": "cumulate", "size": "20s", "step": "5s"})
    rows = [(None, 0, 5, 1), (None, 0, 10, 2), (None, 0, 20, 4), (None, 20, 25, 1), (None, 20, 30, 3)]
    windows = spark.createDataFrame(
        [(k, s, e, 0, "watermark", e - 1, n) for k, s, e, n in rows],
        "key string, window_start long, window_end long, fire_index int, fire_reason string, fire_watermark long, "
        "n long")
    every, last = last_firings(windows, cfg)
    assert every.count() == 5
    assert sorted(tuple(r)[1:] for r in last.collect()) == [(0, 20, 4), (20, 30, 3)]


def test_partition_ids_of_a_dt_history_in_order(spark):
    days = spark.createDataFrame([("2024-01-02",), ("2024-01-01",), ("2024-01-02",)], "dt string")
    assert partition_ids(days) == ["2024-01-01", "2024-01-02"]
    hours = spark.createDataFrame([("2024-01-01", 10), ("2024-01-01", 9)], "dt string, hour int")
    assert partition_ids(hours) == ["2024-01-01T09", "2024-01-01T10"]
    assert partition_ids(spark.createDataFrame([(1,)], "rows_read long")) == []


def test_the_batches_of_a_written_output_count_what_it_holds(spark, tmp_path):
    case = next(c for c in map(random_case, range(3000)) if c.cfg.window.type == "tumbling"
                and len(replay(c.rows, c.cfg, declared_splits=c.declared_splits).late_rows) >= 1)
    cfg, tables = write_case(case, tmp_path / "out")
    batches = prepare(spark, str(tmp_path / "out"), cfg)
    assert batches.partitions == []  # one run, not partitioned
    acc = batches.accounting.first().asDict()
    counts = tables["counts"].iloc[0]
    for c in ("rows_read", "rows_in_windows", "late_rows", "quarantined_rows", "skipped_rows"):
        assert acc[c] == counts[c], c
    assert (acc["counts_rows"], acc["counts_partitions"], acc["quarantine_rows"], acc["quarantine_without_reason"]) \
        == (1, 1, 2, 0)
    assert acc["late_events_rows"] == len(tables["late_events"])
    assert acc["cfg_window_type"] == "tumbling" and acc["cfg_end_of_input"] == cfg.replay.end_of_input
    w = batches.windows.orderBy("key", "window_start_ms", "fire_index").toPandas()
    want = tables["windows"].sort_values(["key", "window_start", "fire_index"])
    assert list(w["window_start_ms"]) == [int(t.timestamp() * 1000) for t in want["window_start"]]
    assert set(w["cfg_size_ms"]) == {cfg.window.size_ms}
    late = batches.late_events.toPandas()
    assert sorted(late["offset"]) == sorted(tables["late_events"]["offset"])
    assert set(batches.by_suite()) == {"windows", "watermarks", "late_events", "accounting"}
    with pytest.raises(OutputsMissing, match="missing output datasets windows"):
        prepare(spark, str(tmp_path / "nothing"), cfg)
