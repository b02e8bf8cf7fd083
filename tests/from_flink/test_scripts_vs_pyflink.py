"""Three corpus scripts of issue 50 run by Flink SQL itself (pyflink 2.3 in .venv-flink, streaming mode, the
script's own statements with its source table read from a CSV file of the rows) and replayed by `replay run` with
the config the converter made of the same script: equal firings, window for window and value for value. The rows
come in event-time order on one split, so no row is late in either and each window fires once, as Flink's bounded
job ends: what is compared is the mapping of HAVING, CUMULATE, a keyless window, WHERE in a CTE and FILTER (WHERE)
aggregates (the firing times and late rows of these shapes are held to Flink's classes by tests/flink/).
Markers `flink` (needs .venv-flink, built by tests/flink/build.sh) and `spark`."""
from __future__ import annotations

import json
import random
import re
import subprocess
from datetime import datetime, timezone
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from event_replay.from_flink.sql import config_from_flink_sql

pytestmark = [pytest.mark.flink, pytest.mark.spark]
ROOT = Path(__file__).resolve().parents[2]
FLINK_PYTHON = ROOT / ".venv-flink" / "bin" / "python"
SCRIPTS = Path(__file__).parent / "flink_sql_corpus" / "scripts"
T0 = 1_704_067_200_000  # 2024-01-01T00:00:00Z

FLINK_SCRIPT = r'''
import json, sys
from datetime import timezone
from decimal import Decimal
from pyflink.table import EnvironmentSettings, TableEnvironment
spec = json.loads(sys.stdin.read())
t = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
t.get_config().set("parallelism.default", "1")
t.get_config().set("table.local-time-zone", "UTC")
def plain(v):
    if hasattr(v, "year"):
        return int(v.replace(tzinfo=timezone.utc).timestamp() * 1000)
    return str(v) if isinstance(v, Decimal) else v
outs = []
for job in spec:  # one JVM for every script: each its own tables (dropped after) and query
    for ddl in job["ddl"]:
        t.execute_sql(ddl)
    out = []
    with t.execute_sql(job["query"]).collect() as res:
        for row in res:
            out.append([plain(v) for v in row])
    outs.append(out)
    for name in job["drop"]:
        t.execute_sql(f"DROP TEMPORARY VIEW IF EXISTS {name}")
        t.execute_sql(f"DROP TABLE IF EXISTS {name}")
print(json.dumps(outs))
'''


def _rows(name: str) -> tuple[list[tuple[str, str]], list[dict]]:
    """(the source table's columns with their Flink types, the rows in event-time order)."""
    rng = random.Random(name)
    if name == "53_having_card_fraud":  # bursts per card: some minutes pass COUNT(*) > 3
        cols = [("card_id", "STRING"), ("amount", "BIGINT"), ("merchant", "STRING")]
        times = sorted(rng.randint(0, 10 * 60_000) for _ in range(300))
        rows = [{"card_id": f"c{rng.randint(0, 5)}", "amount": rng.randint(1, 500), "merchant": f"m{i % 3}",
                 "tx_time": t} for i, t in enumerate(times)]
    elif name == "55_keyless_tumble_total":
        cols = [("host", "STRING"), ("status", "INT"), ("response_bytes", "BIGINT")]
        times = sorted(rng.randint(0, 8 * 60_000) for _ in range(400))
        rows = [{"host": f"h{rng.randint(0, 3)}", "status": rng.choice([200, 200, 200, 404, 500, 503]),
                 "response_bytes": rng.randint(0, 10_000), "log_time": t} for t in times]
    else:  # 59: cumulative counts of the day pass HAVING COUNT(*) > 1000 in its later windows
        cols = [("ride_id", "BIGINT"), ("region", "STRING"), ("fare", "BIGINT"), ("completed", "BOOLEAN")]
        times = sorted(rng.randint(0, 86_400_000 - 1) for _ in range(2600))
        rows = [{"ride_id": i, "region": rng.choice(["north", "south"]), "fare": rng.randint(5, 80),
                 "completed": rng.random() < 0.8, "ride_time": t} for i, t in enumerate(times)]
    return cols, rows


def _time_column(sql: str) -> str:
    return re.search(r"WATERMARK FOR (\w+)", sql).group(1)


