"""from_flink/job_settings.py: the watermark settings in force for the window: WATERMARK FOR's delay, the SETs
before the query (interval, idle timeout), the table's options (idle timeout, on-event emission); emit settings
without a replay equivalent refused; a SET after the query noted as not applying."""
from __future__ import annotations

import pytest

from event_replay.from_flink.settings import FlinkSettingsError
from test_from_flink_sql import QUERY, TABLE, convert


def test_sets_before_the_query_and_table_options(tmp_path):
    sets = "SET 'pipeline.auto-watermark-interval' = '1 s';\nSET 'table.exec.source.idle-timeout' = '2 min';\n"
    w = convert(tmp_path, sets + TABLE + QUERY)[1].watermark
    assert (w.strategy, w.max_out_of_orderness_ms, w.interval_ms, w.idle_timeout_ms) == ("sql", 5000, 1000, 120_000)
    on_event = TABLE.replace("'connector' = 'kafka'", "'connector' = 'kafka', 'scan.watermark.emit.strategy' = "
                                                      "'on-event'")
    assert convert(tmp_path, on_event + QUERY)[1].watermark.emit == "per_event"
    text, cfg = convert(tmp_path, TABLE + QUERY + "SET 'pipeline.auto-watermark-interval' = '9 s';\n")
    assert cfg.watermark.interval_ms == 200 and "comes after the query" in text


@pytest.mark.parametrize("setting", ["table.exec.emit.late-fire.enabled", "table.exec.emit.allow-lateness"])
def test_emit_settings_are_refused(tmp_path, setting):
    with pytest.raises(FlinkSettingsError) as e:
        convert(tmp_path, f"SET '{setting}' = 'true';\n" + TABLE + QUERY)
    assert setting in str(e.value) and "not mapped" in str(e.value)
