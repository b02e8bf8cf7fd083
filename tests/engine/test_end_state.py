"""engine._top_watermark: a range's highest stream watermark, which its carried state continues from. A timeline
computed on the driver knows its values (no Spark job); the Spark path's values are aggregated."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from event_replay import engine


def test_a_driver_timeline_gives_its_top_from_its_own_values_without_spark():
    timeline = SimpleNamespace(known_stream_values=np.array([5, -3, 12, 7], np.int64))
    assert engine._top_watermark(timeline, stream_values=None) == 12  # None: touching the frame would fail


def test_a_driver_timeline_without_values_has_no_top():
    timeline = SimpleNamespace(known_stream_values=np.zeros(0, np.int64))
    assert engine._top_watermark(timeline, stream_values=None) is None


@pytest.mark.spark
def test_the_spark_paths_top_is_the_frames_max_and_equals_the_driver_one(spark):
    values = [4, 19, -1, 19, 3]
    frame = spark.createDataFrame([(v,) for v in values], "watermark long")
    spark_top = engine._top_watermark(SimpleNamespace(known_stream_values=None), frame)
    assert spark_top == 19
    assert engine._top_watermark(SimpleNamespace(known_stream_values=np.array(values, np.int64)), frame) == spark_top
    empty = spark.createDataFrame([], "watermark long")
    assert engine._top_watermark(SimpleNamespace(known_stream_values=None), empty) is None
