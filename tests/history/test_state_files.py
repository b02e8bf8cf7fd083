"""history/state_files.py: a partition's state written, then read back by its successor, is the same state; a
successor without its predecessor's state is refused with a clear error."""
from __future__ import annotations

import pytest

from event_replay.engine.carry import Carry
from event_replay.history.partitions import Partition
from event_replay.history.state import Manifest, StateError
from event_replay.history.state_files import SPLIT_STATE_DDL, read_state, write_state
from source_logs import make_cfg

pytestmark = pytest.mark.spark


def test_written_state_reads_back_for_the_next_partition(spark, tmp_path):
    cfg = make_cfg(tmp_path / "in", out=tmp_path / "out", source={"splits": ["a", "b"]},
                   replay={"end_of_input": "hold"})
    day = Partition.parse("2024-01-01")
    rows = spark.createDataFrame([(1, "a", 7, 5, "k", 3)],
                                 "arrival_time long, split string, offset long, event_time long, key string, "
                                 "wm_before long")
    carry = Carry(origin_tick=0, stream_watermark=41, stream_idle=True, splits=["a", "b"], last_offsets={"a": 7},
                  split_states=spark.createDataFrame([("b", None, 3), ("a", 2, 40)], SPLIT_STATE_DDL), rows=rows)
    write_state(spark, cfg, Manifest.after(cfg, day.id, None, carry), carry)
    got = read_state(spark, cfg, Partition.parse("2024-01-02"))
    assert (got.manifest.partition, got.manifest.stream_watermark, got.manifest.stream_idle) == (day.id, 41, True)
    assert (got.carry.splits, got.carry.last_offsets, got.carry.origin_tick) == (["a", "b"], {"a": 7}, 0)
    assert [tuple(r) for r in got.carry.split_states.collect()] == [("a", 2, 40), ("b", None, 3)]  # sorted
    assert [tuple(r) for r in got.carry.rows.collect()] == [tuple(r) for r in rows.collect()]
    with pytest.raises(StateError, match="no carried state"):
        read_state(spark, cfg, Partition.parse("2024-01-05"))
