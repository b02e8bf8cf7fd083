"""A Flink SQL script read into settings, tables, views and windows, in script order (from_flink/script.py): the
corpus of Flink SQL shapes, SET/RESET as the SQL client applies them, each window with the settings in force where
it is written, a statement the parser cannot read kept with its line (the user's own text: test_script_text.py)."""
from __future__ import annotations

from pathlib import Path

import pytest

from event_replay.from_flink.script import read_script
from event_replay.from_flink.settings import FlinkSettingsError

CORPUS = Path(__file__).parent / "flink_sql_corpus"

TABLE = """CREATE TEMPORARY TABLE Events (
  ts TIMESTAMP(3),
  k STRING,
  v DOUBLE,
  doubled AS v * 2,
  WATERMARK FOR ts AS ts - INTERVAL '5' SECOND
) WITH ('connector' = 'kafka', 'scan.watermark.idle-timeout' = '1min');
"""
QUERY = """SELECT k, window_start, window_end, COUNT(*) AS cnt
FROM TABLE(TUMBLE(TABLE events, DESCRIPTOR(ts), INTERVAL '10' SECOND))
GROUP BY k, window_start, window_end;
"""


def test_corpus_parses_every_statement_the_replay_reads():
    files = [CORPUS / f for f in ("create_table_shapes.sql", "script_statements.sql", "window_tvf_shapes.sql")]
    for f in files:
        script = read_script(f.read_text())
        assert script.unparsed == [], f.name
    tables = read_script((CORPUS / "create_table_shapes.sql").read_text()).tables
    assert sorted(tables) == ["bid", "clicks", "kafkatable", "orders", "print_sink", "user_actions",
                              "user_actions_ltz", "user_actions_proc"]
    assert tables["kafkatable"].watermark.this.name == "event_time" and "offset" in tables["kafkatable"].columns
    assert tables["user_actions_proc"].watermark is None
    assert tables["clicks"].options["scan.watermark.idle-timeout"] == "1min"
    assert "bids" not in tables["bid"].options  # COMMENT 'bids' is not an option
    windows = read_script((CORPUS / "window_tvf_shapes.sql").read_text()).windows
    assert [w.name for w in windows] == ["TUMBLE"] * 3 + ["HOP"] * 3 + ["CUMULATE"] * 2 + ["SESSION"] * 4 + \
        ["TUMBLE"] * 9
    assert [w.line for w in windows[:4]] == [11, 16, 24, 28]
    script = read_script((CORPUS / "script_statements.sql").read_text())
    assert script.settings == {"execution.runtime-mode": ("streaming", 2),
                               "sql-client.execution.result-mode": ("tableau", 3),
                               "table.exec.source.idle-timeout": ("30 s", 4),
                               "pipeline.auto-watermark-interval": ("500ms", 5)}  # parallelism.default RESET
    assert [(w.name, w.line, w.legacy) for w in script.windows] == [
        ("TUMBLE", 45, False), ("HOP", 49, False), ("TUMBLE", 56, False), ("TUMBLE", 64, False), ("TUMBLE", 70, True)]


def test_a_table_its_columns_watermark_and_options():
    table = read_script(TABLE).tables["events"]  # found by its lower-case name
    assert (table.name, table.line) == ("Events", 1)
    assert list(table.columns) == ["ts", "k", "v", "doubled"]
    assert table.type_of("TS").sql() == "TIMESTAMP(3)" and table.type_of("doubled") is None
    assert table.computed("doubled").sql() == "v * 2" and table.computed("v") is None
    assert table.watermark.this.name == "ts"
    assert table.options == {"connector": "kafka", "scan.watermark.idle-timeout": "1min"}


def test_each_window_keeps_the_settings_in_force_where_it_is_written():
    sql = ("SET 'table.exec.source.idle-timeout' = '30 s';\nSET pipeline.auto-watermark-interval = 200ms;\n" + TABLE
           + QUERY + "RESET 'table.exec.source.idle-timeout';\n" + QUERY + "RESET;\nSET 'a' = 'b';\n")
    script = read_script(sql)
    first, second = script.windows
    assert (first.name, first.line, second.line) == ("TUMBLE", 11, 15)  # the lines of the TVF calls
    assert first.settings == {"table.exec.source.idle-timeout": ("30 s", 1), "pipeline.auto-watermark-interval":
                              ("200ms", 2)}
    assert second.settings == {"pipeline.auto-watermark-interval": ("200ms", 2)}
    assert script.settings == {"a": ("b", 18)}  # at the script's end: RESET without a key cleared everything
    assert script.sets == [("table.exec.source.idle-timeout", "30 s", 1), ("pipeline.auto-watermark-interval",
                                                                          "200ms", 2),
                           ("table.exec.source.idle-timeout", None, 13), ("*", None, 17), ("a", "b", 18)]


def test_views_legacy_windows_and_unparsed_statements():
    sql = (TABLE + "CREATE VIEW ev (key2, t2) AS SELECT k, ts FROM events;\n"
           "SELECT k, COUNT(*) FROM ev GROUP BY TUMBLE(t2, INTERVAL '1' MINUTE), k;\n"
           "SELECT k FROM events MATCH_RECOGNIZE (((( nonsense;\n")
    script = read_script(sql)
    view = script.views["ev"]
    assert (view.line, view.columns, view.select.sql()) == (8, ["key2", "t2"], "SELECT k, ts FROM events")
    (w,) = script.windows
    assert (w.name, w.line, w.legacy) == ("TUMBLE", 9, True)
    assert [(line, words) for line, words, _ in script.unparsed] == [(10, "SELECT k FROM")]


def test_a_set_without_a_value_is_refused_with_its_line():
    with pytest.raises(FlinkSettingsError) as e:
        read_script(TABLE + "SET 'parallelism.default';\n")
    assert e.value.line == 8 and "SET 'key' = 'value'" in str(e.value)
