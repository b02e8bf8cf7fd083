"""The pieces of `replay compare` on small hand-made tables: the exactness rules, reading the live output (every bad
input named), matching (last firing with and without a firing order, every firing, duplicates), classification
per partition and scope, late rows by (split, offset) and by (key, time)."""
from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from event_replay.compare.live import AGG_PREFIX, CompareInputError, LiveSpec, parse_mapping
from event_replay.semantics.config import parse_config

pytestmark = pytest.mark.spark

S = 10_000  # tumbling 10 s
T0 = 1_704_067_200_000  # 2024-01-01T00:00:00Z


def cfg(**aggs):
    return parse_config({"source": {"path": "unused"}, "watermark": {"max_out_of_orderness": "1s"},
                         "window": {"type": "tumbling", "size": "10s"},
                         "aggregations": aggs or {"cnt": "count(*)", "total": "sum(value)"},
                         "output": {"path": "unused"}})


def test_rules_per_aggregate():
    from pyspark.sql import types as T

    from event_replay.compare.rules import rules_for

    aggs = {"cnt": "count(*)", "total": "sum(value)", "avg_v": "avg(value)", "hi": "max(v)", "d": "sum(d)"}
    types = {"cnt": T.LongType(), "total": T.LongType(), "avg_v": T.DoubleType(), "hi": T.DoubleType(),
             "d": T.DecimalType(20, 2)}
    rules = {r.aggregate: r for r in rules_for(aggs, types, list(aggs))}
    assert [rules[a].exact for a in aggs] == [True, True, False, True, True]
    assert "summation order is unknown" in rules["avg_v"].why and rules["avg_v"].tolerance == 1e-9
    known = {r.aggregate: r for r in rules_for(aggs, types, list(aggs), summation_order="known")}
    assert all(r.exact for r in known.values())
    with pytest.raises(CompareInputError, match="--float-tolerance"):
        rules_for(aggs, types, list(aggs), tolerance=2.0)


def test_tolerance_only_for_floating_sums(spark):
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    from event_replay.compare.rules import rules_for, equal

    (tol,) = rules_for({"s": "sum(x)"}, {"s": T.DoubleType()}, ["s"])
    (exact,) = rules_for({"n": "count(*)"}, {"n": T.LongType()}, ["n"])
    df = spark.createDataFrame([(0.1 + 0.2, 0.3, 3, 3), (1e12 + 1e-3, 1e12, 5, 6), (None, None, None, 1),
                                (1.0, 1.001, 7, 7)], "a double, b double, m long, n long")
    got = df.select(equal(tol, F.col("a"), F.col("b")).alias("t"), equal(exact, F.col("m"), F.col("n")).alias("e"))
    assert [tuple(r) for r in got.collect()] == [(True, True), (True, False), (True, False), (False, True)]


def test_mapping_parse():
    assert parse_mapping("key=user, window_start=ws,cnt=n", "--live-columns") == \
        {"key": "user", "window_start": "ws", "cnt": "n"}
    with pytest.raises(CompareInputError, match="twice"):
        parse_mapping(["key=a", "key=b"], "--live-columns")
    with pytest.raises(CompareInputError, match="ROLE=COLUMN"):
        parse_mapping("key", "--live-columns")
    with pytest.raises(CompareInputError, match="unknown role 'cnnt'"):
        LiveSpec(path="x", columns={"cnnt": "n"}).check(cfg())


def _live_table(tmp: Path, rows: list[dict], name: str = "live", fmt: str = "parquet") -> str:
    path = tmp / name
    path.mkdir()
    if fmt == "json":
        (path / "part-0.json").write_text("".join(json.dumps(r) + "\n" for r in rows))
    else:
        pq.write_table(pa.Table.from_pylist(rows), path / "part-0.parquet")
    return str(path)


def _types():
    from pyspark.sql import types as T

    return {"cnt": T.LongType(), "total": T.LongType()}


