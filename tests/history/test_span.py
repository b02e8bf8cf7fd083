"""history/span.py: a span is consecutive partitions of one length, and each output row goes to the partition
whose one-by-one replay emits it (the cut as a whole: tests/test_range_replay.py)."""
from __future__ import annotations

import pytest

from event_replay.history.partitions import Partition
from event_replay.history.span import DAY, HOUR, Span, firing_index
from event_replay.semantics.model import FIRE_END_OF_INPUT, FIRE_LATE_ROW
from event_replay.engine.windows import CAUSE_ARRIVAL

HOURS = tuple(Partition.parse(f"2024-01-01T{h:02d}") for h in range(4))
H = 3_600_000


def test_a_span_needs_consecutive_partitions_of_one_length():
    span = Span(HOURS)
    assert (span.length, span.hourly, span.folder_columns) == (H, True, [DAY, HOUR])
    assert span.whole == Partition("2024-01-01T03", HOURS[0].start_ms, HOURS[-1].end_ms)
    with pytest.raises(ValueError, match="not consecutive"):
        Span((HOURS[0], HOURS[2]))
    with pytest.raises(ValueError, match="not consecutive"):
        Span((Partition.parse("2023-12-31"), Partition.parse("2024-01-01T00")))
    with pytest.raises(ValueError, match="at least one"):
        Span(())


@pytest.mark.spark
def test_each_firing_goes_to_the_partition_that_emits_it(spark):
    span, t0 = Span(HOURS), HOURS[0].start_ms
    stream_ends = [t0 + 100, t0 + 100, t0 + 2 * H + 5, t0 + 4 * H]  # the stream watermark at each end
    rows = [("timer", t0 + 50, None, 0), ("timer", t0 + 100, None, 0), ("timer", t0 + 101, None, 2),
            ("timer", t0 + 2 * H + 5, None, 2), ("timer", t0 + 4 * H + 9, None, 3),  # never reached: the last
            (FIRE_LATE_ROW, t0 + 7, t0 + H + 1, 1), (FIRE_LATE_ROW, t0 + 7, t0 - 5, 0),  # the cause's arrival
            (FIRE_END_OF_INPUT, None, None, 3)]
    df = spark.createDataFrame([r[:3] for r in rows], f"fire_reason string, fire_watermark long, {CAUSE_ARRIVAL} long")
    got = [r["i"] for r in df.select(firing_index(span, stream_ends).alias("i")).collect()]
    assert got == [r[3] for r in rows]


@pytest.mark.spark
def test_folders_of_a_partition_index(spark):
    df = spark.createDataFrame([(0,), (3,)], "i int")
    got = [(r[DAY], r[HOUR]) for r in Span(HOURS).with_folders(df, df["i"]).collect()]
    assert got == [("2024-01-01", "00"), ("2024-01-01", "03")]
