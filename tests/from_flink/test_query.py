"""The windowing query around a window (from_flink/query.py): processing-time calls found, and column names as
Spark SQL writes them. What it reads: test_query_source.py; the whole query mapped to a config:
test_from_flink_sql.py."""
from __future__ import annotations

import sqlglot

from event_replay.from_flink.dialect import FlinkSQL
from event_replay.from_flink.query import processing_time_call, spark_column


def test_processing_time_calls_are_found_wherever_they_stand():
    def call(sql: str):
        found = processing_time_call(sqlglot.parse_one(sql, read=FlinkSQL))
        return found.sql(FlinkSQL).upper() if found is not None else None

    assert call("PROCTIME()") == "PROCTIME()"
    assert call("ts - INTERVAL '1' SECOND") is None
    assert call("CASE WHEN v > 0 THEN CURRENT_TIMESTAMP ELSE ts END") is not None
    assert call("TIMESTAMPDIFF(SECOND, ts, NOW())") == "NOW()"
    assert call("LOCALTIMESTAMP") == "LOCALTIMESTAMP"
    assert processing_time_call(None) is None


def test_spark_column_backquotes_only_what_needs_it():
    assert spark_column("user_key") == "user_key" and spark_column("_x9") == "_x9"
    assert spark_column("user key") == "`user key`" and spark_column("9lives") == "`9lives`"
    assert spark_column("a`b") == "`a``b`"
