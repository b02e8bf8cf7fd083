"""SEMANTICS §8 worked examples A–D, and the rules they pin down, on the reference model."""
from __future__ import annotations

from event_replay.semantics.durations import NEG_INF
from event_replay.semantics.model import LogRow
from event_replay.semantics.reference import replay
from event_replay.semantics.watermarks import WatermarkMultiplexer
from event_replay.semantics.windows import merge_into, sliding, tumbling
from strategies import config


def firings(result):
    return [(f.key, f.window_start, f.window_end, f.fire_index, f.fire_watermark, f.fire_reason, f.aggregates["cnt"])
            for f in result.firings]


def test_example_a_per_event_lateness():
    cfg = config(watermark={"max_out_of_orderness": "5s", "emit": "per_event"},
                 window={"size": "10s", "allowed_lateness": "3s"})
    times = [1000, 3000, 12000, 2000, 16000, 4000, 21000, 9000, 30000, 11000]
    result = replay([LogRow("p0", i, i, t, "k") for i, t in enumerate(times)], cfg)
    assert firings(result) == [
        ("k", 0, 10000, 0, 10999, "watermark", 3),
        ("k", 0, 10000, 1, 10999, "late_row", 4),
        ("k", 10000, 20000, 0, 24999, "watermark", 2),
        ("k", 20000, 30000, 0, None, "end_of_input", 1),
        ("k", 30000, 40000, 0, None, "end_of_input", 1),
    ]
    assert [(lr.row.event_time, lr.late_watermark) for lr in result.late_rows] == [(9000, 15999), (11000, 24999)]
    assert result.wm_before[("p0", 3)] == 6999  # "after 12000 the watermark is 6999; 2000 joins [0,10000)"


EXAMPLE_B = [("p0", 100, 1000), ("p1", 150, 1100), ("p0", 300, 5000), ("p0", 700, 9000), ("p0", 1500, 12000),
             ("p0", 2600, 15000), ("p1", 2700, 3000), ("p0", 2800, 16000)]


def test_example_b_idle_split_lets_the_watermark_run_ahead():
    cfg = config(source={"splits": ["p0", "p1", "p2"]},
                 watermark={"max_out_of_orderness": 0, "interval": "200ms", "idle_timeout": "PT1S"},
                 replay={"start": 100, "end": 4000})
    rows = [LogRow(s, i, a, e, "a" if s == "p0" else "b") for i, (s, a, e) in enumerate(EXAMPLE_B)]
    result = replay(rows, cfg)
    assert sorted(firings(result), key=str) == sorted([
        ("a", 0, 4000, 0, 11999, "watermark", 1),
        ("b", 0, 4000, 0, 11999, "watermark", 1),
        ("a", 4000, 8000, 0, 11999, "watermark", 1),
        ("a", 8000, 12000, 0, 11999, "watermark", 1),
        ("a", 12000, 16000, 0, None, "end_of_input", 2),
        ("a", 16000, 20000, 0, None, "end_of_input", 1),
    ], key=str)
    assert [(lr.row.split, lr.row.event_time, lr.late_watermark) for lr in result.late_rows] == [("p1", 3000, 14999)]
    stream = [(c.replay_time, c.watermark) for c in result.watermarks if c.scope == "stream"]
    # p2 goes idle at tick 1400 (stream to p1's 1099), p1 at 1600 (to p0's 11999), p0's row moves it at 2600.
    assert stream == [(1400, 1099), (1600, 11999), (2600, 14999)]
    idle = [(c.replay_time, c.split) for c in result.watermarks if c.scope == "split" and c.idle]
    assert idle == [(1400, "p2"), (1600, "p1")]
    # p1 is active again from tick 2800 with 2999.
    assert any(c.replay_time == 2800 and c.split == "p1" and c.watermark == 2999 for c in result.watermarks)


def test_example_c_all_idle_moves_to_the_largest_watermark():
    cfg = config(watermark={"max_out_of_orderness": 0, "interval": 200, "idle_timeout": 1000},
                 replay={"start": 100, "end": 4000})
    rows = [LogRow("p0", 0, 100, 10000, "a"), LogRow("p1", 0, 150, 1000, "b"), LogRow("p1", 1, 3000, 2000, "b")]
    result = replay(rows, cfg)
    assert result.stream_values == [999, 9999]
    assert ("b", 0, 4000, 0, 9999, "watermark", 1) in firings(result)
    assert [(lr.row.split, lr.row.offset, lr.late_watermark) for lr in result.late_rows] == [("p1", 1, 9999)]
    stream = [(c.replay_time, c.watermark, c.idle) for c in result.watermarks if c.scope == "stream"]
    assert stream[:2] == [(200, 999, False), (1600, None, True)]


