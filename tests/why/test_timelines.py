"""The why-report's timelines (why/timelines.py), the parts without Spark: where the traffic spans are cut (the
widest silences only, at most MAX_SPANS) and the buckets of a span (covering it, the last cut at its end)."""
from __future__ import annotations

from event_replay.why.timelines import MAX_SPANS, Span, _cut


def test_cut_keeps_bursts_apart_and_the_widest_gaps_only():
    assert _cut([3, 4, 5, 900, 901, 1990], min_gap=100) == [(3, 5), (900, 901), (1990, 1990)]
    assert _cut([3, 4, 5, 50], min_gap=100) == [(3, 50)]  # a short silence is no cut
    busy = [i * 300 for i in range(MAX_SPANS + 3)]
    busy[-1] += 500  # the widest gap: always cut
    groups = _cut(busy, min_gap=100)
    assert len(groups) == MAX_SPANS and groups[-1] == (busy[-1], busy[-1])
    assert sum(1 for a, b in groups for x in busy if a <= x <= b) == len(busy)  # every busy bucket in one span


def test_buckets_cover_the_span_and_the_last_is_cut_at_its_end():
    s = Span(1000, 1000 + 9_999, (1000, 10_999), buckets=400)
    assert s.bucket_ms() == 25 and s.bucket_count() == 400 and s.bucket_bounds(399) == (10_975, 11_000)
    odd = Span(0, 999, (0, 999), buckets=3)  # 1000 ms in 3 buckets of 334 ms: the last is 332 ms
    assert [odd.bucket_bounds(b) for b in range(odd.bucket_count())] == [(0, 334), (334, 668), (668, 1000)]
