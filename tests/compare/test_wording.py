"""How the comparison writes times, durations and counts (compare/wording.py): plain values and Spark columns."""
from __future__ import annotations

import pytest
from pyspark.sql import functions as F

from compare_frames import T0
from event_replay.compare.wording import fmt_duration, fmt_ms, n_or_0, plural, rows_text, utc
from event_replay.semantics.durations import NEG_INF, POS_INF

pytestmark = pytest.mark.spark


def test_plural_and_utc_and_durations():
    assert plural(1, "row", "rows") == "1 row"
    assert plural(0, "row", "rows") == "0 rows"
    assert plural(3, "window", "windows") == "3 windows"
    assert utc(None) == "?"
    assert utc(T0) == "2024-01-01 00:00:00"
    assert utc(T0 + 90_061_500) == "2024-01-02 01:01:01"  # 1 d 1 h 1 min 1.5 s: the milliseconds are cut
    assert fmt_duration(None) == "none"
    assert fmt_duration(120_000) == "2m"
    assert fmt_duration(1_500) == "1500ms"


def test_column_wording(spark):
    df = spark.createDataFrame([(1, T0 + 1_234, 5), (2, None, None), (3, POS_INF, 1), (4, NEG_INF, 0)],
                               "id int, t long, n long")
    got = {r.id: (r.t, r.n0, r.rows, r.was) for r in df.select(
        "id", fmt_ms(F.col("t")).alias("t"), n_or_0("n").alias("n0"), rows_text(F.col("n")).alias("rows"),
        rows_text(F.col("n"), "was").alias("was")).collect()}
    assert got[1] == ("2024-01-01 00:00:01.234", 5, "5 rows", "5 rows were")
    assert got[2] == ("?", 0, None, None)
    assert got[3] == ("+inf", 1, "1 row", "1 row was")
    assert got[4] == ("-inf", 0, "0 rows", "0 rows were")
