"""A changed aggregate (compare/changed_aggregate.py): only windows whose rows agree (count equal, no late row on
either side) count; the hint names live = c x replay or live = replay + c when one constant holds everywhere."""
from __future__ import annotations

import pytest

from event_replay.compare.changed_aggregate import changed_aggregate_aggs, changed_aggregate_hints, rows_agree

pytestmark = pytest.mark.spark

SCHEMA = ("id int, class string, eq_cnt boolean, eq_total boolean, eq_mx boolean, replay_late_n long, "
          "late_replay_only_n long, late_live_only_n long, live_total long, replay_total long, live_mx long, "
          "replay_mx long")


def _ev(spark):
    return spark.createDataFrame([
        # id class            eq_cnt eq_tot eq_mx late lro   llo   lt  rt  lmx rmx
        (1, "value_differs", True, False, False, 0, None, None, 20, 10, 7, 5),   # agree: total x2, mx +2
        (2, "value_differs", True, False, False, 0, 0, 0, 30, 15, 9, 7),         # agree: total x2, mx +2
        (3, "value_differs", True, False, True, 1, None, None, 99, 1, 3, 3),     # a late row: left out
        (4, "value_differs", False, False, True, 0, None, None, 99, 1, 3, 3),    # count differs: left out
        (5, "value_differs", True, False, True, 0, 2, None, 99, 1, 3, 3),        # late in replay only
        (6, "replay_only", True, False, True, 0, None, None, 99, 1, 3, 3),       # not a value difference
        (7, "value_differs", True, True, True, 0, None, None, 5, 5, 3, 3),       # all agree
    ], SCHEMA)


def test_rows_agree_keeps_only_same_rows_windows(spark):
    ids = sorted(r.id for r in _ev(spark).where(rows_agree("cnt")).collect())
    assert ids == [1, 2, 7]


def test_ratio_and_offset_hints(spark):
    aggs = ["cnt", "total", "mx"]
    r = _ev(spark).agg(*changed_aggregate_aggs(aggs, "cnt")).first()
    # ca0: total (ratios 2.0, 2.0; diffs 10, 15), ca1: mx (ratios 1.4, 9/7; diffs 2, 2)
    assert (r["ca0_n"], r["ca0_rlo"], r["ca0_rhi"], r["ca0_dlo"], r["ca0_dhi"]) == (2, 2.0, 2.0, 10.0, 15.0)
    assert (r["ca1_n"], r["ca1_dlo"], r["ca1_dhi"]) == (2, 2.0, 2.0)
    assert r["ca1_rlo"] == pytest.approx(9 / 7) and r["ca1_rhi"] == pytest.approx(1.4)
    hints = changed_aggregate_hints(r, aggs, "cnt")
    assert [(h["kind"], h["aggregate"], h["windows"]) for h in hints] == [
        ("changed_aggregate", "total", 2), ("changed_aggregate", "mx", 2)]
    assert hints[0]["text"].endswith("In every one of them live total = 2 x replayed total.")
    assert hints[1]["text"].endswith("In every one of them live mx = replayed mx + 2.")
    assert "2 windows have the same rows on both sides (cnt equal" in hints[0]["text"]


def test_hint_without_a_constant_and_negative_offset():
    row = {"ca0_n": 3, "ca0_rlo": 0.5, "ca0_rhi": 0.9, "ca0_dlo": -4.0, "ca0_dhi": -1.0,
           "ca1_n": 2, "ca1_rlo": 0.5, "ca1_rhi": 0.75, "ca1_dlo": -3.0, "ca1_dhi": -3.0,
           "ca2_n": 0, "ca2_rlo": None, "ca2_rhi": None, "ca2_dlo": None, "ca2_dhi": None}
    hints = changed_aggregate_hints(row, ["a", "cnt", "b", "c"], "cnt")
    assert [h["aggregate"] for h in hints] == ["a", "b"]  # c: no window
    assert "In every one" not in hints[0]["text"]
    assert hints[1]["text"].endswith("live b = replayed b - 3.")
