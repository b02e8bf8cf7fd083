"""from_flink/having.py: a windowing query's HAVING as the replay's `having`, over the output columns: aggregates
matched to the SELECT list as written (case and spacing aside), the key as `key`, three-valued pieces kept; what
the replay cannot write or would compute otherwise is refused, naming the clause and its line."""
from __future__ import annotations

import pytest

from event_replay.from_flink.settings import FlinkSettingsError
from test_from_flink_sql import QUERY, TABLE, convert


def _having(tmp_path, clause: str, query: str = QUERY):
    return convert(tmp_path, TABLE + query.replace("window_end;", f"window_end\nHAVING {clause};"))


@pytest.mark.parametrize("clause, having", [
    ("COUNT(*) > 1", "cnt > 1"),
    ("count( * ) >= 2 OR sum(V) IS NULL", "cnt >= 2 OR total IS NULL"),
    ("NOT (SUM(v) < 0.5) AND k IN ('a', 'b')", "NOT (total < 0.5) AND key IN ('a', 'b')"),
    ("SUM(v) - COUNT(*) * 2 BETWEEN -1 AND 1", "total - cnt * 2 BETWEEN -1 AND 1"),
])
def test_having_is_written_over_the_output_columns(tmp_path, clause, having):
    text, cfg = _having(tmp_path, clause)
    assert cfg.having == having
    assert f"  # HAVING {clause.replace('count( * )', 'COUNT(*)').replace('sum(V)', 'SUM(V)')} (line 11): firings " \
           "dropped after the window" in text


@pytest.mark.parametrize("clause, why", [
    ("AVG(v) > 1", "AVG(v) is not an output column"),
    ("v > 1", "v is not the key nor an aggregate"),
    ("window_start > 5", "window_start is a window column"),
    ("SUM(v) / COUNT(*) > 1", "only comparisons"),
    ("UPPER(k) = 'A'", "only comparisons"),
])
def test_refusals_name_the_having(tmp_path, clause, why):
    with pytest.raises(FlinkSettingsError) as e:
        _having(tmp_path, clause)
    assert str(e.value).startswith(f"line 11: HAVING {clause}") and why in str(e.value)
