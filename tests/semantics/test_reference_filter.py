"""The row filter in the reference model (docs/semantics.md, "Row filter"): dropped rows drive the watermarks and
idleness, and are never windowed nor late."""
from __future__ import annotations

import pytest

from event_replay.semantics.model import LogRow
from event_replay.semantics.reference import replay
from filter_cases import (CASES, KEEP_POSITIVE, KEEPS_ACTIVE, KEEPS_ACTIVE_CFG, MOVES, MOVES_CFG, row,
                          with_filter)
from strategies import config


def cnt(result):
    return [(f.window_start, f.window_end, f.fire_index, f.fire_watermark, f.fire_reason, f.aggregates["cnt"])
            for f in result.firings]


def test_a_dropped_row_moves_the_watermark():
    result = replay(MOVES, with_filter(MOVES_CFG, KEEP_POSITIVE))
    assert cnt(result) == [(0, 4000, 0, 8999, "watermark", 1), (8000, 12000, 0, None, "end_of_input", 1)]
    assert [(lr.row.offset, lr.late_watermark) for lr in result.late_rows] == [(2, 8999)]
    assert result.filtered == [("p0", 1), ("p0", 3)]  # p0/3 would have been late: it is filtered, not late
    # The same log filtered beforehand replays otherwise: nothing moves the watermark past [0, 4000) in time.
    prefiltered = replay([r for r in MOVES if r.payload["value"] > 0], MOVES_CFG)
    assert not prefiltered.late_rows and cnt(prefiltered)[0] == (0, 4000, 0, None, "end_of_input", 2)


def test_dropped_rows_keep_their_split_active():
    result = replay(KEEPS_ACTIVE, with_filter(KEEPS_ACTIVE_CFG, KEEP_POSITIVE))
    assert not result.late_rows and not any(c.idle for c in result.watermarks)
    assert [f.fire_reason for f in result.firings] == ["end_of_input"] * 4
    without = replay([r for r in KEEPS_ACTIVE if r.split == "p0"], KEEPS_ACTIVE_CFG, declared_splits=["p0", "p1"])
    assert [lr.row.offset for lr in without.late_rows] == [4]  # p1 idle: p0 alone fired [0, 4000) early


def test_every_row_is_windowed_late_or_filtered_once():
    for name, rows, cfg in CASES:
        result = replay(rows, cfg)
        windowed = {r for f in result.firings for r in f.rows}
        late = {(lr.row.split, lr.row.offset) for lr in result.late_rows}
        filtered = set(result.filtered)
        assert len(filtered) == len(result.filtered), name
        assert not (windowed & late) and not (windowed & filtered) and not (late & filtered), name
        assert windowed | late | filtered == {(r.split, r.offset) for r in rows}, name
        dropped = (lambda v: v <= 0) if cfg.filter == KEEP_POSITIVE else (lambda v: v % 2 == 0)
        assert filtered == {(r.split, r.offset) for r in rows if dropped(r.payload["value"])}, name


def test_the_filter_changes_no_watermark():
    for name, rows, cfg in CASES:
        assert replay(rows, cfg).watermarks == replay(rows, with_filter(cfg, None)).watermarks, name


def test_a_null_predicate_drops_the_row():
    rows = [LogRow("p0", 0, 0, 100, "k", {"value": None}), row("p0", 1, 10, 200, 5)]
    cfg = config(watermark={"max_out_of_orderness": 0})
    result = replay(rows, with_filter(cfg, "value > 1"))
    assert result.filtered == [("p0", 0)] and [f.rows for f in result.firings] == [(("p0", 1),)]
    assert replay(rows, with_filter(cfg, "NOT value > 1")).filtered == [("p0", 0), ("p0", 1)]


@pytest.mark.parametrize("time", ["ingestion", "processing"])
def test_other_time_notions_filter_the_same_rows(time):
    cfg = config(window={"type": "tumbling", "size": 1000, "time": time},
                 watermark={"strategy": "monotonous", "emit": "per_event", "interval": 0} if time == "processing"
                 else {"max_out_of_orderness": 0})
    # The filter reads the row as logged: under ingestion time its own event time still decides.
    result = replay(MOVES, with_filter(cfg, "event_time < 9000 AND value > 0"))
    assert sorted(result.filtered) == [("p0", 1), ("p0", 3), ("p0", 4)]
    assert sorted(r for f in result.firings for r in f.rows) == [("p0", 0), ("p0", 2)]
