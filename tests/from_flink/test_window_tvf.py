"""from_flink/window_tvf.py: INTERVAL literals as milliseconds, the window TVFs' arguments (positional or named) as
`window.*`, CUMULATE's step and size included, and the offset taken modulo the period."""
from __future__ import annotations

import pytest
import sqlglot

from event_replay.from_flink.dialect import FlinkSQL
from event_replay.from_flink.settings import FlinkSettingsError
from event_replay.from_flink.window_tvf import interval_ms
from test_from_flink_sql import QUERY, TABLE, convert


def _ms(text: str, **kw) -> int:
    return interval_ms(sqlglot.parse_one(text, read=FlinkSQL), "w", 1, **kw)


def test_intervals():
    assert _ms("INTERVAL '10' SECOND") == 10_000 and _ms("INTERVAL '0.5' SECOND") == 500
    assert _ms("INTERVAL '2' HOURS") == 7_200_000 and _ms("INTERVAL '1' DAY") == 86_400_000
    assert _ms("INTERVAL '00:15:00' HOUR TO SECOND") == 900_000
    assert _ms("INTERVAL '-1' HOUR", signed=True) == -3_600_000
    for bad, why in (("INTERVAL '1' MONTH", "fixed length"), ("INTERVAL '-1' HOUR", "negative"),
                     ("INTERVAL '0.0001' SECOND", "whole number")):
        with pytest.raises(FlinkSettingsError, match=why):
            _ms(bad)


@pytest.mark.parametrize("call, window", [
    ("CUMULATE(TABLE events, DESCRIPTOR(ts), INTERVAL '1' HOUR, INTERVAL '1' DAY)", (86_400_000, 3_600_000, 0)),
    ("CUMULATE(DATA => TABLE events, TIMECOL => DESCRIPTOR(ts), SIZE => INTERVAL '1' MINUTE, "
     "STEP => INTERVAL '10' SECOND)", (60_000, 10_000, 0)),
    # Offsets modulo the max size: a negative one and one above it give the same windows as Flink's.
    ("CUMULATE(TABLE events, DESCRIPTOR(ts), INTERVAL '10' SECOND, INTERVAL '1' MINUTE, INTERVAL '-5' SECOND)",
     (60_000, 10_000, 55_000)),
    ("CUMULATE(TABLE events, DESCRIPTOR(ts), INTERVAL '10' SECOND, INTERVAL '1' MINUTE, INTERVAL '65' SECOND)",
     (60_000, 10_000, 5000)),
])
def test_cumulate_arguments(tmp_path, call, window):
    _, cfg = convert(tmp_path, TABLE + QUERY.replace("TUMBLE(TABLE events, DESCRIPTOR(ts), INTERVAL '10' SECOND)",
                                                     call))
    w = cfg.window
    assert (w.type, (w.size_ms, w.step_ms, w.offset_ms)) == ("cumulate", window)


def test_cumulate_refusals(tmp_path):
    for call, why in (("CUMULATE(TABLE events, DESCRIPTOR(ts), INTERVAL '10' SECOND)", "missing SIZE"),
                      ("CUMULATE(TABLE events, DESCRIPTOR(ts), INTERVAL '0' SECOND, INTERVAL '1' MINUTE)",
                       "greater than zero"),
                      ("CUMULATE(TABLE events, DESCRIPTOR(ts), GAP => INTERVAL '1' SECOND, "
                       "SIZE => INTERVAL '1' MINUTE)", "unexpected")):
        with pytest.raises(FlinkSettingsError, match=why):
            convert(tmp_path, TABLE + QUERY.replace("TUMBLE(TABLE events, DESCRIPTOR(ts), INTERVAL '10' SECOND)",
                                                    call))
