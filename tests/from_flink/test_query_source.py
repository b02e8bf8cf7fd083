"""What a windowing query reads (from_flink/query_source.py): followed through views to one table (each visible
column to the table column it is, or to the view expression that computes it), the views and columns refused by
name and line."""
from __future__ import annotations

import pytest

from event_replay.from_flink.query_source import resolve_source, table_column
from event_replay.from_flink.script import read_script
from event_replay.from_flink.settings import FlinkSettingsError

TABLE = """CREATE TABLE events (
  ts TIMESTAMP(3),
  k STRING,
  v DOUBLE,
  WATERMARK FOR ts AS ts - INTERVAL '5' SECOND
) WITH ('connector' = 'kafka');
"""


def source_of(views: str, name: str = "outer_v"):
    return resolve_source(name, read_script(TABLE + views), f"TABLE {name}", 99)


def test_a_table_is_its_own_columns():
    src = source_of("", "EVENTS")
    assert src.table.name == "events" and src.views == [] and src.describe() == "table events"
    assert src.columns == {"ts": "ts", "k": "k", "v": "v"}


def test_views_are_followed_to_the_table_renaming_and_computing_columns():
    src = source_of("CREATE VIEW inner_v (t, user_key, amount) AS SELECT ts, k, v * 100 FROM events;\n"
                    "CREATE VIEW outer_v AS SELECT *, amount AS cents FROM inner_v;\n")
    assert [v.name for v in src.views] == ["outer_v", "inner_v"]
    assert src.describe() == "view inner_v (line 7) -> view outer_v (line 8) -> table events"
    assert list(src.columns) == ["t", "user_key", "amount", "cents"]
    assert table_column(src, "T", "DESCRIPTOR(T)", 9) == "ts" and table_column(src, "user_key", "k", 9) == "k"
    with pytest.raises(FlinkSettingsError) as e:
        table_column(src, "cents", "SUM(cents)", 9)
    assert "cents is computed by view inner_v (line 7) as v * 100" in str(e.value) and e.value.line == 9
    with pytest.raises(FlinkSettingsError) as e:
        table_column(src, "nope", "SUM(nope)", 9)
    assert "nope is not a column of view inner_v (line 7) -> view outer_v (line 8) -> table events" in str(e.value)


@pytest.mark.parametrize("view, words, line", [
    ("CREATE VIEW outer_v AS SELECT k, COUNT(*) AS c FROM events GROUP BY k;\n", "GROUP BY k", 7),
    ("CREATE VIEW outer_v AS SELECT DISTINCT k FROM events;\n", "SELECT DISTINCT", 99),
    ("CREATE VIEW outer_v AS SELECT e.k FROM events e JOIN other o ON e.k = o.k;\n", "JOIN other", 7),
    ("CREATE VIEW outer_v AS SELECT k, missing FROM events;\n", "missing is not a column of table events", 7),
    ("CREATE VIEW outer_v (a) AS SELECT k, v FROM events;\n", "names 1 columns for 2 selected", 7),
    ("CREATE VIEW other_v AS SELECT * FROM events;\n", "not a CREATE TABLE or CREATE VIEW", 99),
])
def test_a_view_that_cannot_be_followed_is_refused_by_name(view, words, line):
    with pytest.raises(FlinkSettingsError) as e:
        source_of(view)
    assert words in str(e.value), str(e.value)
    if "DISTINCT" not in words:
        assert e.value.line == line, (str(e.value), e.value.line)
