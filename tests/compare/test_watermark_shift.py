"""The live watermark against the replay's (compare/watermark_shift.py): the constant that puts the live fire
watermarks onto the values the replay's splits published, its share, and the windows first fired at another
watermark."""
from __future__ import annotations

import pytest

from compare_frames import cfg, with_live_firsts
from event_replay.compare.watermark_shift import ShiftFigures, shift_frames, shift_from
from event_replay.semantics.durations import NEG_INF, POS_INF
from event_replay.spark_jobs import gather

pytestmark = pytest.mark.spark

REPLAY_FIRST = {"a": 1_000, "b": 2_000, "c": 3_000, "d": 4_000, "e": 5_000}


def shift_figures(windows, live, watermarks, config) -> ShiftFigures:
    """The figures as the comparison gathers them (its frames in one Spark job with the others')."""
    frames, firsts = shift_frames(with_live_firsts(windows, live), watermarks, config)
    return shift_from(gather(frames), firsts)


def _frames(spark, live_first):
    windows = spark.createDataFrame(
        [(k, 0, 10, True, True, "watermark", wm) for k, wm in REPLAY_FIRST.items()]
        + [("f", 0, 10, True, False, "watermark", 6_000),      # not in the live output
           ("g", 0, 10, True, True, "end_of_input", 7_000),    # the replay's flush: not a firing to compare
           ("h", 0, 10, True, True, "watermark", 8_000)],      # no live fire watermark
        "key string, window_start_ms long, window_end_ms long, in_replay boolean, in_live boolean, "
        "replay_first_reason string, replay_first_watermark_ms long")
    live = spark.createDataFrame(
        [(k, 0, 10, wm) for k, wm in live_first.items()] + [("a", 0, 10, 90_000), ("g", 0, 10, 123), ("h", 0, 10, None)],
        "key string, window_start_ms long, window_end_ms long, fire_watermark_ms long")
    watermarks = spark.createDataFrame(
        [("split", v) for v in REPLAY_FIRST.values()] + [("split", NEG_INF), ("split", POS_INF), ("stream", 4_500)],
        "scope string, watermark_ms long")
    return windows, live, watermarks


def test_a_constant_shift_for_most_live_watermarks(spark):
    live_first = {"a": 500, "b": 1_500, "c": 2_500, "d": 3_500, "e": 5_000}  # e fired at the same watermark
    s = shift_figures(*_frames(spark, live_first), cfg())
    # +500 puts 500..3500 on split values (4 of 5), -500 three of them, none 5000 (but 0 does).
    assert (s.pairs, s.same_first, s.sampled, s.shift_ms) == (5, 1, 5, 500)
    assert (s.shift_share, s.zero_share) == (pytest.approx(0.8), pytest.approx(0.2))
    assert not s.found
    assert sorted(tuple(r) for r in s.other_first.select("key", "replay_first_watermark_ms",
                                                         "live_first_watermark_ms").collect()) == [
        ("a", 1_000, 500), ("b", 2_000, 1_500), ("c", 3_000, 2_500), ("d", 4_000, 3_500)]


def test_every_live_watermark_shifted_is_found(spark):
    s = shift_figures(*_frames(spark, {k: v - 250 for k, v in REPLAY_FIRST.items()}), cfg())
    assert (s.pairs, s.same_first, s.shift_ms, s.shift_share, s.zero_share) == (5, 0, 250, 1.0, 0.0)
    assert s.found


def test_no_shift_and_no_pairs(spark):
    s = shift_figures(*_frames(spark, dict(REPLAY_FIRST)), cfg())
    assert (s.pairs, s.same_first, s.shift_ms, s.shift_share, s.zero_share) == (5, 5, 0, 1.0, 1.0)
    assert s.other_first.count() == 0
    windows, live, watermarks = _frames(spark, {})
    s = shift_figures(windows, live.where("key = 'h'"), watermarks, cfg())
    assert (s.pairs, s.same_first, s.sampled, s.shift_ms, s.shift_share, s.zero_share) == (0, 0, 0, None, 0.0, 0.0)
    assert not s.found


def test_found_needs_a_shift_and_nine_tenths():
    fig = dict(pairs=1, same_first=0, sampled=1, zero_share=0.0, other_first=None)
    assert ShiftFigures(shift_ms=5, shift_share=0.9, **fig).found
    assert not ShiftFigures(shift_ms=5, shift_share=0.89, **fig).found
    assert not ShiftFigures(shift_ms=None, shift_share=1.0, **fig).found
