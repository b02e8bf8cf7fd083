"""What the outputs say about a firing and a late row (io/output.py, docs/semantics.md "Outputs").

+inf is not null: a firing at a stream watermark of +inf (every split idle, a side input declared) and an end-of-input
flush both have no timestamp, so the exact long goes next to it (fire_watermark_ms, late_watermark_ms), and only
the flush has a null one. A late row keeps every source column, also the event-time column that ingestion and
processing time do not read."""
from __future__ import annotations

import pytest

from event_replay.job import run_replay
from event_replay.semantics.durations import POS_INF
from source_logs import BASE, make_cfg, write_parquet

pytestmark = pytest.mark.spark

# p0 has two rows; the side input `rules` none. p0 goes idle at tick BASE+1600, so the stream moves to +inf (the
# side input), [BASE, BASE+1000) fires there, and p0's row at BASE+5000 is late at +inf.
LOG = {"split": ["p0", "p0"], "offset": [0, 1], "arrival_time": [BASE + 100, BASE + 5000],
       "event_time": [BASE + 100, BASE + 200], "key": ["k", "k"], "value": [1, 2]}
IDLE = {"emit": "periodic", "interval": 200, "idle_timeout": 1000, "max_out_of_orderness": 0}


def _replay(spark, tmp_path, name, table, window=(), **sections):
    src = write_parquet(tmp_path / f"{name}-log", table)
    cfg = make_cfg(src, out=tmp_path / f"{name}-out", window={"type": "tumbling", "size": 1000, **dict(window)},
                   **sections)
    run_replay(spark, cfg)
    out = tmp_path / f"{name}-out"
    return ([r.asDict() for r in spark.read.parquet(str(out / "windows")).collect()],
            [r.asDict() for r in spark.read.parquet(str(out / "late_events")).collect()])


def test_a_firing_at_plus_infinity_is_not_an_end_of_input_flush(spark, tmp_path):
    windows, late = _replay(spark, tmp_path, "inf", LOG, source={"side_inputs": ["rules"]}, watermark=IDLE)
    assert [(w["fire_reason"], w["fire_watermark"], w["fire_watermark_ms"]) for w in windows] == \
        [("watermark", None, POS_INF)]
    assert [(r["offset"], r["late_watermark"], r["late_watermark_ms"]) for r in late] == [(1, None, POS_INF)]
    # Without the side input the stream stops at BASE+99 (p0 idle), so the window (both rows) fires at the flush.
    windows, _ = _replay(spark, tmp_path, "flush", LOG, watermark=IDLE)
    assert [(w["fire_reason"], w["fire_watermark"], w["fire_watermark_ms"], w["cnt"]) for w in windows] == \
        [("end_of_input", None, None, 2)]


def test_late_events_keep_the_source_event_time_column_with_ingestion_time(spark, tmp_path):
    table = dict(LOG, event_time=[42, 43])  # not what ingestion time reads: it reads the arrival time
    _, late = _replay(spark, tmp_path, "ingestion", table, source={"side_inputs": ["rules"]}, watermark=IDLE,
                      window={"time": "ingestion"})
    assert [(r["offset"], r["arrival_time"], r["event_time"], r["value"]) for r in late] == [(1, BASE + 5000, 43, 2)]
    assert set(late[0]) == {*table, "late_watermark", "late_watermark_ms"}
