"""Each differing window's explanation (compare/window_text.py), one sentence per finding, on hand-made evidence
rows: late rows on one side, a split not read, a changed aggregate, re-firings, duplicates, timing, the split that
held the stream, idle spans, and the fallback when nothing explains the window."""
from __future__ import annotations

import pytest

from compare_frames import T0, cfg
from event_replay.attribution import ALL_IDLE
from event_replay.compare.window_text import explanation

pytestmark = pytest.mark.spark

COLS = ("id int, class string, count_delta long, late_replay_only_n long, late_live_only_n long, replay_late_n long, "
        "replay_late_wm long, live_cnt long, missing_split string, source_rows string, eq_cnt boolean, "
        "eq_total boolean, live_total long, replay_total long, replay_firings long, live_versions long, "
        "differing string, live_copies long, live_rows long, in_replay boolean, in_live boolean, "
        "live_fire_watermark_ms long, replay_fire_watermark_ms long, replay_first_watermark_ms long, "
        "replay_fire_time_ms long, replay_first_reason string, held_by string, idle_before string")
BASE = dict(id=0, **{"class": "value_differs"}, count_delta=0, late_replay_only_n=None, late_live_only_n=None,
            replay_late_n=0, replay_late_wm=None, live_cnt=1, missing_split=None, source_rows=None, eq_cnt=True,
            eq_total=True, live_total=1, replay_total=1, replay_firings=1, live_versions=1, differing="",
            live_copies=0, live_rows=1, in_replay=False, in_live=True, live_fire_watermark_ms=None,
            replay_fire_watermark_ms=None, replay_first_watermark_ms=None, replay_fire_time_ms=None,
            replay_first_reason=None, held_by=None, idle_before=None)
NAMES = [c.split()[0] for c in COLS.split(", ")]


def _texts(spark, rows, c=None, has=frozenset(), live_late=False, cnt="cnt"):
    df = spark.createDataFrame([tuple({**BASE, **r}[n] for n in NAMES) for r in rows], COLS)
    e = explanation(c or cfg(), ["cnt", "total"], cnt, has, live_late)
    return {r.id: r.t for r in df.select("id", e.alias("t")).collect()}


def test_late_rows_on_one_side_and_the_live_count_higher_by_them(spark):
    t = _texts(spark, [
        dict(id=1, late_replay_only_n=2, replay_late_wm=T0 + 1_500, eq_cnt=False, count_delta=5, replay_late_n=2),
        dict(id=2, late_live_only_n=1, eq_cnt=False, count_delta=-1),
        dict(id=3, count_delta=3, replay_late_n=3, replay_late_wm=T0, eq_cnt=False)])
    assert t[1] == ("2 rows were late in the replay only (the replay's watermark had reached 2024-01-01 "
                    "00:00:01.500 when they arrived) and counted by the live job: the live watermark was behind "
                    "the replay's")  # count_delta 5 != 2 late rows: no 'higher by exactly'
    assert t[2] == "1 row was late in the live job only, counted by the replay: the live watermark had run ahead of " \
                   "the replay's"
    assert t[3] == ("the live count is higher by exactly the 3 rows the replay dropped as late (watermark "
                    "2024-01-01 00:00:00.000): the live job's watermark was behind the replay's when they arrived")
    # With the live late output, the same window reads as dropped on both sides.
    t = _texts(spark, [dict(id=3, count_delta=3, replay_late_n=3, replay_late_wm=T0, eq_cnt=False)], live_late=True)
    assert t[3] == "the replay dropped 3 rows of this window as late (watermark 2024-01-01 00:00:00.000), and so " \
                   "did the live job"


def test_split_changed_aggregate_refirings_duplicates(spark):
    c = cfg().with_overrides(window={"allowed_lateness": "5s"})
    t = _texts(spark, [
        dict(id=1, **{"class": "replay_only"}, missing_split="p2", source_rows="p1 3, p2 4", eq_cnt=False,
             live_cnt=None),
        dict(id=2, eq_total=False, live_total=20, replay_total=10),
        dict(id=3, differing="firings", replay_firings=3, live_versions=1),
        dict(id=4, differing="firings", replay_firings=1, live_versions=2),
        dict(id=5, **{"class": "duplicate"}, live_copies=1, live_rows=2),
        dict(id=6, **{"class": "duplicate"}, live_copies=2, live_rows=3)], c=c)
    assert t[1] == ("the live output lacks exactly the rows of split p2 in this window (source rows per split: "
                    "p1 3, p2 4): the live job did not read split p2")
    assert t[2] == ("the rows agree (cnt equal, no late row on either side) but total is 20 live vs 10 replayed: the "
                    "live job computes total differently (a changed aggregate?)")
    assert t[3].startswith("the replay fired it 3 time(s), the live job 1 time(s): rows that arrived after the "
                           "replay's first firing re-fired it (allowed lateness 5s)")
    assert t[4].startswith("the replay fired it 1 time(s), the live job 2 time(s): rows that arrived after the live "
                           "job's first firing") and t[4].endswith("the live watermark was ahead of the replay's")
    assert t[5] == ("the live output holds this window 2 times (1 extra copy of the same firing): an at-least-once "
                    "sink re-emitted it, e.g. after a restart")
    assert "3 times (2 extra copies" in t[6]


def test_timing_holders_idle_and_nothing(spark):
    c = cfg().with_overrides(watermark={"idle_timeout": "30s"})
    both = dict(in_replay=True, in_live=True, replay_first_watermark_ms=T0 + 9_999, replay_fire_time_ms=T0 + 12_000)
    t = _texts(spark, [
        dict(id=1, **{"class": "equal"}, in_replay=True, live_fire_watermark_ms=T0 + 5_000,
             replay_fire_watermark_ms=T0 + 4_000),
        dict(id=2, **both, held_by="p1"),
        dict(id=3, **both, held_by=ALL_IDLE),
        dict(id=4, **both, replay_first_reason="end_of_input", held_by="p1"),
        dict(id=5, **both, replay_first_reason="late_row"),
        dict(id=6, **both, idle_before="p3 at 2024-01-01 00:00:02.000"),
        dict(id=7, **{"class": "live_only"}),
        dict(id=8)], c=c, has=frozenset({"fire_watermark"}))
    assert t[1] == "the live job fired it at watermark 2024-01-01 00:00:05.000, the replay at 2024-01-01 00:00:04.000"
    assert t[2] == ("the replay first fired it at watermark 2024-01-01 00:00:09.999 (replay time 2024-01-01 "
                    "00:00:12.000) when split p1 held the stream")
    assert t[3].endswith("when every split was idle (the stream jumped to the largest watermark)")
    assert t[4].startswith("the replay fired it only at the end of input (flush)")
    assert t[5].startswith("the replay opened it after its end had passed")
    assert t[6].startswith("split(s) went idle just before, on the replay clock: p3 at 2024-01-01 00:00:02.000 "
                           "(idle timeout 30s)")
    assert t[7].startswith("the replay has no such window and no late row of it")
    assert t[8] == "no evidence in the replay's outputs explains it"
    # Without fire watermarks or an idle timeout those sentences are not written.
    t = _texts(spark, [dict(id=1, **{"class": "equal"}, live_fire_watermark_ms=T0 + 5_000,
                            replay_fire_watermark_ms=T0 + 4_000, in_replay=True),
                       dict(id=6, idle_before="p3 at x")])
    assert t == {1: "no evidence in the replay's outputs explains it", 6: "no evidence in the replay's outputs "
                                                                          "explains it"}
