"""The whole Spark engine (timeline then windows) equals the reference model on generated logs."""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings

from engine_harness import engine_outputs, first_difference, reference_outputs
from event_replay.semantics.reference import replay
from strategies import cases, random_case


def check(spark, case):
    declared = case.declared_splits if case.cfg.source.splits is not None else None
    expected = reference_outputs(replay(case.rows, case.cfg, declared_splits=declared), case.cfg)
    got = engine_outputs(spark, case.rows, case.cfg, declared)
    assert got == expected, f"seed {case.seed}: {first_difference(got, expected)}"


@pytest.mark.parametrize("seed", [3, 2024])
def test_fixed_seeds(spark, seed):
    check(spark, random_case(seed, max_rows=300, max_splits=8))


@settings(max_examples=10, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(case=cases(max_rows=150))
def test_engine_equals_reference(spark, case):
    check(spark, case)
