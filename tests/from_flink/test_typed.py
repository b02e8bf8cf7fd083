"""A window's SELECT item as the Spark SQL aggregate that gives Flink's value and Flink's type
(from_flink/typed.py): each mapping with its result type, the refusals by name, and the integer arithmetic
evaluated in Spark as Flink computes it (truncation toward zero, the argument's type kept). Flink's own answers for
the same shapes: test_from_flink_types_vs_flink.py."""
from __future__ import annotations

import pytest
import sqlglot

from event_replay.from_flink.dialect import FlinkSQL
from event_replay.from_flink.settings import FlinkSettingsError
from event_replay.from_flink.typed import FType, Translator, ftype

COLUMNS = {"i": FType("INT"), "b": FType("BIGINT"), "t": FType("TINYINT"), "d": FType("DOUBLE"),
           "m": FType("DECIMAL", 10, 2), "f": FType("FLOAT"), "s": FType("STRING")}


def translate(item: str):
    translator = Translator(lambda c: (c.name, COLUMNS[c.name]), lambda n: n.sql(FlinkSQL), line=7)
    return translator.item(sqlglot.parse_one(item, read=FlinkSQL))


@pytest.mark.parametrize("item, sql, ftype_text", [
    ("COUNT(*)", "count(*)", "BIGINT"),
    ("COUNT(1)", "count(*)", "BIGINT"),
    ("COUNT(DISTINCT s)", "count(DISTINCT s)", "BIGINT"),
    ("SUM(i)", "cast(sum(i) as int)", "INT"),
    ("SUM(b)", "sum(b)", "BIGINT"),
    ("SUM(m)", "cast(sum(m) as decimal(38,2))", "DECIMAL(38, 2)"),
    ("AVG(t)", "cast(sum(cast(t as bigint)) div count(t) as tinyint)", "TINYINT"),
    ("AVG(b)", "(sum(b) div count(b))", "BIGINT"),
    ("AVG(d)", "avg(d)", "DOUBLE"),
    ("MAX(s)", "max(s)", "STRING"),
    ("SUM(i) / COUNT(*)", "(cast(sum(i) as int) div count(*))", "BIGINT"),
    ("SUM(t) * 2", "(cast(sum(t) as tinyint) * 2)", "INT"),  # TINYINT * INT: the wider type, as in Flink
    ("SUM(d) / 2", "(sum(d) / 2)", "DOUBLE"),
    ("ROUND(SUM(m), 1)", "cast(round(cast(sum(m) as decimal(38,2)), 1) as decimal(38,1))", "DECIMAL(38, 1)"),
    ("ROUND(SUM(m), 3)", "cast(round(cast(sum(m) as decimal(38,2)), 3) as decimal(38,2))", "DECIMAL(38, 2)"),
    ("CAST(SUM(d) AS DECIMAL(12, 3))", "cast(sum(d) as decimal(12,3))", "DECIMAL(12, 3)"),
    ("-MIN(i)", "(- min(i))", "INT"),
    ("COUNT(*) FILTER (WHERE i > 0)", "count(*) FILTER (WHERE i > 0)", "BIGINT"),
    ("SUM(i) FILTER (WHERE s = 'x' OR s IS NULL)", "cast(sum(i) FILTER (WHERE s = 'x' OR s IS NULL) as int)", "INT"),
    ("AVG(t) FILTER (WHERE d >= 1)",
     "cast(sum(cast(t as bigint)) FILTER (WHERE d >= 1) div count(t) FILTER (WHERE d >= 1) as tinyint)", "TINYINT"),
    ("SUM(d * i) FILTER (WHERE s LIKE 'a%') / COUNT(*)", "(sum((d * i)) FILTER (WHERE s LIKE 'a%') / count(*))",
     "DOUBLE"),
])
def test_each_mapping_and_its_flink_type(item, sql, ftype_text):
    out = translate(item)
    assert (out.sql, str(out.type), out.aggregate) == (sql, ftype_text, True)


@pytest.mark.parametrize("item, words", [
    ("i", "a column outside an aggregate"),
    ("SUM(f)", "Flink adds in single precision"),
    ("AVG(m)", "AVG(CAST(x AS DOUBLE)) maps"),
    ("SUM(m) * 2", "Flink's DECIMAL result precision"),
    ("SUM(SUM(i))", "an aggregate inside an aggregate"),
    ("CAST(SUM(i) AS STRING)", "Flink's and Spark's text of a number differ"),
    ("COUNT(*) FILTER (WHERE s = 1)", "compares a STRING with a INT"),
    ("FIRST_VALUE(s) FILTER (WHERE i > 0)", "FILTER (WHERE ...) of something else"),
    ("SUM(i) + 'a'", "a string constant"),
    ("ROUND(SUM(d), i)", "not a constant >= 0"),
    ("UPPER(MAX(s))", "a function not mapped"),
    ("COUNT(*) + 1", None),  # an aggregate with a constant: mapped (the negative control)
])
def test_refusals_name_the_construct_and_line(item, words):
    if words is None:
        assert translate(item).sql == "(count(*) + 1)"
        return
    with pytest.raises(FlinkSettingsError) as e:
        translate(item)
    assert words in str(e.value) and e.value.line == 7, str(e.value)


def test_ddl_types_with_flink_s_defaults():
    def cast_type(t: str) -> FType:
        return ftype(sqlglot.parse_one(f"CAST(x AS {t})", read=FlinkSQL).args["to"])

    assert cast_type("DECIMAL") == FType("DECIMAL", 10, 0) and cast_type("DECIMAL(20, 4)").spark == "decimal(20,4)"
    assert str(cast_type("TIMESTAMP")) == "TIMESTAMP(6)" and str(cast_type("TIMESTAMP(3)")) == "TIMESTAMP(3)"
    assert cast_type("VARCHAR(10)").kind == "STRING" and cast_type("INT").integral and not cast_type("DOUBLE").integral
    assert ftype(None).kind == "OTHER"


@pytest.mark.spark
def test_integer_averages_and_divisions_truncate_toward_zero_in_spark(spark):
    rows = spark.createDataFrame([(-3, -3), (-4, -4), (1, 1)], "t tinyint, i int")
    exprs = [translate("AVG(t)").sql, translate("SUM(i) / COUNT(*)").sql, translate("SUM(i)").sql]
    got = rows.selectExpr(*[f"{e} AS c{n}" for n, e in enumerate(exprs)])
    # Flink: AVG(TINYINT) of -3, -4, 1 is -6 / 3 = -2; SUM(INT) / COUNT(*) is -6 / 3 = -2; the types kept.
    assert [tuple(r) for r in got.collect()] == [(-2, -2, -6)]
    assert [f.dataType.simpleString() for f in got.schema.fields] == ["tinyint", "bigint", "int"]
    odd = spark.createDataFrame([(-7,), (0,)], "t tinyint").selectExpr(translate("AVG(t)").sql)
    assert odd.first()[0] == -3  # -7 / 2 truncated toward zero (floor would give -4)
