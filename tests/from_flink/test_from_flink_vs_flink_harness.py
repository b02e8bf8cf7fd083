"""Converted Flink SQL scripts replayed by Spark (`replay run`'s job) and run by the Flink differential harness
(tests/flink: Apache Flink's own watermark generators and window operator) with the same settings: the firings and
late rows must be equal (issue 30, item 8).

Each script exercises what the converter reads: a legacy group window with a computed rowtime (TO_TIMESTAMP_LTZ)
under a half-hour local time zone (window.offset) and a SET after the query that must not apply; a HOP TVF with an
offset over a view that renames columns, with an idle timeout; a legacy SESSION window with `WATERMARK FOR ts AS ts`;
a TUMBLE TVF whose query and view filter rows (WHERE: the replay's `filter`, the dropped rows still moving the
watermark; the harness drops them between its watermark operator and the window).
The harness computes count(*) and sum(value): the scripts aggregate COUNT(*) and SUM of a BIGINT `value`.
Markers `flink` and `spark`."""
from __future__ import annotations

import random
import sys
import textwrap
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "flink"))

from event_replay.from_flink.sql import config_from_flink_sql  # noqa: E402
from event_replay.semantics.model import LogRow  # noqa: E402
from flink_harness import run_flink  # noqa: E402

pytestmark = [pytest.mark.flink, pytest.mark.spark]

SCRIPTS = {
    "legacy_tumble_ltz_kolkata": """\
        SET 'table.local-time-zone' = 'Asia/Kolkata';
        SET 'pipeline.auto-watermark-interval' = '1 s';
        CREATE TABLE rides (
          city STRING,
          `value` BIGINT,
          ts_ms BIGINT,
          ts AS TO_TIMESTAMP_LTZ(ts_ms, 3),
          WATERMARK FOR ts AS ts - INTERVAL '2' SECOND
        ) WITH ('connector' = 'kafka');
        SELECT city, TUMBLE_START(ts, INTERVAL '1' HOUR) AS hour_start, COUNT(*) AS cnt, SUM(`value`) AS total
        FROM rides
        GROUP BY TUMBLE(ts, INTERVAL '1' HOUR), city;
        SET 'pipeline.auto-watermark-interval' = '7 s';
        """,
    "hop_offset_over_view": """\
        SET 'table.exec.source.idle-timeout' = '20 s';
        SET 'pipeline.auto-watermark-interval' = '500 ms';
        CREATE TABLE raw_orders (
          shop STRING,
          `value` BIGINT,
          created TIMESTAMP(3),
          WATERMARK FOR created AS created - INTERVAL '1.5' SECOND
        ) WITH ('connector' = 'kafka');
        CREATE VIEW orders AS SELECT shop AS shop_id, `value` AS amount, created AS order_time FROM raw_orders;
        SELECT shop_id, window_start, window_end, COUNT(*) AS cnt, SUM(amount) AS total
        FROM TABLE(HOP(TABLE orders, DESCRIPTOR(order_time), INTERVAL '10' MINUTE, INTERVAL '25' MINUTE,
                       INTERVAL '3' MINUTE))
        GROUP BY shop_id, window_start, window_end;
        """,
    "legacy_session_ascending": """\
        CREATE TABLE clicks (
          user_id STRING,
          `value` BIGINT,
          click_time TIMESTAMP(3),
          WATERMARK FOR click_time AS click_time
        ) WITH ('connector' = 'kafka');
        SELECT user_id, SESSION_START(click_time, INTERVAL '4' MINUTE) AS s, COUNT(*) AS cnt, SUM(`value`) AS total
        FROM clicks
        GROUP BY SESSION(click_time, INTERVAL '4' MINUTE), user_id;
        """,
    "tumble_where_over_filtering_view": """\
        CREATE TABLE requests (
          host STRING,
          `value` BIGINT,
          ts TIMESTAMP(3),
          WATERMARK FOR ts AS ts - INTERVAL '3' SECOND
        ) WITH ('connector' = 'kafka');
        CREATE VIEW sized AS SELECT host AS server, `value`, ts FROM requests WHERE `value` >= 0;
        SELECT server, window_start, window_end, COUNT(*) AS cnt, SUM(`value`) AS total
        FROM TABLE(TUMBLE(TABLE sized, DESCRIPTOR(ts), INTERVAL '10' MINUTE))
        WHERE server <> 'k3' AND `value` < 40
        GROUP BY server, window_start, window_end;
        """,
}


def _rows(seed: int, n: int = 400) -> list[LogRow]:
    """Three splits, events over ~5 hours, out of order by up to a few seconds, a few much later (late rows), a
    split that falls silent for a while (idleness)."""
    rnd = random.Random(seed)
    base = 1_700_000_000_000
    rows, offsets = [], {"p0": 0, "p1": 0, "p2": 0}
    arrival = base
    for i in range(n):
        arrival += rnd.randint(1000, 90_000)
        split = rnd.choice(["p0", "p1", "p2"] if not 150 <= i < 200 else ["p0", "p1"])
        event = arrival - rnd.randint(0, 4000) - (rnd.randint(600_000, 1_800_000) if rnd.random() < 0.05 else 0)
        key, value = f"k{rnd.randint(0, 3)}", rnd.randint(-5, 50)
        rows.append(LogRow(split, offsets[split], arrival, event, key, {"value": value}))
        offsets[split] += 1
    return rows


