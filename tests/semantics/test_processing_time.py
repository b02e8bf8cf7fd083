"""Processing time on the replay clock (semantics/processing_time.py, docs/semantics.md "Time notions").

Repro of issue 16: p0 has a row every 250 ms for 5 s, p1 one row at the start and then nothing; tumbling 1 s on
processing time, range 7 s, hold. A processing-time window fires from its timer at end - 1 on the replay clock,
whatever the rows or splits do: five firings. (Before: zero, the silent split held a watermark back.)"""
from __future__ import annotations


import pytest

from event_replay.semantics.config import parse_config
from event_replay.semantics.config_keys import ConfigWarning
from event_replay.semantics.model import LogRow
from event_replay.semantics.reference import Replayer, replay
from processing_time_cases import BASE, cfg_of, repro_rows

def test_windows_fire_on_the_replay_clock_whatever_the_splits_do():
    cfg = cfg_of({"type": "tumbling", "size": 1000}, start=BASE, end=BASE + 7000)
    got = [(f.window_start - BASE, f.window_end - BASE, f.fire_index, f.fire_watermark - BASE, f.fire_reason,
            f.aggregates["cnt"]) for f in replay(repro_rows(), cfg).firings]
    assert got == [(0, 1000, 0, 999, "watermark", 5)] + \
        [(s, s + 1000, 0, s + 999, "watermark", 4) for s in range(1000, 5000, 1000)]


def test_a_row_at_the_timer_time_comes_before_the_timer():
    rows = [LogRow("p0", 0, BASE + 500, 0, "k"), LogRow("p0", 1, BASE + 999, 0, "k"),
            LogRow("p0", 2, BASE + 1000, 0, "k")]
    cfg = cfg_of({"type": "tumbling", "size": 1000}, start=BASE, end=BASE + 3000)
    got = [(f.window_start - BASE, f.rows) for f in replay(rows, cfg).firings]
    assert got == [(0, (("p0", 0), ("p0", 1))), (1000, (("p0", 2),))]


def test_sessions_end_at_their_timer_and_flush_fires_the_open_ones():
    # gap 300: 0, 250, 549 are one session ([0, 849) fires at 848); 849 is after the timer: a new session.
    rows = [LogRow("p0", i, BASE + t, 0, "k") for i, t in enumerate((0, 250, 549, 849, 5000))]
    cfg = cfg_of({"type": "session", "gap": 300}, start=BASE, end=BASE + 5100)
    rep = Replayer(cfg, ["p0"])
    rep.replay_range(rows, BASE, BASE + 5100)
    got = [(f.window_start - BASE, f.window_end - BASE, f.fire_reason, f.aggregates["cnt"])
           for f in rep.finish("flush").firings]
    assert got == [(0, 849, "watermark", 3), (849, 1149, "watermark", 1), (5000, 5300, "end_of_input", 1)]


def test_watermark_keys_are_ignored_with_a_warning_naming_each():
    raw = {"source": {"path": "x"}, "watermark": {"max_out_of_orderness": "5s", "idle_timeout": "1m"},
           "window": {"type": "tumbling", "size": 1000, "time": "processing"}, "aggregations": {"cnt": "count(*)"},
           "output": {"path": "y"}}
    with pytest.warns(ConfigWarning) as caught:
        cfg = parse_config(raw)
    assert sorted(str(w.message).split("'")[1] for w in caught) == ["watermark.idle_timeout",
                                                                     "watermark.max_out_of_orderness"]
    assert cfg.watermark.idle_timeout_ms is None
