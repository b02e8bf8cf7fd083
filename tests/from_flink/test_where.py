"""A Flink SQL WHERE (the windowing query's, and the views' it reads) as the replay's `filter` (from_flink/where.py,
predicate.py): mapped with the log's column names and Flink's value, or refused naming the construct and line."""
from __future__ import annotations

import pytest

from event_replay.from_flink.settings import FlinkSettingsError
from event_replay.from_flink.sql import config_from_flink_sql
from test_from_flink_sql import CORPUS, convert  # convert: the script written to a file and converted

TABLE = """\
CREATE TABLE access_log (
  ts TIMESTAMP(3),
  client_ip STRING,
  status_code STRING,
  bytes BIGINT,
  ratio DOUBLE,
  small FLOAT,
  ok BOOLEAN,
  proc AS PROCTIME(),
  WATERMARK FOR ts AS ts - INTERVAL '5' SECOND
) WITH ('connector' = 'kafka');
"""
QUERY = """\
SELECT client_ip, window_start, window_end, COUNT(*) AS hits
FROM TABLE(TUMBLE(TABLE access_log, DESCRIPTOR(ts), INTERVAL '1' MINUTE))
WHERE {where}
GROUP BY client_ip, window_start, window_end;
"""


@pytest.mark.parametrize("where, spark", [
    ("status_code = '403'", "status_code = '403'"),
    ("status_code <> '200' AND bytes > 1024", "status_code <> '200' AND bytes > 1024"),
    ("(status_code = '403' OR status_code = '401') AND NOT ok", "(status_code = '403' OR status_code = '401') AND "
                                                               "NOT ok"),
    ("bytes * 2 BETWEEN 10 AND 1000 AND ratio >= 0.5", "(bytes * 2) BETWEEN 10 AND 1000 AND ratio >= 0.5"),
    ("bytes / 3 = 1", "(bytes div 3) = 1"),  # Flink divides integers as integers
    ("client_ip LIKE '10.%' AND client_ip NOT LIKE '10.0._'", "client_ip LIKE '10.%' AND client_ip NOT LIKE "
                                                               "'10.0._'"),
    ("status_code IN ('401', '403') AND bytes NOT IN (0, -1)", "status_code IN ('401', '403') AND NOT bytes IN "
                                                               "(0, (- 1))"),
    ("status_code IS NOT NULL AND ok IS TRUE", "status_code IS NOT NULL AND ok IS TRUE"),
    ("client_ip = 'it''s' OR client_ip = '%'", "client_ip = 'it\\'s' OR client_ip = '%'"),
])
def test_the_windowing_query_s_where_is_the_filter(tmp_path, where, spark):
    _, cfg = convert(tmp_path, TABLE + QUERY.format(where=where))
    assert cfg.filter == spark


def test_views_that_filter_rename_and_compute_are_followed_and_their_wheres_anded(tmp_path):
    sql = TABLE + """\
    CREATE VIEW errors AS SELECT ts, client_ip AS ip, status_code AS code, bytes * 8 AS bits FROM access_log
      WHERE status_code >= '400' OR status_code IS NULL;
    CREATE VIEW big AS SELECT * FROM errors WHERE bits > 8000;
    SELECT ip, window_start, window_end, COUNT(*) AS hits
    FROM TABLE(TUMBLE(TABLE big, DESCRIPTOR(ts), INTERVAL '1' MINUTE))
    WHERE code <> '404'
    GROUP BY ip, window_start, window_end;
    """
    text, cfg = convert(tmp_path, sql)
    assert cfg.filter == ("(status_code >= '400' OR status_code IS NULL) AND (bytes * 8) > 8000 AND "
                          "status_code <> '404'")
    line = next(x for x in text.splitlines() if x.startswith("filter:"))
    assert "(view errors, line 13)" in line and "(view big, line 14)" in line and "(the windowing query, line 17)" \
        in line and "after the watermark is assigned" in line


def test_a_legacy_group_window_s_where_is_the_filter(tmp_path):
    sql = TABLE + """\
    SELECT client_ip, TUMBLE_START(ts, INTERVAL '1' MINUTE), COUNT(*) AS hits FROM access_log
    WHERE status_code = '403' GROUP BY TUMBLE(ts, INTERVAL '1' MINUTE), client_ip;
    """
    assert convert(tmp_path, sql)[1].filter == "status_code = '403'"


def test_without_where_there_is_no_filter(tmp_path):
    text, cfg = convert(tmp_path, TABLE + QUERY.replace("WHERE {where}\n", ""))
    assert cfg.filter is None and "filter:" not in text


@pytest.mark.parametrize("where, words", [
    ("status_code = 403", ["compares a STRING with a INT", "CAST one side"]),
    ("small > 0.5", ["FLOAT"]),
    ("ts > TIMESTAMP '2024-01-01 00:00:00'", ["TIMESTAMP(3) in a condition"]),
    ("proc > ts", ["processing time"]),
    ("ts < CURRENT_TIMESTAMP", ["CURRENT_TIMESTAMP is the processing time"]),
    ("window_start > ts", ["window_start filters windows, not rows"]),
    ("client_ip LIKE '10\\%'", ["a backslash or control character"]),
    ("client_ip = 'a\\b'", ["a backslash or control character"]),
    ("client_ip IN (SELECT ip FROM blocked)", ["IN of a subquery"]),
    ("UPPER(client_ip) = 'X'", ["not mapped"]),
    ("status_code = NULL", ["never true", "IS NULL"]),
    ("nope = 1", ["nope is not a column of table access_log"]),
])
def test_what_cannot_be_mapped_is_refused_by_name_and_line(tmp_path, where, words):
    with pytest.raises(FlinkSettingsError) as e:
        convert(tmp_path, TABLE + QUERY.format(where=where))
    assert all(w in str(e.value) for w in words), str(e.value)
    assert e.value.line == 14, (str(e.value), e.value.line)


def test_ctes_that_filter_and_rename_are_followed_like_views():
    script = CORPUS / "scripts" / "44_cte_filters.sql"  # INSERT INTO sink WITH forbidden (...) AS (...), recent AS ...
    text, cfg = config_from_flink_sql(script, source_path="log", output_path="out")
    assert cfg.filter == "status_code = '403' AND client_ip <> '127.0.0.1'"
    assert (cfg.source.columns["key"], cfg.source.columns["event_time"]) == ("client_ip", "ts")
    assert "(CTE forbidden, line 10)" in text and "(CTE recent, line 11)" in text


def test_a_cte_that_aggregates_is_refused_by_name(tmp_path):
    sql = TABLE + """\
    WITH per_ip AS (SELECT client_ip, ts, COUNT(*) AS n FROM access_log GROUP BY client_ip, ts)
    SELECT client_ip, window_start, window_end, COUNT(*) AS hits
    FROM TABLE(TUMBLE(TABLE per_ip, DESCRIPTOR(ts), INTERVAL '1' MINUTE))
    GROUP BY client_ip, window_start, window_end;
    """
    with pytest.raises(FlinkSettingsError) as e:
        convert(tmp_path, sql)
    assert "CTE per_ip (line 12): GROUP BY client_ip, ts" in str(e.value) and "aggregates rows" in str(e.value)
