"""TickTimes.java: per (split, tick) of the candidate rows, the count and the smallest and largest event time; a
row's tick is the first multiple of the interval at or after its arrival. One record per split (OffsetRuns.SCHEMA:
c 0, s, n, ticks with min_e and max_e as arrays of one length)."""
from __future__ import annotations

import pytest

pytestmark = pytest.mark.spark

MIN, MAX = -2 ** 63, 2 ** 63 - 1


def _emitted(java, ticks) -> dict[str, tuple[int, list[tuple[int, int, int]]]]:
    """{split: (rows, sorted [(tick, min event time, max event time)])} of what `ticks` emits."""
    out = java.jvm.java.util.ArrayList()
    java.call(ticks, "emit", out)
    got = {}
    for r in out:
        assert r.getInt(0) == 0 and r.getLong(2) == 0 and not r.getBoolean(8)
        assert all(r.isNullAt(i) for i in range(4, 8))
        t, lo, hi = (list(r.getArray(i).toLongArray()) for i in (9, 10, 11))
        assert len(t) == len(lo) == len(hi)
        got[r.getUTF8String(1).toString()] = (r.getLong(3), sorted(zip(t, lo, hi)))
    assert len(got) == out.size()  # one record per split
    return got


def _ticks(java, interval, rows):
    ticks = java.new("TickTimes", interval)
    for split, arrival, event_time in rows:
        java.call(ticks, "add", java.utf8(split), arrival, event_time)
    return ticks


def test_a_rows_tick_is_the_first_multiple_of_the_interval_at_or_after_its_arrival(java):
    rows = [("p", a, a) for a in (-11, -10, -1, 0, 1, 9, 10, 11)]
    assert _emitted(java, _ticks(java, 10, rows)) == {
        "p": (8, [(-10, -11, -10), (0, -1, 0), (10, 1, 10), (20, 11, 11)])}


def test_event_times_are_min_and_max_per_tick_whatever_their_order(java):
    rows = [("p", 1, 50), ("p", 2, MIN), ("p", 3, MAX), ("p", 4, 7), ("p", 11, 5)]
    assert _emitted(java, _ticks(java, 10, rows)) == {"p": (5, [(10, MIN, MAX), (20, 5, 5)])}


def test_splits_are_apart_and_a_tick_seen_again_adds_to_its_first_counts(java):
    rows = [("a", 1, 1), ("b", 2, 100), ("a", 15, 2), ("b", 3, 101), ("a", 5, 3), ("a", 25, 4), ("a", 6, 0)]
    assert _emitted(java, _ticks(java, 10, rows)) == {
        "a": (5, [(10, 0, 3), (20, 2, 2), (30, 4, 4)]),
        "b": (2, [(10, 100, 101)]),
    }


def test_a_tick_below_a_splits_last_is_merged_in_and_every_record_is_ascending(java):
    """A split's rows mostly extend its ticks at the end; one whose tick is below the last and new (a stray, e.g.
    from a file of earlier times read later) is merged back in, a stray tick seen twice apart once, so the record's
    ticks come out ascending, each once, with every row counted."""
    rows = [("a", 41, 1), ("a", 45, 2), ("a", 12, 3), ("a", 58, 4), ("a", 19, -1), ("a", 31, 9), ("a", 2, 6),
            ("a", 15, 7), ("a", 44, 0), ("a", 61, 5)]
    out = java.jvm.java.util.ArrayList()
    java.call(_ticks(java, 10, rows), "emit", out)
    assert out.size() == 1
    r = out[0]
    assert r.getLong(3) == len(rows)
    assert list(r.getArray(9).toLongArray()) == [10, 20, 40, 50, 60, 70]
    assert list(r.getArray(10).toLongArray()) == [6, -1, 9, 0, 4, 5]
    assert list(r.getArray(11).toLongArray()) == [6, 7, 9, 2, 4, 5]


def test_nothing_added_nothing_emitted(java):
    assert _emitted(java, java.new("TickTimes", 200)) == {}


def test_the_split_is_copied_when_kept(java):
    """The scan reuses its row buffer: a split name kept by reference would change under the map."""
    buffer = java.longs([ord("p") | ord("0") << 8])  # a row buffer in the JVM (little-endian: "p0")
    offset = java.jvm.org.apache.spark.unsafe.Platform.LONG_ARRAY_OFFSET
    split = java.jvm.org.apache.spark.unsafe.types.UTF8String.fromAddress(buffer, offset, 2)
    assert split.toString() == "p0"
    ticks = java.new("TickTimes", 10)
    java.call(ticks, "add", split, 1, 1)
    buffer[0] = ord("p") | ord("9") << 8  # the next row overwrites the buffer
    assert split.toString() == "p9"
    java.call(ticks, "add", java.utf8("p1"), 1, 1)
    assert sorted(_emitted(java, ticks)) == ["p0", "p1"]


def test_past_its_bound_the_map_is_emitted_in_pieces_that_combine_to_the_whole(java):
    """A partition holding days of ticks is emitted whenever the map is full (bounded memory per task): each piece
    one record per split, the map empty after it, and the pieces combined per (split, tick) equal one emit."""
    rows = [("a", 1, 1), ("b", 2, 100), ("a", 15, 2), ("b", 3, 101), ("a", 5, 3), ("a", 25, 4), ("a", 6, 0),
            ("b", 31, 7), ("a", 12, -5)]
    whole = _emitted(java, _ticks(java, 10, rows))
    ticks = java.new("TickTimes", 10, 2)
    pieces = []
    for split, arrival, event_time in rows:
        java.call(ticks, "add", java.utf8(split), arrival, event_time)
        assert java.call(ticks, "full") == (java.call(ticks, "entries") >= 2)
        if java.call(ticks, "full"):
            pieces.append(_emitted(java, ticks))
            assert not java.call(ticks, "full") and _emitted(java, ticks) == {}  # emptied
    pieces.append(_emitted(java, ticks))
    assert len(pieces) > 2
    combined: dict[str, dict[int, list[int]]] = {}
    for piece in pieces:
        for split, (_, entries) in piece.items():
            for tick, lo, hi in entries:
                seen = combined.setdefault(split, {}).setdefault(tick, [lo, hi])
                seen[:] = [min(seen[0], lo), max(seen[1], hi)]
    assert {s: sorted((t, lo, hi) for t, (lo, hi) in e.items()) for s, e in combined.items()} == \
        {s: entries for s, (_, entries) in whole.items()}
    assert sum(n for piece in pieces for n, _ in piece.values()) == len(rows)


def test_the_bounds_must_be_positive(java):
    for interval, flush_at in ((0, 5), (10, 0)):
        with pytest.raises(java.Error, match="must be positive"):
            java.new("TickTimes", interval, flush_at)
