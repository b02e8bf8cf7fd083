"""engine/contract.py: the stages' contract held by a real replay: the watermarks output has WATERMARKS_SCHEMA's
columns and types, the firings and late rows their documented columns, and the carried split state
SPLIT_STATE_SCHEMA's (none for a clock without an id: no state is kept)."""
from __future__ import annotations

import pytest
from pyspark.sql import types as T

from event_replay import engine
from event_replay.engine.contract import SPLIT_STATE_SCHEMA, STREAM_VALUES_SCHEMA, WATERMARKS_SCHEMA, Timeline
from event_replay.history.partitions import Clock
from event_replay.semantics import durations
from event_replay.engine import contract
from engine_harness import ROW_SCHEMA
from source_logs import make_cfg

pytestmark = pytest.mark.spark


def _types(schema: T.StructType) -> list[tuple[str, T.DataType]]:
    return [(f.name, f.dataType) for f in schema.fields]


def test_the_infinities_are_the_semantics_ones():
    assert (contract.NEG_INF, contract.POS_INF) == (durations.NEG_INF, durations.POS_INF)
    assert STREAM_VALUES_SCHEMA.fieldNames() == ["watermark"]
    assert Timeline(rows=None, watermarks=None, stream_values=None).known_stream_values is None


def test_a_replay_keeps_the_stages_contract(spark, tmp_path):
    cfg = make_cfg(tmp_path / "in")
    rows = spark.createDataFrame([("a", 0, 1000, 1000, "k", 1), ("a", 1, 2000, 15000, "k", 2),
                                  ("a", 2, 2500, 500, "k", 3)], ROW_SCHEMA)  # the last row is late
    result, carry = engine.replay(spark, rows, cfg, ["a"], Clock(0, 30000, "p"))
    try:
        assert _types(result.watermarks.schema) == _types(WATERMARKS_SCHEMA)
        assert result.windows.columns == ["key", "window_start", "window_end", "fire_index", "fire_watermark",
                                          "fire_reason", "cnt"]
        assert result.late_events.columns == [*ROW_SCHEMA.fieldNames(), "late_watermark"]
        assert [(r["split"], r["offset"]) for r in result.late_events.collect()] == [("a", 2)]
        assert _types(carry.split_states.schema) == _types(SPLIT_STATE_SCHEMA)
        assert carry.splits == ["a"]
        assert engine.replay(spark, rows, cfg, ["a"], Clock(0, 30000))[1] is None  # no id: no state kept
    finally:
        engine.release(spark)
