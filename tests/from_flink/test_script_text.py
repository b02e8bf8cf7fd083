"""Where a node stands and how the user wrote it (from_flink/script_text.py): the script's own text, whitespace
folded, with the keywords the parse tree keeps no position of put back; a node's line; a call's name."""
from __future__ import annotations

from sqlglot import exp

from event_replay.from_flink.script import read_script
from event_replay.from_flink.script_text import call_name, line_of, user_text

SQL = """CREATE TABLE events (k STRING, v BIGINT, ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '5' SECOND) WITH ('connector' = 'kafka');
SELECT k, window_start, window_end, CAST(SUM(v)   AS
  STRING) AS s
FROM TABLE(TUMBLE(TABLE events, DESCRIPTOR(ts), INTERVAL '10' SECOND))
WHERE k IS NOT NULL
GROUP BY k, window_start, window_end;
"""


def _query():
    return read_script(SQL).queries[0]


def test_user_text_is_the_script_s_own_text_folded():
    tree, statement = _query()
    cast = next(e for e in tree.expressions if e.alias == "s")
    assert user_text(cast.this, statement) == "CAST(SUM(v) AS STRING)"
    assert user_text(cast.this, statement, limit=12) == "CAST(SUM(..."
    where = tree.args["where"].this
    assert user_text(where, statement) == "k IS NOT NULL"  # trailing keywords the tree keeps no position of
    interval = next(tree.find_all(exp.Interval))
    assert user_text(interval, statement) == "INTERVAL '10' SECOND"
    assert user_text(exp.CurrentTimestamp(), None) == "CURRENT_TIMESTAMP"  # no position: as Flink SQL writes it


def test_a_nodes_line_and_a_calls_name():
    tree, _ = _query()
    tumble = next(n for n in tree.find_all(exp.Func) if call_name(n) == "TUMBLE")
    assert line_of(tumble, 99) == 5 and line_of(tree.args["where"], 99) == 6
    assert line_of(exp.Literal.number(1), 42) == 42  # no position anywhere below: the default
