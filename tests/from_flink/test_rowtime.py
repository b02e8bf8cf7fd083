"""from_flink/rowtime.py: the window's time attribute as the log's column: a physical TIMESTAMP(3) column as it is,
a computed rowtime that only converts a column (its source column), through a view that renames it; other computed
rowtimes and processing time refused, naming the construct."""
from __future__ import annotations

import pytest

from event_replay.from_flink.settings import FlinkSettingsError
from test_from_flink_sql import QUERY, TABLE, convert

COMPUTED = """\
CREATE TABLE events (
  ts_ms BIGINT,
  k STRING,
  v DOUBLE,
  ts AS TO_TIMESTAMP_LTZ(ts_ms, 3),
  WATERMARK FOR ts AS ts - INTERVAL '5' SECOND
) WITH ('connector' = 'kafka');
"""


def test_physical_and_converted_rowtimes(tmp_path):
    assert convert(tmp_path, TABLE + QUERY)[1].source.columns["event_time"] == "ts"
    text, cfg = convert(tmp_path, COMPUTED + QUERY)
    assert cfg.source.columns["event_time"] == "ts_ms" and "TO_TIMESTAMP_LTZ(ts_ms, 3)" in text
    view = "CREATE VIEW renamed AS SELECT ts AS t2, k, v FROM events;\n"
    renamed = QUERY.replace("TABLE events, DESCRIPTOR(ts)", "TABLE renamed, DESCRIPTOR(t2)")
    assert convert(tmp_path, TABLE + view + renamed)[1].source.columns["event_time"] == "ts"


@pytest.mark.parametrize("rowtime, why", [
    ("TO_TIMESTAMP_LTZ(ts_ms * 1000, 3)", "ts"),
    ("PROCTIME()", "processing time"),
])
def test_other_rowtimes_are_refused(tmp_path, rowtime, why):
    with pytest.raises(FlinkSettingsError) as e:
        convert(tmp_path, COMPUTED.replace("TO_TIMESTAMP_LTZ(ts_ms, 3)", rowtime) + QUERY)
    assert why in str(e.value)
