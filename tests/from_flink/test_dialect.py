"""The Flink SQL dialect (from_flink/dialect.py): a script split into statements at semicolons outside strings and
comments, each keeping the script's line numbers, statement-set wrappers removed; and the Flink constructs a
config is derived from parsed into sqlglot nodes (WATERMARK FOR, METADATA, TABLE t PARTITION BY, ROW<...>)."""
from __future__ import annotations

import pytest
from sqlglot import exp

from event_replay.from_flink.dialect import MetadataColumnConstraint, ParseError, split_statements

SCRIPT = """-- a comment; with a semicolon
SET 'pipeline.name' = 'a;b';

CREATE TABLE clicks (
  item STRING,
  ts TIMESTAMP(3),
  part INT METADATA FROM 'partition' VIRTUAL,
  payload ROW<a INT, b STRING>,
  WATERMARK FOR ts AS ts - INTERVAL '5' SECOND
) WITH ('connector' = 'kafka');
/* a block; comment */
EXECUTE STATEMENT SET BEGIN
INSERT INTO out SELECT item, COUNT(*) FROM TABLE(
  TUMBLE(TABLE clicks PARTITION BY (item), DESCRIPTOR(ts), INTERVAL '10' SECOND)) GROUP BY item;
END;
"""


def test_statements_at_semicolons_outside_strings_and_comments_with_their_lines():
    stmts = split_statements(SCRIPT)
    assert [s.words[:2] for s in stmts] == [("SET", "PIPELINE.NAME"), ("CREATE", "TABLE"), ("INSERT", "INTO")]
    assert [s.line for s in stmts] == [2, 4, 13]
    assert stmts[0].text == "SET 'pipeline.name' = 'a;b'"
    assert stmts[1].text.startswith("CREATE TABLE clicks (") and stmts[1].text.endswith("'kafka')")


@pytest.mark.parametrize("script", ["BEGIN STATEMENT SET; INSERT INTO o SELECT 1; END;",
                                    "EXECUTE INSERT INTO o SELECT 1", "INSERT INTO o SELECT 1;;"])
def test_statement_set_wrappers_and_empty_statements_are_dropped(script):
    assert [s.text for s in split_statements(script)] == ["INSERT INTO o SELECT 1"]


def test_create_table_with_watermark_metadata_and_row_type():
    tree = split_statements(SCRIPT)[1].parse()
    (wm,) = tree.find_all(exp.WatermarkColumnConstraint)
    assert wm.this.name == "ts" and isinstance(wm.expression, exp.Sub)
    assert wm.expression.expression.sql() == "INTERVAL '5' SECOND"
    (meta,) = tree.find_all(MetadataColumnConstraint)
    assert meta.this.name == "partition" and meta.args["virtual"]
    payload = next(c for c in tree.find_all(exp.ColumnDef) if c.name == "payload")
    assert payload.args["kind"].this == exp.DataType.Type.STRUCT


def test_a_window_tvf_s_table_argument_and_its_partition_columns():
    tree = split_statements(SCRIPT)[2].parse()
    tumble = next(f for f in tree.find_all(exp.Anonymous) if f.name.upper() == "TUMBLE")
    table = tumble.expressions[0]
    assert isinstance(table, exp.Table) and table.name == "clicks"
    assert [c.name for c in table.args["partition_by"]] == ["item"]
    assert len(tumble.expressions) == 3  # PARTITION BY (item) did not swallow DESCRIPTOR(ts)
    named = split_statements("SELECT * FROM TABLE(TUMBLE(DATA => TABLE clicks PARTITION BY item, "
                             "TIMECOL => DESCRIPTOR(ts), SIZE => INTERVAL '1' MINUTE))")[0].parse()
    (kw,) = [k for k in named.find_all(exp.Kwarg) if k.this.name.upper() == "DATA"]
    assert isinstance(kw.expression, exp.Table) and [c.name for c in kw.expression.args["partition_by"]] == ["item"]


def test_a_parse_error_names_the_script_s_line():
    (stmt,) = split_statements("\n\nSELECT (a FROM t")
    with pytest.raises(ParseError) as e:
        stmt.parse()
    assert "Line 3" in str(e.value)