def test_example_d_combination_is_the_minimum_and_never_goes_back():
    mux = WatermarkMultiplexer(["i1", "i2", "i3", "i4"])
    for split, wm in zip(["i1", "i2", "i3", "i4"], [2, 4, 3, 6]):
        mux.immediate(split).emit_watermark(wm)
    assert mux.combined == 2
    mux.immediate("i1").emit_watermark(4)
    assert mux.combined == 3
    mux.immediate("i2").emit_watermark(7)
    assert mux.combined == 3
    mux.immediate("i3").emit_watermark(6)
    assert mux.combined == 4


def test_unpublished_split_counts_as_minus_infinity():
    mux = WatermarkMultiplexer(["a", "b"])
    mux.immediate("a").emit_watermark(100)
    assert mux.combined == NEG_INF


def test_strategy_formulas():
    rows = [LogRow("p0", 0, 0, 10_000, "k"), LogRow("p0", 1, 1, 10_000, "k")]
    for strategy, delay, expected in [("bounded_out_of_orderness", 1000, 8999), ("sql", 1000, 9000),
                                      ("monotonous", None, 9999)]:
        wm = {"strategy": strategy, "emit": "per_event"}
        if delay is not None:
            wm["max_out_of_orderness"] = delay
        assert replay(rows, config(watermark=wm)).wm_before[("p0", 1)] == expected, strategy


def test_silence_advance_fires_the_last_window_without_flush():
    cfg = config(watermark={"max_out_of_orderness": 0, "interval": 100, "advance_after_silence": 300},
                 replay={"start": 0, "end": 10_000, "end_of_input": "hold"})
    result = replay([LogRow("p0", 0, 50, 1000, "k")], cfg)
    # Without the advance the window [0,4000) would wait for more rows; the logical clock gets it there.
    assert [(f.window_start, f.fire_reason) for f in result.firings] == [(0, "watermark")]
    assert result.firings[0].fire_watermark == 3999


def test_ticks_split_exactly_between_consecutive_ranges():
    from event_replay.semantics.reference import Replayer

    cfg = config(watermark={"max_out_of_orderness": 0, "interval": 200, "idle_timeout": 500},
                 replay={"end_of_input": "hold"})
    rows = [LogRow("p0", i, 130 * i, 900 * i, "k") for i in range(40)] + \
           [LogRow("p1", i, 50 + 400 * i, 700 * i, "k") for i in range(5)]
    whole = Replayer(cfg, ["p0", "p1"])
    whole.replay_range(rows, 0, 6000)
    parts = Replayer(cfg, ["p0", "p1"])
    for a, b in [(0, 1000), (1000, 1600), (1600, 6000)]:
        parts.replay_range([r for r in rows if a <= r.arrival_time < b], a, b)
    assert whole.finish("flush").firings == parts.finish("flush").firings
    assert whole.result.watermarks == parts.result.watermarks


def test_assigners():
    assert tumbling(12_345, 10_000) == [(10_000, 20_000)]
    assert tumbling(5, 10, 7) == [(-3, 7)]
    assert sliding(12_345, 10_000, 5_000) == [(10_000, 20_000), (5_000, 15_000)]
    assert merge_into((10, 20), [(0, 10), (25, 30)]) == ((0, 20), [(0, 10)])
    assert merge_into((10, 25), [(0, 10), (25, 30)]) == ((0, 30), [(0, 10), (25, 30)])


def test_session_growth_restarts_fire_index_and_same_bounds_refire():
    cfg = config(watermark={"max_out_of_orderness": 0, "emit": "per_event"},
                 window={"type": "session", "gap": 1000, "allowed_lateness": 5000})
    rows = [LogRow("p0", 0, 0, 0, "k"), LogRow("p0", 1, 1, 3000, "k"),  # [0,1000) fires at 2999
            LogRow("p0", 2, 2, 500, "k"),  # grows to [0,1500): new window, fires at once, index 0
            LogRow("p0", 3, 3, 100, "k")]  # inside [0,1500): same bounds, index 1
    result = replay(rows, cfg)
    got = [(f.window_start, f.window_end, f.fire_index, f.fire_reason, f.aggregates["cnt"]) for f in result.firings]
    assert got[:3] == [(0, 1000, 0, "watermark", 1), (0, 1500, 0, "late_row", 2), (0, 1500, 1, "late_row", 3)]