def _write_log(rows: list[LogRow], cfg, root: Path) -> None:
    cols = cfg.source.columns
    root.mkdir(parents=True)
    pq.write_table(pa.table({
        cols["split"]: pa.array([r.split for r in rows], pa.string()),
        cols["offset"]: pa.array([r.offset for r in rows], pa.int64()),
        cols["arrival_time"]: pa.array([r.arrival_time for r in rows], pa.int64()),
        cols["event_time"]: pa.array([r.event_time for r in rows], pa.int64()),
        cols["key"]: pa.array([r.key for r in rows], pa.string()),
        "value": pa.array([r.payload["value"] for r in rows], pa.int64()),
    }), root / "part-0.parquet")


@pytest.fixture(scope="module")
def converted(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("converted")
    out = {}
    for n, (name, sql) in enumerate(SCRIPTS.items()):
        f = tmp / f"{name}.sql"
        f.write_text(textwrap.dedent(sql))
        _, cfg = config_from_flink_sql(f, source_path=str(tmp / name / "log"), output_path=str(tmp / name / "out"),
                                       splits=["p0", "p1", "p2"])
        out[name] = (cfg, _rows(seed=30 + n))
    return out


@pytest.fixture(scope="module")
def flink(converted):
    names = list(converted)
    results = run_flink([(rows, cfg, list(cfg.source.splits)) for cfg, rows in converted.values()])
    return dict(zip(names, results))


def test_the_scripts_convert_as_intended(converted):
    kolkata, _ = converted["legacy_tumble_ltz_kolkata"]
    assert (kolkata.window.type, kolkata.window.size_ms, kolkata.window.offset_ms) == ("tumbling", 3_600_000,
                                                                                        1_800_000)
    assert kolkata.watermark.interval_ms == 1000  # the SET after the query does not apply
    assert kolkata.source.columns["event_time"] == "ts_ms"
    hop, _ = converted["hop_offset_over_view"]
    assert (hop.window.slide_ms, hop.window.size_ms, hop.window.offset_ms) == (600_000, 1_500_000, 180_000)
    assert (hop.source.columns["key"], hop.source.columns["event_time"]) == ("shop", "created")
    assert (hop.watermark.max_out_of_orderness_ms, hop.watermark.idle_timeout_ms) == (1500, 20_000)
    session, _ = converted["legacy_session_ascending"]
    assert (session.window.type, session.window.gap_ms, session.watermark.max_out_of_orderness_ms) == \
        ("session", 240_000, 0)
    filtered, _ = converted["tumble_where_over_filtering_view"]
    assert filtered.filter == "value >= 0 AND host <> 'k3' AND value < 40"
    for cfg, _ in converted.values():
        assert dict(cfg.aggregations) == {"cnt": "count(*)", "total": "sum(value)"}


@pytest.mark.parametrize("name", list(SCRIPTS))
def test_spark_replay_equals_flink(spark, converted, flink, name):
    from pyspark.sql import functions as F

    from event_replay.job import run_replay

    cfg, rows = converted[name]
    _write_log(rows, cfg, Path(cfg.source.path))
    run_replay(spark, cfg)

    def read(ds):
        return spark.read.option("recursiveFileLookup", "true").parquet(str(Path(cfg.output.path) / ds))
    got = sorted(tuple(r) for r in read("windows").select(
        "key", F.unix_millis("window_start"), F.unix_millis("window_end"), "fire_index", "fire_watermark_ms",
        "fire_reason", "cnt", "total").collect())
    want = sorted((str(f.key), f.window_start, f.window_end, f.fire_index, f.fire_watermark, f.fire_reason,
                   f.aggregates["cnt"], f.aggregates["total"]) for f in flink[name].firings)
    assert want, name  # the case fires
    assert got == want, (f"{name}: only Spark {[x for x in got if x not in want][:5]}; "
                         f"only Flink {[x for x in want if x not in got][:5]}")
    got_late = sorted((r["split"], r["offset"], r["late_watermark_ms"]) for r in read("late_events").collect())
    want_late = sorted((lr.row.split, lr.row.offset, lr.late_watermark) for lr in flink[name].late_rows)
    assert got_late == want_late, name
    if name != "legacy_session_ascending":
        assert want_late, name  # the log has late rows for these windows
    if name == "tumble_where_over_filtering_view":  # the filter drops rows that would have been late
        dropped_late = [r for r in rows if not (r.payload["value"] >= 0 and r.key != "k3" and r.payload["value"] < 40)
                        and r.arrival_time - r.event_time > 600_000]
        assert dropped_late and not {(r.split, r.offset) for r in dropped_late} & {(s, o) for s, o, _ in got_late}
    if name == "legacy_tumble_ltz_kolkata":
        assert all(s % 3_600_000 == 1_800_000 for _, s, *_ in got)  # windows start at half past the UTC hour
