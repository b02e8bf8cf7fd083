"""Gathering the cause tests' evidence (compare/diagnosis_evidence.py) from hand-made comparison frames: windows
re-fired more often on one side, rows late on one side (from the live late output, else from the windows), the
largest lateness the live job accepted, the differing windows near an idle split, and the whole Evidence."""
from __future__ import annotations

import pytest

from compare_frames import T0, cfg, with_live_firsts
from event_replay.attribution import ALL_IDLE
from event_replay.compare.diagnosis import Evidence
from event_replay.compare.diagnosis_evidence import (_accepted_lateness, _differing, _late, evidence_frames,
                                                     evidence_from, refired_sums)
from event_replay.semantics.config import parse_config
from event_replay.spark_jobs import gather as gather_frames

pytestmark = pytest.mark.spark

WINDOWS = ("key string, window_start_ms long, window_end_ms long, in_replay boolean, in_live boolean, "
           "replay_firings long, live_versions long, replay_first_reason string, replay_first_watermark_ms long")


def _windows(spark):
    return spark.createDataFrame([
        ("a", 0, 10, True, True, 3, 1, "watermark", 1_000),   # the replay fired it more often
        ("b", 0, 10, True, True, 2, 1, "watermark", 2_000),   # so did it
        ("c", 0, 10, True, True, 1, 2, "watermark", 3_000),   # the live job did
        ("d", 0, 10, True, True, 1, 1, "watermark", 4_000),
        ("e", 0, 10, True, False, 5, None, "watermark", 5_000),  # replay only: not compared for firings
        ("f", 0, 10, False, True, None, 4, None, None)], WINDOWS)


def _late_match(spark):
    return spark.createDataFrame([(T0 + 1_000, 1, 0, T0 + 12_000), (T0 + 15_000, 2, 0, T0 + 25_000),
                                  (T0 + 16_000, 0, 3, T0 + 99_000), (T0 + 17_000, 0, 0, T0 + 99_000)],
                                 "time_ms long, replay_only long, live_only long, late_watermark_ms long")


def _ev(spark):
    return spark.createDataFrame([
        ("value_differs", 4, 0, "p1 at x", None), ("replay_only", None, 1, None, ALL_IDLE),
        ("live_only", 1, None, None, "p2"), ("duplicate", None, None, "p1 at x", ALL_IDLE), ("equal", 5, 5, None, None)],
        "class string, late_replay_only_n long, late_live_only_n long, idle_before string, held_by string")


def _row(frame):
    """A figure frame's one row (gather collects them all in one job), None for no frame."""
    return None if frame is None else tuple(frame.first())


def test_refired_late_and_differing(spark):
    assert _row(_windows(spark).agg(*refired_sums().values())) == (2, 1)
    # the live late output wins over the windows' (with the largest lateness of the rows late in the replay only)
    assert _row(_late(_late_match(spark), _ev(spark), cfg())) == (3, 3, 5_001)
    assert _row(_late(None, _ev(spark), cfg())) == (10, 6, None)
    assert _late(None, None, cfg()) is None
    assert _row(_differing(_ev(spark))) == (3, 2)  # a duplicate is no difference
    assert _differing(None) is None


def _accepted(late, config):
    return late.agg(_accepted_lateness(config)).first()[0]


def test_accepted_lateness(spark):
    lm = _late_match(spark)
    # Tumbling 10 s: rows at 1 s and 15 s end their windows at 10 s and 20 s; late by 12 - 9.999 and 25 - 19.999 s.
    assert _accepted(lm, cfg()) == 5_001
    # Sliding 10 s every 5 s: their last windows end at 10 s and 25 s.
    sliding = cfg().with_overrides(window={"type": "sliding", "size": "10s", "slide": "5s"})
    assert _accepted(lm, sliding) == 2_001
    sessions = parse_config({"source": {"path": "unused"}, "watermark": {"max_out_of_orderness": "1s"},
                             "window": {"type": "session", "gap": "10s"}, "aggregations": {"cnt": "count(*)"},
                             "output": {"path": "unused"}})
    assert _accepted(lm, sessions) is None
    assert _accepted(lm.where("replay_only = 0"), cfg()) is None


def gather(spark, config, windows, ev, live, watermarks, late, has, hints, use_source=True) -> Evidence:
    """The Evidence as the comparison gathers it (compare/run.py): the re-fired sums from its counts pass, the
    live first fire watermarks from its matching, every frame in one Spark job."""
    refired = windows.agg(*refired_sums().values()).first().asDict()
    if live is not None:
        windows = with_live_firsts(windows, live)
    frames = evidence_frames(spark, config, windows, ev, watermarks, late, has, refired, use_source=use_source)
    return evidence_from(gather_frames(frames.frames), frames, hints)


def test_gather_without_and_with_live_fire_watermarks(spark):
    windows = _windows(spark)
    hints = [{"kind": "duplicates"}, {"kind": "split_not_read", "split": "p7"}]
    e = gather(spark, cfg(), windows, _ev(spark), None, None, _late_match(spark), frozenset(), hints)
    assert e == Evidence(shift=None, silences=None, late_replay_only=3, late_live_only=3, refired_replay=2,
                         refired_live=1, differing=3, near_idle=2, accepted_lateness_ms=5_001, split_not_read="p7")
    live = spark.createDataFrame([(k, 0, 10, wm) for k, wm in (("a", 1_000), ("b", 1_500), ("c", 3_000),
                                                               ("d", 4_000), ("f", 7_000))],
                                 "key string, window_start_ms long, window_end_ms long, fire_watermark_ms long")
    wms = spark.createDataFrame([("split", v) for v in (1_000, 2_000, 3_000, 4_000)], "scope string, watermark_ms long")
    e = gather(spark, cfg(), windows, None, live, wms, None, frozenset({"fire_watermark"}), [], use_source=False)
    assert (e.late_replay_only, e.late_live_only, e.differing, e.near_idle, e.split_not_read, e.silences) == (
        0, 0, 0, 0, None, None)
    s = e.shift
    assert (s.pairs, s.same_first, s.sampled, s.shift_ms, s.shift_share) == (4, 3, 4, 0, 0.75)
    assert [r.key for r in s.other_first.collect()] == ["b"]