def _job(sql: str, cols: list[tuple[str, str]], rows: list[dict], csv: Path) -> dict:
    """The script's statements for pyflink: its source table read from `csv` (the rows), its query last."""
    time_col = _time_column(sql)

    def text(v):
        return str(v).lower() if isinstance(v, bool) else str(v)
    csv.write_text("".join(",".join([*(text(r[c]) for c, _ in cols), datetime.fromtimestamp(
        (T0 + r[time_col]) / 1000, timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]]) + "\n" for r in rows))
    statements = [s.strip() for s in re.sub(r"--[^\n]*", "", sql).split(";") if s.strip()]
    ddl = [re.sub(r"\)\s*WITH\s*\(.*\)\s*$", f") WITH ('connector' = 'filesystem', 'path' = '{csv}', "
                  "'format' = 'csv')", s, flags=re.S) for s in statements[:-1]]
    names = [re.match(r"CREATE (?:TEMPORARY )?(?:TABLE|VIEW) (\w+)", s, re.I).group(1) for s in ddl]
    return {"ddl": ddl, "query": statements[-1], "drop": names[::-1]}


NAMES = ["53_having_card_fraud", "55_keyless_tumble_total", "59_cumulate_view_having"]


@pytest.fixture(scope="module")
def flink(tmp_path_factory) -> dict[str, list[list]]:
    """Each script's rows as Flink SQL emits them, all scripts in one pyflink process."""
    if not FLINK_PYTHON.exists():
        pytest.skip(".venv-flink missing: run tests/flink/build.sh")
    tmp = tmp_path_factory.mktemp("pyflink")
    jobs = [_job((SCRIPTS / f"{n}.sql").read_text(), *_rows(n), tmp / f"{n}.csv") for n in NAMES]
    proc = subprocess.run([str(FLINK_PYTHON), "-c", FLINK_SCRIPT], input=json.dumps(jobs), capture_output=True,
                          text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return dict(zip(NAMES, json.loads(proc.stdout.strip().splitlines()[-1])))


def _replayed(spark, script: Path, cols: list[tuple[str, str]], rows: list[dict], tmp: Path) -> tuple[list, object]:
    from event_replay.job import run_replay

    _, cfg = config_from_flink_sql(script, source_path=str(tmp / "log"), output_path=str(tmp / "out"))
    time_col = cfg.source.columns["event_time"]
    kinds = {"STRING": pa.string(), "BIGINT": pa.int64(), "INT": pa.int32(), "BOOLEAN": pa.bool_()}
    table = pa.table({"split": ["p0"] * len(rows), "offset": list(range(len(rows))),
                      "arrival_time": pa.array([T0 + r[time_col] for r in rows], pa.timestamp("ms")),
                      time_col: pa.array([T0 + r[time_col] for r in rows], pa.timestamp("ms")),
                      **{c: pa.array([r[c] for r in rows], kinds[t]) for c, t in cols}})
    (tmp / "log").mkdir()
    pq.write_table(table, tmp / "log" / "part-0.parquet")
    run_replay(spark, cfg)
    out = pq.read_table(tmp / "out" / "windows").to_pylist()
    return out, cfg


@pytest.mark.parametrize("name", NAMES)
def test_replay_of_the_converted_script_equals_flink_sql(spark, tmp_path, flink, name):
    script = SCRIPTS / f"{name}.sql"
    cols, rows = _rows(name)
    replayed, cfg = _replayed(spark, script, cols, rows, tmp_path)
    aggs = list(cfg.aggregations)
    ms = lambda v: int(v.replace(tzinfo=timezone.utc).timestamp() * 1000)  # noqa: E731
    got = sorted((r["key"], ms(r["window_start"]), ms(r["window_end"]), *(r[a] for a in aggs)) for r in replayed)
    assert all(r["fire_index"] == 0 for r in replayed)
    # Flink's SELECT list: [key,] window_start, window_end, then the aggregates in the config's order.
    want = sorted((None, *f) if cfg.source.keyless else tuple(f) for f in flink[name])
    assert got == want
    assert got and (cfg.having is None or len(got) < len({(g[0], g[1], g[2]) for g in _all_windows(cfg, rows)}))


def _all_windows(cfg, rows: list[dict]) -> set[tuple]:
    """Every (key, start, end) the rows fall in: what the firings would be without the HAVING."""
    from event_replay.semantics.windows import assign

    key, time_col = cfg.source.columns["key"], cfg.source.columns["event_time"]
    return {(r[key] if key else None, s, e) for r in rows for s, e in assign(T0 + r[time_col], cfg.window)}