def test_live_reading_normalises_and_names_bad_input(spark, tmp_path):
    from event_replay.compare.live import read_live

    good = [{"user": "a", "ws": "2024-01-01T00:00:00Z", "we": "2024-01-01T00:00:10Z", "n": 3, "s": "12", "wm": T0 + S}]
    path = _live_table(tmp_path, good, fmt="json")
    spec = LiveSpec(path=path, format="json", columns={"key": "user", "window_start": "ws", "window_end": "we",
                                                       "cnt": "n", "total": "s", "fire_watermark": "wm"})
    live = read_live(spark, spec, cfg(), _types())
    r = live.firings.first()
    assert (r.key, r.window_start_ms, r.window_end_ms, r[AGG_PREFIX + "cnt"], r[AGG_PREFIX + "total"],
            r.fire_watermark_ms) == ("a", T0, T0 + S, 3, 12, T0 + S)
    assert live.has == frozenset({"fire_watermark"}) and live.rows == 1

    def refused(rows, match, **columns):
        p = _live_table(tmp_path, rows, name=f"bad{len(list(tmp_path.iterdir()))}", fmt="json")
        with pytest.raises(CompareInputError, match=match):
            read_live(spark, LiveSpec(path=p, format="json", columns={**spec.columns, **columns}), cfg(), _types())

    missing = [{k: v for k, v in good[0].items() if k != "n"}]
    refused(missing, "live column 'n'.*missing: role cnt")
    refused([{**good[0], "n": "three"}], "live column 'n'.*not a valid value of aggregate cnt.*'three'")
    refused([{**good[0], "n": 2.5}], "live column 'n'.*not a valid value of aggregate cnt.*2.5")
    refused([{**good[0], "ws": "soon"}], "live column 'ws'.*not a valid window_start.*'soon'")
    refused([{**good[0], "ws": T0 // 1000, "we": T0 // 1000 + 10}], "no live window is 10000 ms long.*epoch seconds")
    refused([{**good[0], "user": {"id": 1}}], "live column 'user'.*for the key: not comparable")
    refused(good, "live column 'fired'.*missing", fire_time="fired")
    with pytest.raises(CompareInputError, match="--live: no such file"):
        read_live(spark, LiveSpec(path=str(tmp_path / "nowhere")), cfg(), _types())


def _frames(spark, replay_rows, live_rows):
    """Normalised replay firings and live firings from tuples."""
    replay = spark.createDataFrame(
        [(k, T0 + w * S, T0 + (w + 1) * S, i, T0 + (w + 1) * S + i, r, c, t, "2024-01-01")
         for k, w, i, r, c, t in replay_rows],
        f"key string, window_start_ms long, window_end_ms long, fire_index long, fire_watermark_ms long, "
        f"fire_reason string, {AGG_PREFIX}cnt long, {AGG_PREFIX}total long, replay_partition string")
    live = spark.createDataFrame(
        [(k, T0 + w * S, T0 + (w + 1) * S, c, t, fi, wm, None, None) for k, w, c, t, fi, wm in live_rows],
        f"key string, window_start_ms long, window_end_ms long, {AGG_PREFIX}cnt long, {AGG_PREFIX}total long, "
        "fire_index long, fire_watermark_ms long, fire_time_ms long, live_partition string")
    return replay, live


def _match(spark, replay_rows, live_rows, has=frozenset(), keeps_updates=False):
    from pyspark.sql import types as T

    from event_replay.compare.classify import classify_windows
    from event_replay.compare.matching import match_windows
    from event_replay.compare.replay_side import Scope
    from event_replay.compare.rules import rules_for

    replay, live = _frames(spark, replay_rows, live_rows)
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


def test_partition_counts_and_scope(spark):
    from event_replay.compare.classify import partition_counts, totals
    from event_replay.compare.replay_side import Scope

    rows = [("a", 0, 0, "watermark", 1, 1), ("a", 1, 0, "watermark", 1, 1)]
    replay, live = _frames(spark, rows, [("a", 0, 1, 1, None, None), ("a", 1, 2, 2, None, None)])
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
