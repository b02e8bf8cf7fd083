"""Periodic emission as DataFrames (engine/timeline/periodic_spark.py), forced for every case, against the
reference model."""
from __future__ import annotations

from hypothesis import HealthCheck, given, settings

from event_replay.engine.timeline import tick_table as tick_timeline
from strategies import cases
from timeline_cases import run_timeline


@settings(max_examples=10, derandomize=True, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(case=cases())
def test_spark_path_matches_reference(spark, case):
    """Periodic timelines too large for the driver go through the Spark path: forced here (bound 0)."""
    saved, tick_timeline.DRIVER_GROUPS_MAX = tick_timeline.DRIVER_GROUPS_MAX, 0
    try:
        got, want = run_timeline(spark, case.rows, case.cfg, case.declared_splits)
    finally:
        tick_timeline.DRIVER_GROUPS_MAX = saved
    assert got == want
