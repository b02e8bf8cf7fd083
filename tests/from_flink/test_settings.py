"""What a Flink job's settings become (from_flink/settings.py): Flink's duration strings read as Flink reads them
(refused naming the construct and its line), settings with no effect on the windows, the splits list, and the
commented YAML `render` writes, which always loads as a config."""
from __future__ import annotations

import pytest
import yaml

from event_replay.from_flink.settings import (Derived, FlinkSettingsError, flink_duration_ms, no_effect, render,
                                              split_list)
from event_replay.semantics.config_keys import ConfigError


@pytest.mark.parametrize("value, ms", [
    (5000, 5000), ("5000", 5000), ("200ms", 200), ("5 s", 5000), ("1 min", 60_000), ("2m", 120_000),
    ("3 hours", 10_800_000), ("1d", 86_400_000), (" 10 SECONDS ", 10_000), ("PT5S", 5000), ("PT1M", 60_000),
    (0, 0),
    # ISO-8601 in any case, as java.time.Duration.parse reads it (Flink's Duration options).
    ("pt10s", 10_000), (" Pt0,5S ", 500), ("p1dt2h", 93_600_000), ("PT1h30m", 5_400_000),
])
def test_flink_durations(value, ms):
    assert flink_duration_ms(value, "WATERMARK FOR ts") == ms


@pytest.mark.parametrize("value", ["5 us", "100 ns", "-5 s", "1.5 s", "five seconds", "", None, True, -1, 1.5,
                                   "P1M", "p1w", "pt", "P1DT", "PT1.5M", "-PT5S", "pt0.0001s"])
def test_what_is_no_flink_duration_is_refused_naming_the_construct_and_line(value):
    with pytest.raises(FlinkSettingsError) as e:
        flink_duration_ms(value, "pipeline.auto-watermark-interval", line=7)
    assert (e.value.construct, e.value.line) == ("pipeline.auto-watermark-interval", 7)
    assert str(e.value).startswith("line 7: pipeline.auto-watermark-interval: ") and repr(value) in str(e.value)


def test_settings_with_no_effect_on_the_windows():
    assert no_effect("parallelism.default") == "no effect on what a window aggregation computes"
    assert no_effect("execution.checkpointing.interval") is not None  # by prefix
    assert "TTL" in no_effect("table.exec.state.ttl")
    for key in ("table.exec.source.idle-timeout", "pipeline.auto-watermark-interval", "parallelism"):
        assert no_effect(key) is None, key


def test_split_list():
    assert split_list("p0, p1,,p2 ") == ["p0", "p1", "p2"]
    assert split_list(["a", 1]) == ["a", "1"]
    assert split_list(None) is None and split_list(" , ") is None and split_list([]) is None


def derived() -> Derived:
    d = Derived("read from job.sql", notes=["parallelism.default: no effect"])
    d.set("output.path", "out")  # written after the sections before it, whatever the order set
    d.set("source.path", "yes", "--source")  # a YAML boolean word, kept a string
    d.set("source.columns.key", "item", "GROUP BY item (line 9)")
    d.set("window.type", "tumbling")
    d.set("window.size", "5s", "TUMBLE(ts, INTERVAL '5' SECOND)\n(line 9)")
    d.set("watermark.max_out_of_orderness", "2s", "WATERMARK FOR ts AS ts - INTERVAL '2' SECOND (line 4)")
    d.set("aggregations.n", "count(*)")
    return d


def test_render_writes_each_key_with_its_construct_and_loads_as_a_config():
    text, cfg = render(derived())
    lines = text.splitlines()
    assert lines[0] == "# read from job.sql" and lines[2] == "# Note: parallelism.default: no effect"
    assert [ln for ln in lines if not ln.startswith((" ", "#"))] == \
        ["source:", "watermark:", "window:", "aggregations:", "output:"]
    assert "    key: item  # GROUP BY item (line 9)" in lines
    assert "  size: 5s  # TUMBLE(ts, INTERVAL '5' SECOND) (line 9)" in lines  # one line per key
    assert yaml.safe_load(text)["source"]["path"] == "yes"
    assert (cfg.source.path, cfg.window.size_ms, cfg.watermark.max_out_of_orderness_ms) == ("yes", 5000, 2000)


def test_render_refuses_what_would_not_load():
    d = derived()
    d.set("window.size", "0s")
    with pytest.raises(ConfigError) as e:
        render(d)
    assert e.value.key == "window.size"
