"""engine/windows/fixed.py on cumulate windows (a row in windows of one start and growing ends, some of them fired
before the row, the longer ones still open, or late-accepted): the engine's firings and late rows equal the
reference model's, with aggregates that combine early and late firings (count, sum) and with ones that need the
walk (avg). Tumbling and sliding windows are held to the reference by tests/engine/test_vs_reference.py."""
from __future__ import annotations

import dataclasses

import pytest

from engine_harness import engine_outputs, first_difference, reference_outputs
from event_replay.semantics.config import parse_config, to_raw
from event_replay.semantics.reference import replay
from strategies import random_case

CUMULATE = [{"type": "cumulate", "size": 4000, "step": 1000, "allowed_lateness": 2000},
            {"type": "cumulate", "size": 6000, "step": 2000, "offset": 500, "allowed_lateness": 0},
            {"type": "cumulate", "size": 10000, "step": 1000, "allowed_lateness": 6000}]
AGGREGATES = [{"cnt": "count(*)", "total": "sum(value)"}, {"mean": "avg(value)", "top": "max(value)"}]


def cumulate_case(seed: int, window: dict, aggregations: dict):
    case = random_case(seed, max_rows=250, max_splits=5)
    raw = to_raw(case.cfg)
    raw["window"], raw["aggregations"] = window, aggregations
    return dataclasses.replace(case, cfg=parse_config(raw))


@pytest.mark.spark
@pytest.mark.parametrize("n", range(len(CUMULATE)))
def test_cumulate_windows_equal_the_reference(spark, n):
    case = cumulate_case(40 + n, CUMULATE[n], AGGREGATES[n % 2])
    declared = case.declared_splits if case.cfg.source.splits is not None else None
    result = replay(case.rows, case.cfg, declared_splits=declared)
    expected = reference_outputs(result, case.cfg)
    got = engine_outputs(spark, case.rows, case.cfg, declared)
    assert got == expected, f"seed {case.seed}: {first_difference(got, expected)}"
    # Not vacuous: windows of one start and several ends fired.
    assert len({(f.window_start, f.window_end) for f in result.firings}) > \
        len({f.window_start for f in result.firings}) > 0
