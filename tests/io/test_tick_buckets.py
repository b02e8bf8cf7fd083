"""The bucketed (split, tick) entries in the scratch folder (io/tick_buckets.py): each entry in the bucket of its
tick, ticks outside the written range in the end buckets, counts that add up, and nothing without a folder."""
from __future__ import annotations

import pytest

from event_replay.io import tick_buckets
from event_replay.io.tick_buckets import TickBuckets, read_buckets, write_tick_buckets

pytestmark = pytest.mark.spark


def test_a_bucket_is_a_span_of_ticks_and_the_ends_take_the_rest():
    b = TickBuckets("p", first_tick=1000, width=300, n_buckets=4, counts={})
    assert [b.bucket_of(t) for t in (400, 999, 1000, 1299, 1300, 2199, 2200, 9000)] == [0, 0, 0, 0, 1, 3, 3, 3]
    assert [b.start_of(i) for i in range(4)] == [1000, 1300, 1600, 1900]
    with pytest.raises(ValueError, match="positive"):
        TickBuckets("p", 1000, 0, 4, {})


def test_entries_are_written_in_the_bucket_of_their_tick(spark, monkeypatch):
    monkeypatch.setattr(tick_buckets, "N_TICK_BUCKETS", 4)
    # ticks 100..1000 every 100 ms: 10 ticks, 3 a bucket, 4 buckets; 0 and 5000 lie outside the range
    ticks = list(range(100, 1001, 100)) + [0, 5000]
    entries = spark.createDataFrame([(f"s{t % 3}", t, t - 5, t - 1) for t in ticks for _ in range(2)],
                                    "split string, tick long, min_event_time long, max_event_time long")
    for one_file in (False, True):
        b = write_tick_buckets(entries, 100, 1000, 100, one_file_per_bucket=one_file)
        assert (b.first_tick, b.width, b.n_buckets) == (100, 300, 4)
        assert b.counts == {0: 8, 1: 6, 2: 6, 3: 4}  # 0 with bucket 0, 5000 with the last
        got = read_buckets(spark, b, 1, 2).collect()
        assert sorted({r["tick"] for r in got}) == [400, 500, 600, 700, 800, 900]
        assert all(r["max_event_time"] == r["tick"] - 1 for r in got)
    with pytest.raises(ValueError, match="first_tick <= last_tick"):
        write_tick_buckets(entries, 1000, 100, 100, one_file_per_bucket=False)


def test_nothing_is_written_without_a_scratch_folder(spark, monkeypatch):
    monkeypatch.setattr(tick_buckets, "scratch_dataset", lambda spark: None)
    entries = spark.createDataFrame([("s", 100, 1, 2)], "split string, tick long, min_event_time long, "
                                                         "max_event_time long")
    assert write_tick_buckets(entries, 100, 100, 100, one_file_per_bucket=False) is None
