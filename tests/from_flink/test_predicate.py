"""One Flink SQL boolean expression as the Spark SQL boolean that keeps the rows Flink keeps (from_flink/predicate.py),
unit by unit: the resolver's column names in the output, parentheses where AND/OR nest, IS/IN/LIKE/BETWEEN forms,
numbers of different types compared by value, each refusal by name with the clause's line; and the mapped strings
evaluated in Spark over NULLs (SQL's three-valued logic: a WHERE keeps a row only when the predicate is true). The
whole WHERE of a script (views, CTEs, line numbers in the config): test_where.py."""
from __future__ import annotations

import pytest
import sqlglot

from event_replay.from_flink.dialect import FlinkSQL
from event_replay.from_flink.predicate import PredicateTranslator, spark_string
from event_replay.from_flink.settings import FlinkSettingsError
from event_replay.from_flink.typed import FType

COLUMNS = {"code": FType("STRING"), "n": FType("BIGINT"), "i": FType("INT"), "r": FType("DOUBLE"),
           "d": FType("DECIMAL", 10, 2), "ok": FType("BOOLEAN"), "f": FType("FLOAT"), "ts": FType("TIMESTAMP", 3),
           "day": FType("DATE")}
LINE = 7


def _column(c):
    """The resolver maps a Flink name to a Spark column of another name: the output must use the resolver's."""
    if c.name not in COLUMNS:
        raise FlinkSettingsError(c.name, "not a column", LINE)
    return f"s_{c.name}", COLUMNS[c.name]


def _translator() -> PredicateTranslator:
    return PredicateTranslator(_column, lambda n: n.sql(FlinkSQL), LINE)


def translate(where: str) -> str:
    return _translator().predicate(sqlglot.parse_one(where, read=FlinkSQL))


@pytest.mark.parametrize("where, spark", [
    ("code = '403'", "s_code = '403'"),
    # An AND under an OR (and an OR under an AND) is parenthesised; a chain of one operator is not.
    ("n = 1 OR i = 2 AND r = 3.5", "s_n = 1 OR (s_i = 2 AND s_r = 3.5)"),
    ("(n = 1 OR i = 2) AND r = 3.5", "(s_n = 1 OR s_i = 2) AND s_r = 3.5"),
    ("n = 1 AND i = 2 AND ok", "s_n = 1 AND s_i = 2 AND s_ok"),
    ("n = 1 OR i = 2 OR ok", "s_n = 1 OR s_i = 2 OR s_ok"),
    ("NOT (n = 1 AND ok)", "NOT (s_n = 1 AND s_ok)"),
    ("NOT ok", "NOT s_ok"),
    # IS forms
    ("ok IS NOT TRUE", "NOT s_ok IS TRUE"),
    ("ok IS FALSE", "s_ok IS FALSE"),
    ("n IS NOT NULL", "s_n IS NOT NULL"),
    ("code IS NULL", "s_code IS NULL"),
    # booleans compare with booleans; numbers of any mapped type with each other, by value
    ("ok = TRUE", "s_ok = true"),
    ("ok <> FALSE", "s_ok <> false"),
    ("n > d", "s_n > s_d"),
    ("r < i", "s_r < s_i"),
    ("n >= 0.5", "s_n >= 0.5"),
    ("n != 3", "s_n <> 3"),
    ("n NOT BETWEEN 1 AND 2", "NOT s_n BETWEEN 1 AND 2"),
    ("d BETWEEN 0 AND 9.99", "s_d BETWEEN 0 AND 9.99"),
    # IN lists of constants of the value's kind
    ("n IN (1, -2)", "s_n IN (1, (- 2))"),
    ("code IN ('a', 'b')", "s_code IN ('a', 'b')"),
    ("ok IN (TRUE)", "s_ok IN (true)"),
    # operands: typed.py's arithmetic, CAST and ROUND over columns
    ("n + 1 > 2", "(s_n + 1) > 2"),
    ("n / 2 > 1", "(s_n div 2) > 1"),
    ("CAST(r AS INT) = 1", "cast(s_r as int) = 1"),
    ("ROUND(r, 1) = 1.5", "round(s_r, 1) = 1.5"),
    ("code LIKE 'a_c%'", "s_code LIKE 'a_c%'"),
    ("code = ''", "s_code = ''"),
])
def test_each_construct_maps_to_spark_sql(where, spark):
    assert translate(where) == spark


