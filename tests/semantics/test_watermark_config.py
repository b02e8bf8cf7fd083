"""semantics/watermark_config.py: the watermark section's keys, each refusal naming its key; defaults and each
strategy's lag; with processing-time windows the section is ignored, with a warning per key."""
from __future__ import annotations

import pytest

from config_cases import DELETE, each_error_names_its_key, with_
from event_replay.semantics.config import parse_config
from event_replay.semantics.config_keys import ConfigWarning

# (changes to the base config, the key the error must name)
BAD = [
    ({"watermark.bogus": 1}, "watermark.bogus"),
    ({"watermark.strategy": "punctuated"}, "watermark.strategy"),
    ({"watermark.max_out_of_orderness": DELETE}, "watermark.max_out_of_orderness"),
    ({"watermark.max_out_of_orderness": "5 parsecs"}, "watermark.max_out_of_orderness"),
    ({"watermark.max_out_of_orderness": -1}, "watermark.max_out_of_orderness"),
    ({"watermark.max_out_of_orderness": True}, "watermark.max_out_of_orderness"),
    ({"watermark.max_out_of_orderness": "P1M"}, "watermark.max_out_of_orderness"),
    ({"watermark.strategy": "monotonous", "watermark.max_out_of_orderness": "1s"}, "watermark.max_out_of_orderness"),
    ({"watermark.emit": "sometimes"}, "watermark.emit"),
    ({"watermark.interval": 0}, "watermark.interval"),
    ({"watermark.interval": "0ms"}, "watermark.interval"),
    ({"watermark.emit": "per_event"}, "watermark.interval"),  # the base's 200ms interval has no meaning then
    ({"watermark.emit": "per_event", "watermark.interval": DELETE, "watermark.idle_timeout": "1s"},
     "watermark.idle_timeout"),
    ({"watermark.emit": "per_event", "watermark.interval": DELETE, "watermark.advance_after_silence": "1s"},
     "watermark.advance_after_silence"),
    ({"watermark.idle_timeout": 0}, "watermark.idle_timeout"),
    ({"watermark.idle_timeout": "soon"}, "watermark.idle_timeout"),
    ({"watermark.advance_after_silence": -5}, "watermark.advance_after_silence"),
    # Issue 7's rules, one case each where the list above had none: negative durations where forbidden,
    # idleness with per-event emission, an unknown strategy (case matters).
    ({"watermark.idle_timeout": "-1s"}, "watermark.idle_timeout"),
    ({"watermark.interval": "-200ms"}, "watermark.interval"),
    ({"watermark.emit": "per_event", "watermark.interval": 0, "watermark.idle_timeout": "1s"},
     "watermark.idle_timeout"),
    ({"watermark.strategy": "BOUNDED"}, "watermark.strategy"),
]


test_each_error_names_its_key = each_error_names_its_key(BAD)


def test_defaults_and_derived_values():
    cfg = parse_config(with_({"watermark.interval": DELETE}))
    assert cfg.watermark.interval_ms == 200  # Flink's default autoWatermarkInterval
    assert cfg.watermark.idle_timeout_ms is None and cfg.watermark.advance_after_silence_ms is None
    # watermark = max_ts - lag, per strategy (SEMANTICS §2).
    assert cfg.watermark.lag_ms == 5001
    sql = parse_config(with_({"watermark.strategy": "sql"})).watermark
    assert sql.lag_ms == 5000
    mono = parse_config(with_({"watermark.strategy": "monotonous", "watermark.max_out_of_orderness": DELETE}))
    assert mono.watermark.lag_ms == 1
    pe = parse_config(with_({"watermark.emit": "per_event", "watermark.interval": DELETE}))
    assert pe.watermark.interval_ms == 0 and not pe.watermark.periodic


def test_processing_time_ignores_the_section_with_a_warning_per_key():
    # Processing time fires on the replay clock: the watermark keys are ignored, each with a warning.
    with pytest.warns(ConfigWarning, match="'watermark.max_out_of_orderness' is ignored"):
        proc = parse_config(with_({"window.time": "processing"}))
    assert proc.window.time == "processing" and proc.window.allowed_lateness_ms == 0
