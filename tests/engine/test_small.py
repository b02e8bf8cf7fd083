"""engine/small.py: a small range materialises nothing (no Spark job keeps its rows behind the watermark) and its
outputs still equal the reference model's, on tumbling and sliding windows with lateness, through both firing paths
(aggregates that combine, and ones that do not)."""
from __future__ import annotations

import dataclasses

import pytest
from pyspark.sql import functions as F

from engine_harness import ROW_SCHEMA, engine_outputs, first_difference, reference_outputs
from event_replay.engine.small import SMALL_ROWS, is_small
from event_replay.engine.windows.fixed import FixedRows
from event_replay.semantics.config import parse_config, to_raw
from event_replay.semantics.reference import replay
from event_replay.spark_jobs import counted
from strategies import random_case

WINDOWS = [{"type": "tumbling", "size": 2000, "allowed_lateness": 2000},
           {"type": "sliding", "size": 4000, "slide": 1000, "allowed_lateness": 500}]
AGGREGATES = [{"cnt": "count(*)", "total": "sum(value)"}, {"mean": "avg(value)", "top": "max(value)"}]


def test_small_is_a_known_bound_up_to_small_rows():
    assert is_small(0) and is_small(SMALL_ROWS)
    assert not is_small(SMALL_ROWS + 1)
    assert not is_small(None)  # unknown: never small


def _case(seed: int, window: dict, aggregations: dict):
    case = random_case(seed, max_rows=250, max_splits=4)
    raw = to_raw(case.cfg)
    raw["window"], raw["aggregations"] = window, aggregations
    return dataclasses.replace(case, cfg=parse_config(raw))


@pytest.mark.spark
@pytest.mark.parametrize("n", range(len(WINDOWS)))
def test_a_small_range_equals_the_reference(spark, n):
    case = _case(70 + n, WINDOWS[n], AGGREGATES[n])
    declared = case.declared_splits if case.cfg.source.splits is not None else None
    result = replay(case.rows, case.cfg, declared_splits=declared)
    expected = reference_outputs(result, case.cfg)
    got = engine_outputs(spark, case.rows, case.cfg, declared, rows_at_most=len(case.rows))
    assert got == expected, f"seed {case.seed}: {first_difference(got, expected)}"
    assert result.late_rows or any(f.fire_reason == "late_row" for f in result.firings)  # rows behind: not vacuous


@pytest.mark.spark
def test_a_small_range_keeps_no_rows_behind_in_a_job(spark):
    case = _case(71, WINDOWS[0], AGGREGATES[0])
    rows = spark.createDataFrame([(r.split, r.offset, r.arrival_time, r.event_time, r.key, r.payload.get("value"))
                                  for r in case.rows], ROW_SCHEMA).withColumn(
        "wm_before", F.col("event_time") + F.when(F.col("offset") % 2 == 0, 6000).otherwise(-3000))  # half of them late
    cols = [c for c in rows.columns if c != "wm_before"]
    with counted(spark, "small") as small:
        scanned = FixedRows(rows, case.cfg, cols, rows_at_most=len(case.rows))
    with counted(spark, "unbounded") as unbounded:
        kept = FixedRows(rows, case.cfg, cols)
    assert (small.jobs, unbounded.jobs) == (0, 1)
    assert scanned.late_bound == len(case.rows) >= kept.late_bound  # tumbling: one window per row
    late = sorted(map(tuple, scanned.late_rows.collect()))
    assert late and late == sorted(map(tuple, kept.late_rows.collect()))
