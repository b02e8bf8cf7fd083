"""history/partitions.py: partitions and the replay clock's range (the partition-by-partition replay itself:
tests/test_partitions.py)."""
from __future__ import annotations

import pytest

from event_replay.history.partitions import Clock, Partition
from event_replay.io.source import SourceData
from event_replay.semantics.config_keys import ConfigError


@pytest.mark.parametrize("start,end,clock", [(None, None, (0, 0)), (5_000, None, (5_000, 5_000)),
                                             (5_000, 9_000, (5_000, 9_000))])
def test_a_whole_source_replays_on_the_clock_its_range_gives(start, end, clock):
    """Clock.of_source: [start, end) of the rows read; 0 when nothing says where the replay starts."""
    data = SourceData(rows=None, quarantine=None, rows_read=0, clean_rows=0, quarantined_rows=0, skipped_rows=0,
                      splits=[], start_ms=start, end_ms=end, source_columns={}, payload_columns=[])
    assert Clock.of_source(data) == Clock(*clock)


def test_a_partition_is_a_day_or_an_hour_with_its_folder_and_predecessor():
    day = Partition.parse("2024-03-01")
    assert (day.end_ms - day.start_ms, day.subpath, day.previous().id) == (86_400_000, "dt=2024-03-01", "2024-02-29")
    hour = Partition.parse("2024-03-01T00")
    assert (hour.hourly, hour.subpath, hour.previous().id) == (True, "dt=2024-03-01/hour=00", "2024-02-29T23")
    with pytest.raises(ConfigError):
        Partition.parse("2024-02-30")
