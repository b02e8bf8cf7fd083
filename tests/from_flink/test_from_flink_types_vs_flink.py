"""The aggregates and expressions `from-flink-sql` maps give Flink's values and types: Flink SQL itself (pyflink 2.3
in .venv-flink, a batch query over typed VALUES) against Spark evaluating the converter's expressions over the same
rows, item by item: AVG of integers truncated, SUM keeping the column's type, ROUND HALF_UP, CAST to DECIMAL,
integer division, COUNT(DISTINCT), aggregates FILTER (WHERE ...). Marker `flink` (needs .venv-flink, built by tests/flink/build.sh) and `spark`."""
from __future__ import annotations

import json
import subprocess
import textwrap
from decimal import Decimal
from pathlib import Path

import pytest

from event_replay.from_flink.sql import config_from_flink_sql

pytestmark = [pytest.mark.flink, pytest.mark.spark]
ROOT = Path(__file__).resolve().parents[2]
FLINK_PYTHON = ROOT / ".venv-flink" / "bin" / "python"

COLUMNS = [("k", "STRING"), ("i", "INT"), ("b", "BIGINT"), ("t", "TINYINT"), ("d", "DOUBLE"),
           ("m", "DECIMAL(10, 2)"), ("s", "STRING")]
ROWS = [  # two keys; negative sums and averages to see truncation toward zero; .5 cases for HALF_UP
    ("a", 1, 10, 1, 2.5, "1.25", "pear"), ("a", 2, 11, 2, 3.5, "2.50", "apple"), ("a", -4, -7, 3, 0.125, "3.33", "fig"),
    ("b", -1, 3, -5, 0.285, "-0.05", "zed"), ("b", -2, 4, 7, 2.675, "9.99", "Apple"), ("b", None, None, None, None,
                                                                                       None, None),
]
ITEMS = {
    "avg_i": "AVG(i)", "avg_b": "AVG(b)", "avg_t": "AVG(t)", "sum_i": "SUM(i)", "sum_t": "SUM(t)", "sum_m": "SUM(m)",
    "avg_d": "AVG(d)", "min_s": "MIN(s)", "max_s": "MAX(s)", "max_m": "MAX(m)", "cnt": "COUNT(*)",
    "cnt_i": "COUNT(i)", "distinct_i": "COUNT(DISTINCT i)", "round_avg_d": "ROUND(AVG(d), 2)",
    "round_min_d": "ROUND(MIN(d), 2)", "round_max_d": "ROUND(MAX(d), 1)", "round_sum_m": "ROUND(SUM(m), 1)",
    "cast_avg_d": "CAST(AVG(d) AS DECIMAL(10, 2))", "cast_sum_m": "CAST(SUM(m) AS DECIMAL(12, 1))",
    "cast_avg_int": "CAST(AVG(d) AS INT)", "int_div": "SUM(i) / COUNT(*)", "int_div2": "SUM(b) / 2",
    "dbl_div": "SUM(d) / COUNT(*)", "mixed": "SUM(i) * 2 + MAX(b)", "dbl_mul": "MAX(d) * 3",
    "avg_cast": "AVG(CAST(i AS DOUBLE))", "sum_expr": "SUM(i * b)", "neg": "-MIN(i)",
    # Filtered aggregates: the condition as a WHERE maps (three-valued: a null condition leaves the row out).
    "cnt_filter": "COUNT(*) FILTER (WHERE i > 0)", "sum_filter": "SUM(b) FILTER (WHERE s LIKE '%p%' OR s IS NULL)",
    "avg_filter": "AVG(i) FILTER (WHERE d >= 1 AND NOT s = 'fig')", "max_filter": "MAX(s) FILTER (WHERE m BETWEEN 0 "
    "AND 5)", "sum_expr_filter": "SUM(i * b) FILTER (WHERE t IN (1, 3, 7))", "cnt_none": "COUNT(i) FILTER (WHERE "
    "k = 'zzz')", "sum_none": "SUM(d) FILTER (WHERE k = 'zzz')",
}

