"""semantics/model.py: a row's replay order (arrival time, then split, then offset) and its times under each time
notion."""
from __future__ import annotations

from event_replay.semantics.model import LogRow


def test_replay_order_is_arrival_then_split_then_offset():
    rows = [LogRow("b", 0, 5, 1, "k"), LogRow("a", 2, 5, 9, "k"), LogRow("a", 1, 5, 0, "k"), LogRow("z", 0, 1, 7, "k")]
    assert [(r.split, r.offset) for r in sorted(rows, key=LogRow.replay_order)] == [("z", 0), ("a", 1), ("a", 2),
                                                                                    ("b", 0)]


def test_ingestion_and_processing_time_take_the_arrival_time():
    row = LogRow("p", 3, 1_000, 250, "k", {"v": 1})
    assert row.timed_by("event") is row
    for time in ("ingestion", "processing"):
        timed = row.timed_by(time)
        assert (timed.event_time, timed.arrival_time, timed.offset, timed.payload) == (1_000, 1_000, 3, {"v": 1})
    assert row.event_time == 250  # the original row is unchanged
