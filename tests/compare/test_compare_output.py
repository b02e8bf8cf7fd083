"""Writing `compare/` (compare/output.py): the per-window table of every class with its evidence, the differences
as CSV, the partitions, summary.json (read back by `read_summary`) and the page, swapped in whole; a URL refused.
The figures themselves: test_classify.py and test_explain.py."""
from __future__ import annotations

import json

import pandas as pd
import pytest
from pyspark.sql import types as T

from compare_frames import S, T0, cfg, frames
from event_replay.compare.classify import classify_windows, partition_counts, totals
from event_replay.compare.explain import explain
from event_replay.compare.live_spec import CompareInputError
from event_replay.compare.matching import match_windows
from event_replay.compare.output import write_compare
from event_replay.compare.summary import read_summary
from event_replay.compare.page import render
from event_replay.compare.replay_side import Scope
from event_replay.compare.rules import rules_for

AGGS = ["cnt", "total"]


def _compared(spark):
    """Window 0 equal, window 1 differing in total, window 2 fired by the replay alone."""
    c = cfg()
    replay, live = frames(spark, [("a", 0, 0, "watermark", 2, 5), ("a", 1, 0, "watermark", 1, 1),
                                  ("a", 2, 0, "watermark", 3, 3)],
                          [("a", 0, 2, 5, None, None), ("a", 1, 1, 7, None, None)])
    rules = rules_for(c.aggregations, {"cnt": T.LongType(), "total": T.LongType()}, AGGS)
    windows = classify_windows(match_windows(replay, live, rules, frozenset(), False), AGGS, Scope(), False)
    late = spark.createDataFrame([], "key string, time_ms long, split string, late_watermark_ms long")
    wm = spark.createDataFrame([], "scope string, split string, idle boolean, watermark_ms long, replay_time_ms long")
    explained = explain(spark, c, windows, late, wm, None, AGGS, frozenset(), use_source=False)
    parts = partition_counts(windows, None)
    summary = {"output_path": "/out", "scope": "all", "live": {"path": "/live", "format": "json", "rows": 2},
               "mode": "last firing per window", "rules": [{"aggregate": "cnt", "text": "cnt: exact"}],
               "totals": totals(parts), "partitions": parts, "min_agreement_pct": 99.0, "hints": explained.hints}
    return windows, explained.windows, summary


@pytest.mark.spark
def test_compare_folder_holds_every_window_and_the_differences(spark, tmp_path):
    windows, explained, summary = _compared(spark)
    out = tmp_path / "compare"
    written = write_compare(str(out), summary, windows, explained, None, AGGS)
    table = spark.read.parquet(str(out / "windows")).orderBy("window_start_ms").toPandas()
    assert list(table["class"]) == ["equal", "value_differs", "replay_only"]
    assert list(table["window_start_ms"]) == [T0, T0 + S, T0 + 2 * S]
    assert table.loc[0, "explanation"] is None and table.loc[1, "explanation"] and table.loc[2, "explanation"]
    assert (table.loc[1, "replay_total"], table.loc[1, "live_total"]) == (1, 7)
    diff = pd.read_csv(out / "differences.csv")
    assert list(diff["class"]) == ["value_differs", "replay_only"]
    assert list(diff["window_start"]) == ["2024-01-01 00:00:10.000", "2024-01-01 00:00:20.000"]
    assert "window_start_ms" not in diff.columns  # times as UTC text
    assert list(pd.read_csv(out / "partitions.csv")["windows"]) == [3]
    assert pd.read_parquet(out / "partitions.parquet")["windows"].tolist() == [3]
    assert read_summary(out) == json.loads(json.dumps(written, default=str))
    assert [d["class"] for d in written["differences_sample"]] == ["value_differs", "replay_only"]
    assert written["files"] == {"windows": "windows/", "differences": "differences.csv",
                                "partitions": "partitions.csv"}
    assert written["page"] == str(out / "index.html")
    assert (out / "index.html").read_text() == render(read_summary(out))  # the page comes from the summary alone
    # Written again: the folder is replaced whole, and nothing is left beside it.
    write_compare(str(out), dict(summary), windows.where("class = 'equal'"), explained.limit(0), None, AGGS)
    assert pd.read_csv(out / "differences.csv").empty
    assert sorted(p.name for p in tmp_path.iterdir()) == ["compare"]


@pytest.mark.spark
def test_windows_files_follow_from_the_rows_alone(spark, tmp_path):
    """windows/: each file sorted by (partition, window_end_ms, key, window_start_ms), a window's file fixed by its
    id: the same files whatever the partitions of the frames written."""
    from pyspark.sql import functions as F
    windows, explained, summary = _compared(spark)
    written = {}
    for name, cut in (("one", lambda df: df.coalesce(1)), ("many", lambda df: df.repartition(5, F.rand(3)))):
        write_compare(str(tmp_path / name), dict(summary), cut(windows), cut(explained), None, AGGS)
        files = [pd.read_parquet(f) for f in sorted((tmp_path / name / "windows").glob("part-*.parquet"))]
        order = ["partition", "window_end_ms", "key", "window_start_ms"]
        assert all(f[order].equals(f[order].sort_values(order, ignore_index=True)) for f in files)
        written[name] = sorted(tuple(f["window_start_ms"]) for f in files if len(f))
    assert written["one"] == written["many"] and sum(map(len, written["one"])) == 3


def test_a_url_is_refused_and_a_missing_summary_is_none(tmp_path):
    with pytest.raises(CompareInputError, match="local filesystem"):
        write_compare("s3a://bucket/compare", {}, None, None, None, AGGS)
    assert read_summary(tmp_path) is None
    (tmp_path / "summary.json").write_text("{half")
    assert read_summary(tmp_path) is None