FLINK_SCRIPT = r'''
import json, sys
from pyflink.table import EnvironmentSettings, TableEnvironment
spec = json.loads(sys.stdin.read())
t = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
t.get_config().set("parallelism.default", "1")
cols = spec["columns"]
def lit(v, typ):
    if v is None:
        return f"CAST(NULL AS {typ})"
    if typ == "STRING":
        return "'" + str(v).replace("'", "''") + "'"
    return f"CAST({v} AS {typ})"
values = ", ".join("(" + ", ".join(lit(v, typ) for v, (_, typ) in zip(row, cols)) + ")" for row in spec["rows"])
t.execute_sql(f"CREATE TEMPORARY VIEW v AS SELECT * FROM (VALUES {values}) AS T({', '.join(n for n, _ in cols)})")
items = ", ".join(f"CAST({e} AS STRING) AS {n}" for n, e in spec["items"].items())
typed = t.sql_query(f"SELECT k, {', '.join(f'{e} AS {n}' for n, e in spec['items'].items())} FROM v GROUP BY k")
types = {}
for line in str(typed.get_schema()).splitlines():  # " |-- name: TYPE [NOT NULL]"
    if "|-- " in line:
        name, typ = line.split("|-- ", 1)[1].split(": ", 1)
        types[name] = typ.replace(" NOT NULL", "").replace("VARCHAR(2147483647)", "STRING").strip()
r = t.sql_query(f"SELECT k, {items} FROM v GROUP BY k")
out = {}
with r.execute().collect() as res:
    for row in res:
        out[row[0]] = {n: row[1 + j] for j, n in enumerate(spec["items"])}
print(json.dumps({"values": out, "types": {n: types[n] for n in spec["items"]}}))
'''


def _flink() -> dict:
    if not FLINK_PYTHON.exists():
        pytest.skip(".venv-flink missing: run tests/flink/build.sh")
    spec = {"columns": COLUMNS, "rows": [list(r) for r in ROWS], "items": ITEMS}
    proc = subprocess.run([str(FLINK_PYTHON), "-c", FLINK_SCRIPT], input=json.dumps(spec), capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _converted(tmp_path) -> tuple[dict[str, str], dict[str, str]]:
    """The converter's Spark expression and Flink type comment of every item."""
    ddl = ",\n  ".join(f"{n} {t}" for n, t in COLUMNS)
    sql = textwrap.dedent(f"""\
        CREATE TABLE v (
          {ddl},
          ts TIMESTAMP(3),
          WATERMARK FOR ts AS ts
        ) WITH ('connector' = 'kafka');
        SELECT k, window_start, window_end, {', '.join(f'{e} AS {n}' for n, e in ITEMS.items())}
        FROM TABLE(TUMBLE(TABLE v, DESCRIPTOR(ts), INTERVAL '1' MINUTE))
        GROUP BY k, window_start, window_end;
        """)
    f = tmp_path / "types.sql"
    f.write_text(sql)
    text, cfg = config_from_flink_sql(f, source_path="l", output_path="o")
    types = {}
    for line in text.splitlines():
        name = line.strip().split(":")[0]
        if name in ITEMS and "-> " in line:
            types[name] = line.split("-> ", 1)[1].split(":")[0].strip()
    return dict(cfg.aggregations), types


def _spark_text(v) -> str | None:
    """A Spark value as Flink's CAST(... AS STRING) writes it."""
    if v is None:
        return None
    if isinstance(v, float):
        return repr(v) if abs(v) >= 1e-3 or v == 0 else repr(v)
    if isinstance(v, Decimal):
        return format(v, "f")
    return str(v)


def test_typed_aggregates_equal_flink(spark, tmp_path):
    from pyspark.sql import types as T

    flink = _flink()
    exprs, types = _converted(tmp_path)
    schema = T.StructType([T.StructField("k", T.StringType()), T.StructField("i", T.IntegerType()),
                           T.StructField("b", T.LongType()), T.StructField("t", T.ByteType()),
                           T.StructField("d", T.DoubleType()), T.StructField("m", T.DecimalType(10, 2)),
                           T.StructField("s", T.StringType())])
    rows = [tuple(Decimal(v) if isinstance(v, str) and n == "m" else v for v, (n, _) in zip(r, COLUMNS))
            for r in ROWS]
    spark.createDataFrame(rows, schema).createOrReplaceTempView("typed_v")
    got = {r["k"]: r.asDict() for r in spark.sql(
        f"SELECT k, {', '.join(f'{e} AS {n}' for n, e in exprs.items())} FROM typed_v GROUP BY k").collect()}
    problems = []
    for name in ITEMS:
        want_type = flink["types"][name]
        if types[name] != want_type:
            problems.append(f"{name} {ITEMS[name]}: type {types[name]}, Flink {want_type}")
        for k in ("a", "b"):
            want, have = flink["values"][k][name], _spark_text(got[k][name])
            if want != have:
                problems.append(f"{name} {ITEMS[name]} key {k}: replay {have!r} ({exprs[name]}), Flink {want!r}")
    assert not problems, "\n".join(problems)
