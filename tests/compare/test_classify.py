"""Classifying the compared windows and counting them per partition (compare/classify.py): the counts per class,
agreement per partition and over the sums, the scope kept, the threshold never summed."""
from __future__ import annotations

import pytest

from compare_frames import T0, frames
from event_replay.compare.live_spec import CompareInputError


@pytest.mark.spark
def test_partition_counts_and_scope(spark):
    from event_replay.compare.classify import partition_counts, totals
    from event_replay.compare.replay_side import Scope

    rows = [("a", 0, 0, "watermark", 1, 1), ("a", 1, 0, "watermark", 1, 1)]
    replay, live = frames(spark, rows, [("a", 0, 1, 1, None, None), ("a", 1, 2, 2, None, None)])
    from pyspark.sql import functions as F

    replay = replay.withColumn("replay_partition", F.when(F.col("window_start_ms") == T0, "2024-01-01")
                               .otherwise("2024-01-02"))
    from pyspark.sql import types as T

    from event_replay.compare.classify import classify_windows
    from event_replay.compare.matching import match_windows
    from event_replay.compare.rules import rules_for

    rules = rules_for({"cnt": "count(*)", "total": "sum(value)"}, {"cnt": T.LongType(), "total": T.LongType()},
                      ["cnt", "total"])
    m = match_windows(replay, live, rules, frozenset(), False)
    per = partition_counts(classify_windows(m, ["cnt", "total"], Scope(), False), None)
    assert [(p["partition"], p["windows"], p["equal"], p["value_differs"], p["agreement_pct"]) for p in per] == \
        [("2024-01-01", 1, 1, 0, 100.0), ("2024-01-02", 1, 0, 1, 0.0)]
    assert totals(per)["agreement_pct"] == 50.0
    # the threshold is each partition's, not a count: it is not summed into the totals (it was: 200 for two days)
    assert "min_agreement_pct" not in totals([{**p, "min_agreement_pct": 99.5} for p in per])
    one = partition_counts(classify_windows(m, ["cnt", "total"], Scope.parse("2024-01-02", None), False), None)
    assert [p["partition"] for p in one] == ["2024-01-02"]
    assert Scope.parse(None, "2024-01-01..2024-01-03").widened() == ("2023-12-31", "2024-01-04")
    with pytest.raises(CompareInputError, match="exclude each other"):
        Scope.parse("2024-01-01", "2024-01-01..2024-01-02")


def test_totals_sum_the_counts_and_recompute_the_agreement():
    from event_replay.compare.classify import CLASSES, totals

    rows = [{"partition": "2024-01-01", "windows": 3, "equal": 2, "duplicate": 1, "value_differs": 0,
             "replay_only": 0, "live_only": 0, "differing": 0, "agreeing": 3, "agreement_pct": 100.0,
             "late_matched": 4, "late_replay_only": None},
            {"partition": "2024-01-02", "windows": 1, "equal": 0, "duplicate": 0, "value_differs": 0,
             "replay_only": 1, "live_only": 0, "differing": 1, "agreeing": 0, "agreement_pct": 0.0,
             "late_matched": 1, "late_replay_only": 2}]
    t = totals(rows)
    assert (t["windows"], t["agreeing"], t["differing"], t["replay_only"]) == (4, 3, 1, 1)
    assert (t["late_matched"], t["late_replay_only"]) == (5, 2)  # a missing count is 0
    assert t["agreement_pct"] == 75.0  # of the sums, not the mean of 100 % and 0 %
    assert "partition" not in t
    none = totals([])
    assert none["agreement_pct"] == 100.0 and all(none[c] == 0 for c in (*CLASSES, "windows", "differing"))
