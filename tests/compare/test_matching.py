"""Matching the live firings to the replay's (compare/matching.py) on small hand-made tables: last firing with and
without a firing order, every firing, duplicates, and late rows by (split, offset) and by (key, time)."""
from __future__ import annotations

import pytest

from compare_frames import S, T0, frames

pytestmark = pytest.mark.spark


def _match(spark, replay_rows, live_rows, has=frozenset(), keeps_updates=False):
    from pyspark.sql import types as T

    from event_replay.compare.classify import classify_windows
    from event_replay.compare.matching import match_windows
    from event_replay.compare.replay_side import Scope
    from event_replay.compare.rules import rules_for

    replay, live = frames(spark, replay_rows, live_rows)
    rules = rules_for({"cnt": "count(*)", "total": "sum(value)"}, {"cnt": T.LongType(), "total": T.LongType()},
                      ["cnt", "total"])
    m = match_windows(replay, live, rules, frozenset(has), keeps_updates)
    return {(r.key, (r.window_start_ms - T0) // S): r.asDict()
            for r in classify_windows(m, ["cnt", "total"], Scope(), keeps_updates).collect()}


def test_last_firing_matching_and_classes(spark):
    W, L = "watermark", "late_row"
    replay = [("a", 0, 0, W, 2, 5), ("a", 0, 1, L, 3, 9),  # re-fired by an allowed-late row: the last is 3/9
              ("b", 0, 0, W, 1, 1), ("c", 1, 0, W, 4, 4), ("d", 2, 0, W, 1, 7)]
    live = [("a", 0, 2, 5, None, T0 + S), ("a", 0, 3, 9, None, T0 + S + 1),  # the sink kept both firings
            ("b", 0, 1, 1, None, T0 + S), ("b", 0, 1, 1, None, T0 + S),  # one firing twice: a duplicate
            ("c", 1, 4, 40, None, T0 + 2 * S),  # a changed value
            ("e", 3, 1, 1, None, T0 + 4 * S)]  # live only; d: replay only
    got = _match(spark, replay, live, has={"fire_watermark"})
    assert {k: v["class"] for k, v in got.items()} == {
        ("a", 0): "equal", ("b", 0): "duplicate", ("c", 1): "value_differs", ("d", 2): "replay_only",
        ("e", 3): "live_only"}
    assert got[("c", 1)]["differing"] == "total" and got[("b", 0)]["live_copies"] == 1
    assert got[("a", 0)]["live_versions"] == 2 and got[("a", 0)]["live_total"] == 9
    # no firing order in the sink: the version equal to the replay's last firing stands for the last
    unordered = _match(spark, replay, [(k, w, c, t, None, None) for k, w, c, t, _, _ in live])
    assert unordered[("a", 0)]["class"] == "equal"
    # with a firing order, an older version last is a difference
    older_last = _match(spark, replay, [("a", 0, 3, 9, None, T0 + S), ("a", 0, 2, 5, None, T0 + S + 1)],
                        has={"fire_watermark"})
    assert older_last[("a", 0)]["class"] == "value_differs"


def test_every_firing_matching(spark):
    W, L = "watermark", "late_row"
    replay = [("a", 0, 0, W, 2, 5), ("a", 0, 1, L, 3, 9), ("b", 0, 0, W, 1, 1), ("b", 0, 1, L, 2, 3)]
    live = [("a", 0, 2, 5, None, None), ("a", 0, 3, 9, None, None), ("a", 0, 3, 9, None, None),
            ("b", 0, 2, 3, None, None)]  # b: the live job fired once, after the late row had arrived
    got = _match(spark, replay, live, keeps_updates=True)
    assert got[("a", 0)]["class"] == "duplicate" and got[("a", 0)]["firings_equal"] == 2
    # the last firings agree, an earlier one does not
    assert got[("b", 0)]["class"] == "value_differs" and got[("b", 0)]["differing"] == "firings"


def test_every_firing_pairs_by_fire_index_with_gaps(spark):
    """Replay firing n meets the live version at position n of the firing order: a replay fire_index a HAVING
    dropped leaves a gap, so the versions after it meet no replay firing or another one; each lone firing or
    version is a pair of its own."""
    W, L = "watermark", "late_row"
    replay = [("d", 0, 0, W, 1, 1), ("d", 0, 2, L, 3, 3),  # fire_index 1 dropped by HAVING
              ("e", 0, 0, W, 1, 1), ("e", 0, 1, L, 2, 2),
              ("f", 0, 0, W, 4, 4), ("g", 0, 0, W, 4, 4), ("h", 0, 1, L, 4, 4)]  # one firing each
    live = [("d", 0, 1, 1, None, T0 + S), ("d", 0, 2, 2, None, T0 + S + 1), ("d", 0, 3, 3, None, T0 + S + 2),
            ("e", 0, 2, 2, None, T0 + S + 1), ("e", 0, 1, 1, None, T0 + S),  # the sink's order: by fire watermark
            ("f", 0, 4, 4, None, T0 + S), ("g", 0, 4, 5, None, T0 + S), ("h", 0, 4, 4, None, T0 + S)]
    got = _match(spark, replay, live, has={"fire_watermark"}, keeps_updates=True)
    d, e = got[("d", 0)], got[("e", 0)]
    f, g, h = got[("f", 0)], got[("g", 0)], got[("h", 0)]
    assert (f["class"], f["firings_compared"], f["firings_equal"]) == ("equal", 1, 1)
    assert (g["class"], g["differing"], g["firings_compared"], g["firings_equal"]) == ("value_differs", "total", 1, 0)
    # h: the replay's one firing has fire_index 1 (0 dropped by HAVING): it meets no version, the version none
    assert (h["class"], h["differing"], h["firings_compared"], h["firings_equal"]) == ("value_differs", None, 1, 0)
    # d: pairs 0 (equal), 1 (the live version alone), 2 (equal)
    assert (d["class"], d["differing"], d["firings_compared"], d["firings_equal"]) == ("value_differs", "firings", 2, 2)
    assert (d["replay_firings"], d["live_versions"], d["values_equal"]) == (2, 3, False)
    assert (e["class"], e["firings_compared"], e["firings_equal"], e["values_equal"]) == ("equal", 2, 2, True)


def test_late_rows_matched_by_identity(spark):
    from event_replay.compare.classify import classify_late
    from event_replay.compare.matching import match_late
    from event_replay.compare.replay_side import Scope

    replay = spark.createDataFrame([("p0", 1, "a", T0 + 5, T0 + 9000, T0 + 20_000, "2024-01-01"),
                                    ("p1", 7, "a", T0 + 5, T0 + 9100, T0 + 20_000, "2024-01-01"),
                                    ("p1", 8, "b", T0 + 6, T0 + 9200, T0 + 20_000, "2024-01-01")],
                                   "split string, offset long, key string, time_ms long, arrival_ms long, "
                                   "late_watermark_ms long, replay_partition string")
    by_offset = spark.createDataFrame([("a", "p0", 1, T0 + 5, None), ("a", "p0", 1, T0 + 5, None),
                                       ("c", "p2", 3, T0 + 7, None)],
                                      "late_key string, late_split string, late_offset long, late_time_ms long, "
                                      "late_arrival_ms long")
    got = {(r.split, r.offset): r for r in classify_late(match_late(replay, by_offset, "split, offset"),
                                                         Scope()).collect()}
    assert got[("p0", 1)]["class"] == "matched" and got[("p0", 1)]["live_duplicates"] == 1
    assert got[("p1", 7)]["class"] == "late_replay_only" and got[("p2", 3)]["class"] == "late_live_only"
    by_time = by_offset.select("late_key", "late_time_ms")
    got = {(r.key, r.time_ms): r for r in match_late(replay, by_time, "key, event time").collect()}
    assert (got[("a", T0 + 5)]["matched"], got[("a", T0 + 5)]["replay_only"]) == (2, 0)
    assert got[("b", T0 + 6)]["replay_only"] == 1 and got[("c", T0 + 7)]["live_only"] == 1
