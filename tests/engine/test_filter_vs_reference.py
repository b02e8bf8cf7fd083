"""The row filter in the Spark engine equals the reference model (docs/semantics.md, "Row filter"): on logs where
the dropped rows move the watermark and keep a split active, under every time notion, in one range and carried
across a cut."""
from __future__ import annotations

import dataclasses

import pytest

from engine_harness import engine_outputs, first_difference, reference_outputs
from event_replay import engine
from event_replay.history.partitions import Clock
from event_replay.io.row_filter import WINDOWED, windowed_flag
from event_replay.semantics.config import parse_config, to_raw
from event_replay.semantics.config_keys import ConfigError
from event_replay.semantics.model import LogRow
from event_replay.semantics.reference import replay
from filter_cases import CASES, MOVES, MOVES_CFG, with_filter
from strategies import config


def check(spark, rows, cfg, declared=None):
    expected = reference_outputs(replay(rows, cfg, declared_splits=declared), cfg)
    got = engine_outputs(spark, rows, cfg, declared)
    assert got == expected, first_difference(got, expected)


@pytest.mark.parametrize("name", [c[0] for c in CASES])
def test_filtered_cases(spark, name):
    _, rows, cfg = next(c for c in CASES if c[0] == name)
    check(spark, rows, cfg)


def test_per_event_emission_and_null_predicates(spark):
    rows = [*MOVES, LogRow("p0", 9, 1700, 1800, "k", {"value": None})]
    cfg = with_filter(dataclasses.replace(MOVES_CFG, watermark=config(
        watermark={"max_out_of_orderness": 0, "emit": "per_event", "interval": 0}).watermark), "value > 0")
    check(spark, rows, cfg)


@pytest.mark.parametrize("time", ["ingestion", "processing"])
def test_other_time_notions(spark, time):
    cfg = config(window={"type": "tumbling", "size": 1000, "time": time},
                 watermark={"strategy": "monotonous", "emit": "per_event", "interval": 0} if time == "processing"
                 else {"max_out_of_orderness": 0})
    check(spark, MOVES, with_filter(cfg, "event_time < 9000 AND value > 0"))


def test_carried_across_a_cut(spark):
    """Two ranges with `hold` then `flush`: the carried window rows are the kept ones only, and the second range's
    dropped rows still drive its watermarks."""
    _, rows, cfg = CASES[0]
    cfg = with_filter(config(source={"splits": ["p0"]}, watermark={"max_out_of_orderness": 0, "interval": 1000},
                             window={"size": 4000}), cfg.filter)
    cut = 1000
    df = spark.createDataFrame([(r.split, r.offset, r.arrival_time, r.event_time, r.key, r.payload["value"])
                                for r in rows], "split string, offset long, arrival_time long, event_time long, "
                                                "key string, value long")
    df = df.withColumn(WINDOWED, windowed_flag(cfg, df, df.columns))
    first, carry = engine.replay(spark, df.where(f"arrival_time < {cut}"), cfg.with_end_of_input("hold"), ["p0"],
                                 Clock(0, cut, id="a"))
    held = first.windows.count()
    second, _ = engine.replay(spark, df.where(f"arrival_time >= {cut}"), cfg.with_end_of_input("flush"), ["p0"],
                              Clock(cut, 2501, id="b"), carry)
    whole = replay(rows, cfg)
    got = sorted(tuple(r) for r in second.windows.select("window_start", "fire_reason", "cnt").collect())
    assert held == 0 and got == sorted((f.window_start, f.fire_reason, f.aggregates["cnt"]) for f in whole.firings)
    assert sorted(r.offset for r in second.late_events.collect()) == [lr.row.offset for lr in whole.late_rows]
    engine.release(spark)


@pytest.mark.parametrize("text, why", [("no_such_column = 1", "is not in the source"),
                                       ("value + 1", "not a boolean"),
                                       ("no_such_function(value) = 1", "Spark cannot evaluate")])
def test_plan_time_refusals_name_the_key(spark, text, why):
    df = spark.createDataFrame([("p0", 0, 0, 0, "k", 1)],
                               "split string, offset long, arrival_time long, event_time long, key string, value long")
    cfg = dataclasses.replace(config(watermark={"max_out_of_orderness": 0}), filter=text)  # parses: Spark refuses
    with pytest.raises(ConfigError) as err:
        windowed_flag(cfg, df, df.columns)
    assert err.value.key == "filter" and why in err.value.why and "\n" not in str(err.value)


def test_filtered_aggregates_count_the_rows_their_condition_keeps(spark):
    """`agg(...) FILTER (WHERE ...)` (what from-flink-sql maps a Flink filtered aggregate to) over each firing's
    rows, late firings and a job filter included: equal to the reference model's rows of the firing, counted."""
    _, rows, cfg = next(c for c in CASES if c[0] == "random_4")
    raw = to_raw(cfg)
    raw["aggregations"] = {"cnt": "count(*)", "big": "count(*) FILTER (WHERE value > 4)",
                           "big_total": "sum(value) FILTER (WHERE value > 4 AND key = 'a')"}
    filtered_aggregates = parse_config(raw)
    values = {(r.split, r.offset): r for r in rows}
    want = []
    for f in replay(rows, cfg).firings:  # the reference's firings and their rows (it evaluates no FILTER itself)
        held = [values[k] for k in f.rows]
        kept = [r.payload["value"] for r in held if r.payload["value"] > 4 and r.key == "a"]
        want.append((f.key, f.window_start, f.window_end, f.fire_index, f.fire_watermark, f.fire_reason, len(held),
                     sum(1 for r in held if r.payload["value"] > 4), sum(kept) if kept else None))
    got = engine_outputs(spark, rows, filtered_aggregates)["firings"]
    assert any(f[5] == "late_row" for f in want) and any(f[6] != f[7] for f in want)
    assert got == sorted(want)
