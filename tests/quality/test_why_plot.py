"""The why-report's timelines without Spark: where traffic spans are cut, the newest event time and the watermark
lag drawn from the downsampled series, and the figure's documented size (the PNG is looked at by a person: the
browser test screenshots it)."""
from __future__ import annotations

import math
import struct

from event_replay.quality.why_plot import figure_size_px, newest_event_time, plot, watermark_lag
from event_replay.quality.why_timelines import IDLE, MAX_SPANS, SPAN_BUCKETS, Span, Timelines, _cut

LAG_MS = 501  # bounded out-of-orderness 500 ms


def test_cut_keeps_bursts_apart_and_the_widest_gaps_only():
    assert _cut([3, 4, 5, 900, 901, 1990], min_gap=100) == [(3, 5), (900, 901), (1990, 1990)]
    assert _cut([3, 4, 5, 50], min_gap=100) == [(3, 50)]  # a short silence is no cut
    busy = [i * 300 for i in range(MAX_SPANS + 3)]
    busy[-1] += 500  # the widest gap: always cut
    groups = _cut(busy, min_gap=100)
    assert len(groups) == MAX_SPANS and groups[-1] == (busy[-1], busy[-1])
    assert sum(1 for a, b in groups for x in busy if a <= x <= b) == len(busy)  # every busy bucket in one span


def _timelines() -> Timelines:
    span = Span(0, 10_000 - 1, (1000, 9000))
    # p0 publishes 1000 then 5000; p1 900 then is idle; the stream follows min then p0 alone.
    return Timelines(spans=[span], splits=["p0", "p1"],
                     points=[("p0", 0, 1000, 1000), ("p0", 0, 5000, 5000), ("p1", 0, 1000, 900),
                             ("stream", 0, 1000, 900), ("stream", 0, 7000, 5000)],
                     carried={("p0", 0): None, ("p1", 0): None, ("stream", 0): None},
                     stretches={(IDLE, "p1", 0): list(range(240, 400))})


def test_newest_event_time_is_the_highest_split_watermark_plus_the_strategy_lag():
    assert newest_event_time(_timelines(), 0, LAG_MS) == [(1000, 1000 + LAG_MS), (5000, 5000 + LAG_MS)]


def test_watermark_lag_is_newest_event_time_minus_the_stream():
    lag = dict(watermark_lag(_timelines(), 0, LAG_MS))
    assert lag[1000] == (1000 + LAG_MS - 900) / 1000
    assert lag[5000] == (5000 + LAG_MS - 900) / 1000  # p1 holds the stream back: the lag grows
    assert lag[7000] == LAG_MS / 1000


def test_watermark_lag_is_undefined_while_the_stream_is_idle():
    tl = _timelines()
    tl.stretches[(IDLE, "stream", 0)] = list(range(int(6500 / tl.spans[0].bucket_ms()), SPAN_BUCKETS))
    assert math.isnan(dict(watermark_lag(tl, 0, LAG_MS))[7000])


def test_figure_has_its_documented_size(tmp_path):
    path = tmp_path / "t.png"
    assert plot(path, _timelines(), LAG_MS) == figure_size_px(2)
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and struct.unpack(">II", data[16:24]) == figure_size_px(2)
    assert figure_size_px(40) == figure_size_px(16)  # lanes are capped
