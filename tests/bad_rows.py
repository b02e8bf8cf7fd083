"""The bad-rows fixture (tests/fixtures/bad_rows.csv: one row of each quarantine reason, some late, some skipped)
and what the tests that replay it share."""
from __future__ import annotations

import csv
import sys
from pathlib import Path

from pyspark.sql import Window
from pyspark.sql import functions as F

DATA = Path(__file__).resolve().parent / "fixtures"
REPLAY = str(Path(sys.executable).parent / "replay")
DAY = "2024-01-01"




def bad_rows_cfg(source, out, **extra):
    raw = {
        "source": {"path": str(source), "format": "csv", "splits": ["p0", "p1"]},
        "watermark": {"max_out_of_orderness": "1s", "interval": "200ms"},
        "window": {"type": "tumbling", "size": "10s"},
        "aggregations": {"cnt": "count(*)"},
        "replay": {"start": f"{DAY}T00:00:00Z", "end": f"{DAY}T01:00:00Z", "end_of_input": "flush"},
        "output": {"path": str(out)},
    }
    for k, v in extra.items():
        raw[k].update(v)
    return raw


def expected_rows():
    with open(DATA / "bad_rows.csv", newline="") as f:
        return list(csv.DictReader(f))


def held_by_windows(spark, windows_path) -> int:
    """Rows held by the windows, from the windows output alone: the count of each window's last firing."""
    w = spark.read.parquet(str(windows_path))
    last = Window.partitionBy("key", "window_start", "window_end").orderBy(F.col("fire_index").desc())
    return w.withColumn("rn", F.row_number().over(last)).filter("rn = 1").agg(F.sum("cnt")).first()[0] or 0
