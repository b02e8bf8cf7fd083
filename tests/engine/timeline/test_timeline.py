"""Stage 1, the watermark timeline (engine/timeline/__init__.py, compute_timeline), against the reference model."""
from __future__ import annotations

from hypothesis import HealthCheck, given, settings

from strategies import cases
from timeline_cases import run_timeline


@settings(max_examples=10, derandomize=True, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(case=cases())
def test_matches_reference(spark, case):
    got, want = run_timeline(spark, case.rows, case.cfg, case.declared_splits)
    assert got[0] == want[0], "wm_before"
    assert got[1] == want[1], "watermarks"
    assert got[2] == want[2], "stream_values"