@pytest.mark.parametrize("where, construct, words", [
    ("n IS TRUE", "n IS TRUE", "IS TRUE/FALSE of a BIGINT"),
    ("n BETWEEN 1 AND 'x'", "n BETWEEN 1 AND 'x'", "compares a BIGINT with a STRING"),
    ("ok = 1", "ok = 1", "compares a BOOLEAN with a INT"),
    ("n IN (1, 'a')", "n IN (1, 'a')", "IN mixes a BIGINT with a STRING"),
    ("n IN (1, i)", "i", "IN lists constants only"),
    ("n LIKE '1%'", "n LIKE '1%'", "LIKE of a string column with a constant pattern only"),
    ("code LIKE code", "code LIKE code", "LIKE of a string column with a constant pattern only"),
    ("n", "n", "a BIGINT, not a condition"),
    ("code", "code", "a STRING, not a condition"),
    ("f > 1", "f", "a FLOAT in a condition"),
    ("ts IS NULL", "ts", "a TIMESTAMP(3) in a condition"),
    ("day = day", "day", "a DATE in a condition"),
    ("n = NULL", "NULL", "never true (write IS NULL)"),
    ("x = 1", "x", "not a column"),
])
def test_what_is_not_mapped_is_refused_naming_the_construct_and_line(where, construct, words):
    with pytest.raises(FlinkSettingsError) as e:
        translate(where)
    assert (e.value.construct, e.value.line) == (construct, LINE), str(e.value)
    assert words in e.value.why, str(e.value)


@pytest.mark.parametrize("where", ["code LIKE 'a!%' ESCAPE '!'", "code NOT LIKE 'a!%' ESCAPE '!'"])
def test_like_with_escape_is_refused_by_name(where):
    with pytest.raises(FlinkSettingsError) as e:
        translate(where)
    assert "LIKE ... ESCAPE" in e.value.why and (e.value.construct, e.value.line) == (where, LINE), str(e.value)


def test_a_string_constant_doubles_its_quote_as_a_spark_escape_and_refuses_a_backslash():
    t = _translator()
    assert spark_string(sqlglot.parse_one("'it''s'", read=FlinkSQL), t) == "'it\\'s'"
    assert spark_string(sqlglot.parse_one("'%_'", read=FlinkSQL), t) == "'%_'"
    with pytest.raises(FlinkSettingsError) as e:
        spark_string(sqlglot.parse_one("'a\\b'", read=FlinkSQL), t)
    assert "backslash" in e.value.why and e.value.line == LINE
    with pytest.raises(FlinkSettingsError) as e:  # a control character (a tab) inside the constant
        translate("code = 'a\tb'")
    assert "control character" in e.value.why


# Rows as Spark reads them (the resolver's s_ names), NULLs included; what a Flink WHERE keeps, by id, worked out by
# hand with SQL's three-valued logic.
ROWS = [  # id, s_code, s_n, s_ok
    (1, "it's", 1, True),
    (2, "abcd", -3, False),
    (3, None, None, None),
    (4, "axc", 4, None),
    (5, "a_c", 3, True),
]


@pytest.mark.spark
@pytest.mark.parametrize("where, kept", [
    ("ok IS NOT TRUE", [2, 3, 4]),  # NULL IS TRUE is false: its NOT keeps the NULL
    ("NOT ok", [2]),  # NOT NULL is NULL: dropped
    ("n NOT BETWEEN 1 AND 3", [2, 4]),
    ("NOT (n = 1 AND ok)", [2, 4, 5]),  # row 4: NOT (false AND NULL) = true; row 3: NULL
    ("n = 1 OR n = 4 AND ok", [1]),  # AND binds tighter: row 4's (true AND NULL) is NULL
    ("(n = 1 OR n = 4) AND ok IS NOT FALSE", [1, 4]),
    ("code = 'it''s'", [1]),
    ("code LIKE 'a_c%'", [2, 4, 5]),
    ("code NOT IN ('abcd', 'axc')", [1, 5]),
    ("n IN (1, -3)", [1, 2]),
    ("n / 2 = -1", [2]),  # Flink's integer division truncates toward zero: -3 / 2 = -1
    ("n / 2 = 2", [4]),
    ("n >= 1.5", [4, 5]),
    ("code IS NULL OR ok = FALSE", [2, 3]),
])
def test_the_mapped_predicate_keeps_in_spark_the_rows_flink_keeps(spark, where, kept):
    rows = spark.createDataFrame(ROWS, "id INT, s_code STRING, s_n BIGINT, s_ok BOOLEAN")
    assert sorted(r.id for r in rows.where(translate(where)).collect()) == kept
