"""The why-report's plot (why/plot.py) without Spark (where traffic spans are cut and their buckets:
test_timelines.py): the newest event time drawn from the downsampled series, the lag and share steps the panels
draw, and the figure's documented size (the PNG is looked at by a person: the browser test screenshots it)."""
from __future__ import annotations

import math
import struct

from event_replay.why.plot import figure_size_px, lag_steps, newest_event_time, plot, share_steps
from event_replay.why.timelines import HELD, IDLE, LagBucket, Span, Timelines

LAG_MS = 501  # bounded out-of-orderness 500 ms


def _timelines() -> Timelines:
    span = Span(0, 10_000 - 1, (1000, 9000), buckets=100)  # buckets of 100 ms
    # p0 publishes 1000 then 5000; p1 900 then is idle; the stream follows min then p0 alone.
    return Timelines(spans=[span], splits=["p0", "p1"],
                     points=[("p0", 0, 1000, 1000), ("p0", 0, 5000, 5000), ("p1", 0, 1000, 900),
                             ("stream", 0, 1000, 900), ("stream", 0, 7000, 5000)],
                     carried={("p0", 0): None, ("p1", 0): None, ("stream", 0): None},
                     shares={(IDLE, "p1", 0): {b: 1.0 for b in range(70, 100)} | {69: 0.25},
                             (HELD, "p1", 0): {b: 1.0 for b in range(10, 69)} | {69: 0.75},
                             (HELD, "p0", 0): {b: 1.0 for b in range(70, 100)}},
                     lag={0: [LagBucket(b, 501.0, 700.0, 4101, 100) for b in range(10, 70)]
                          + [LagBucket(b, 501.0, 501.0, 501, 100) for b in range(70, 100)]})


def test_newest_event_time_is_the_highest_split_watermark_plus_the_strategy_lag():
    assert newest_event_time(_timelines(), 0, LAG_MS) == [(1000, 1000 + LAG_MS), (5000, 5000 + LAG_MS)]


def test_lag_steps_are_the_bucket_percentiles_in_seconds_and_nan_where_undefined():
    edges, v = lag_steps(_timelines(), 0)
    assert len(edges) == 101 and edges[0] == 0 and edges[-1] == 10_000
    assert all(math.isnan(v[k][5]) for k in ("p50", "p90", "max"))  # before the stream's first watermark
    assert (v["p50"][20], v["p90"][20], v["max"][20]) == (0.501, 0.7, 4.101)
    assert v["max"][80] == LAG_MS / 1000


def test_share_steps_say_how_much_of_each_bucket():
    edges, held = share_steps(_timelines(), HELD, "p1", 0)
    _, idle = share_steps(_timelines(), IDLE, "p1", 0)
    assert len(edges) == len(held) + 1 == 101
    assert (held[5], held[20], held[69], held[80]) == (0.0, 1.0, 0.75, 0.0)
    assert (idle[69], idle[80]) == (0.25, 1.0)
    assert all(h + i <= 1.0 for h, i in zip(held, idle))  # an idle split holds nothing


def test_figure_has_its_documented_size(tmp_path):
    path = tmp_path / "t.png"
    assert plot(path, _timelines(), LAG_MS) == figure_size_px(2)
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and struct.unpack(">II", data[16:24]) == figure_size_px(2)
    assert figure_size_px(40) == figure_size_px(16)  # lanes are capped
