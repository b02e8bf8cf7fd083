"""The silence of the splits when the replay fired a window (compare/silences.py): per window the longest silence
of any split at its firing time (the one in progress or the one its last row ended), and their summary."""
from __future__ import annotations

import pytest

from compare_frames import S, T0, cfg
from event_replay.compare.silences import Silences, silence_at_firing, silences_from, summary_frame

pytestmark = pytest.mark.spark

ARRIVALS = {"p1": [0, 1_000, 10_000], "p2": [0, 3_000, 8_000, 9_000]}


@pytest.fixture()
def src_cfg(tmp_path):
    lines = ["split,offset,arrival_time,event_time,key"] + [
        f"{s},{i},{T0 + a},{T0 + a},k" for s, ts in ARRIVALS.items() for i, a in enumerate(ts)]
    (tmp_path / "log.csv").write_text("\n".join(lines) + "\n")
    return cfg().with_overrides(source={"path": str(tmp_path / "log.csv"), "format": "csv"})


FIRINGS = (("a", 5_000), ("b", 10_000), ("c", 8_500), ("d", 20_000), ("e", -100), ("f", None))
# a: p1 silent since 1 s (4 s), p2 since 3 s (2 s; its last gap 3 s); b: p1's row at 10 s comes first and ends a
# 9 s silence; c: p1 silent 7.5 s; d: p2 silent 11 s (p1 10 s); e: before any row; f: never fired.
EXPECTED = {"a": ("p1", 4_000), "b": ("p1", 9_000), "c": ("p1", 7_500), "d": ("p2", 11_000)}


def _fired(spark, firings):
    return spark.createDataFrame([(k, T0, T0 + S, None if t is None else T0 + t) for k, t in firings],
                                 "key string, window_start_ms long, window_end_ms long, replay_fire_time_ms long")


def _silences(spark, c, firings):
    return {r.key: (r.silent_split, r.silence_ms) for r in silence_at_firing(spark, c, _fired(spark, firings)).collect()}


def test_longest_silence_at_each_firing_alone(spark, src_cfg):
    got = {}
    for f in FIRINGS:
        got.update(_silences(spark, src_cfg, [f]))
    assert got == EXPECTED


def test_a_window_s_silence_does_not_depend_on_the_other_windows_fired(spark, src_cfg):
    assert _silences(spark, src_cfg, FIRINGS) == EXPECTED


def _summary(per_window):
    return silences_from([r.asDict() for r in summary_frame(per_window).collect()])


def test_summary_of_the_silences(spark):
    per_window = spark.createDataFrame(
        [("a", 0, 1, "p1", 4_000), ("b", 0, 1, "p1", 9_000), ("c", 0, 1, "p2", 7_500), ("d", 0, 1, "p1", 11_000),
         ("e", 0, 1, "p2", 500)],
        "key string, window_start_ms long, window_end_ms long, silent_split string, silence_ms long")
    assert _summary(per_window) == Silences(windows=5, shortest_ms=500, median_ms=7_500, longest_ms=11_000,
                                             split="p1", split_windows=3)
    tie = per_window.where("key in ('a', 'c')")  # one window each: the first split by name
    assert _summary(tie) == Silences(windows=2, shortest_ms=4_000, median_ms=4_000, longest_ms=7_500, split="p1",
                                      split_windows=1)


def test_no_source_or_no_window(spark, src_cfg, tmp_path):
    fired = spark.createDataFrame([("a", T0, T0 + S, T0)], "key string, window_start_ms long, window_end_ms long, "
                                                           "replay_fire_time_ms long")
    gone = src_cfg.with_overrides(source={"path": str(tmp_path / "gone.csv")})
    assert silence_at_firing(spark, gone, fired) is None
    empty = spark.createDataFrame([], "key string, window_start_ms long, window_end_ms long, silent_split string, "
                                      "silence_ms long")
    assert _summary(empty) is None
