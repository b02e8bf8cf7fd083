"""What the differences together suggest (compare/hints.py), from hand-made explained windows: duplicates, late
rows on one side, re-firings, idleness, a changed aggregate, a split never read, windows the live job had not fired
yet or read alone, and timing notes; each hint's figures counted by hand."""
from __future__ import annotations

import pytest

from compare_frames import S, T0, cfg
from event_replay.attribution import ALL_IDLE
from event_replay.compare.hints import hints

pytestmark = pytest.mark.spark

COLS = ("id int, class string, replay_first_reason string, timing string, idle_before string, held_by string, "
        "window_end_ms long, live_copies long, late_replay_only_n long, late_live_only_n long, differing string, "
        "replay_firings long, live_versions long, count_delta long, replay_late_n long, eq_cnt boolean, "
        "eq_total boolean, live_total long, replay_total long")
BASE = dict(id=0, **{"class": "value_differs"}, replay_first_reason="watermark", timing=None, idle_before=None,
            held_by=None, window_end_ms=T0 + S, live_copies=0, late_replay_only_n=None, late_live_only_n=None,
            differing="", replay_firings=1, live_versions=1, count_delta=0, replay_late_n=0, eq_cnt=True,
            eq_total=True, live_total=1, replay_total=1)
NAMES = [c.split()[0] for c in COLS.split(", ")]
NEAR = dict(idle_before="p1 at 2024-01-01 00:00:01.000")


def _ev(spark, rows):
    return spark.createDataFrame([tuple({**BASE, **r}[n] for n in NAMES) for r in rows], COLS)


def test_every_hint_from_one_set_of_windows(spark):
    ev = _ev(spark, [
        dict(id=1, **{"class": "duplicate"}, window_end_ms=T0 + S, live_copies=1),
        dict(id=2, **{"class": "duplicate"}, window_end_ms=T0 + 3 * S, live_copies=2),
        dict(id=3, late_replay_only_n=3, count_delta=3, replay_late_n=3, eq_cnt=False, **NEAR),
        dict(id=4, differing="firings", replay_firings=2, count_delta=2, eq_cnt=False, held_by=ALL_IDLE),
        dict(id=5, differing="firings,cnt", live_versions=2, late_live_only_n=1, count_delta=-1, eq_cnt=False),
        dict(id=6, eq_total=False, live_total=20, replay_total=10, **NEAR),
        dict(id=7, **{"class": "replay_only"}, replay_first_reason="end_of_input", count_delta=None),
        dict(id=8, **{"class": "live_only"}, count_delta=None),
        dict(id=9, **{"class": "equal"}, timing="other_watermark"),
        dict(id=10, differing="firings", replay_firings=3, **NEAR)])
    c = cfg().with_overrides(watermark={"idle_timeout": "30s"})
    out = hints(ev, c, ["cnt", "total"], "cnt", frozenset(), None)
    assert [(h["kind"], h["windows"]) for h in out] == [
        ("duplicates", 2), ("live_watermark_behind", None), ("live_watermark_ahead", None), ("refirings", 3),
        ("idleness", 4), ("changed_aggregate", 1), ("not_fired_live", 1), ("live_only_unread", 1), ("timing", 1)]
    t = {h["kind"]: h["text"] for h in out}
    assert t["duplicates"].startswith("2 windows are in the live output more than once (3 extra copies of identical "
                                      "firings), window ends 2024-01-01 00:00:10 to 2024-01-01 00:00:30")
    assert t["live_watermark_behind"].startswith("3 rows were late in the replay only: the live job still accepted "
                                                 "them, so its watermark was behind the replay's when they arrived")
    assert "(max out-of-orderness 1s, idle timeout 30s)" in t["live_watermark_behind"]
    assert t["live_watermark_ahead"].startswith("1 row was late in the live job only")
    assert t["refirings"].startswith("3 windows were fired a different number of times (the replay more often in 2, "
                                     "the live job in 1)") and "mostly behind the replay's" in t["refirings"]
    assert t["idleness"].startswith("4 of the 7 differing windows were fired by the replay right after a split went "
                                    "idle (idle timeout 30s)")
    assert t["changed_aggregate"].endswith("live total = 2 x replayed total.")
    # Without an idle timeout the same windows say nothing of idleness.
    assert "idleness" not in [h["kind"] for h in hints(ev, cfg(), ["cnt", "total"], "cnt", frozenset(), None)]


def test_higher_live_counts_and_a_split_never_read(spark):
    ev = _ev(spark, [dict(id=i, count_delta=d, eq_cnt=False) for i, d in ((1, 4), (2, 1), (3, -2))])
    ev = ev.selectExpr("*", "case when id < 3 then map('p1', 2L) end as source_rows_by_split",
                       "case when id < 3 then 'p1' end as missing_split")
    out = hints(ev, cfg(), ["cnt", "total"], "cnt", frozenset(), None)
    assert [h["kind"] for h in out] == ["live_counts_higher", "split_not_read"]
    assert out[0]["text"].startswith("The live counts are higher by 5 rows in all")
    assert (out[1]["split"], out[1]["windows"]) == ("p1", 2)
    # Without a count column neither is looked for.
    assert hints(ev, cfg(), ["total"], None, frozenset(), None) == []


def test_the_live_late_output_counts_the_late_rows(spark):
    ev = _ev(spark, [dict(id=1, late_replay_only_n=3, count_delta=3, eq_cnt=False)])
    lm = spark.createDataFrame([(0, 1, 5), (0, 0, 2)], "replay_only long, live_only long, matched long")
    out = hints(ev, cfg(), ["cnt", "total"], "cnt", frozenset(), lm)
    assert [h["kind"] for h in out] == ["live_watermark_ahead"]  # the replay-only 3 of the windows do not count
    assert out[0]["text"].startswith("1 row was late in the live job only: its watermark ran ahead")
