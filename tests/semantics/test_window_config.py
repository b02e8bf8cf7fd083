"""semantics/window_config.py: the window section's keys, each refusal naming its key (a key the window type has
no use for included); defaults; sliding and session windows; time notions."""
from __future__ import annotations

import pytest

from config_cases import DELETE, base, each_error_names_its_key, with_
from event_replay.semantics.config import to_raw
from event_replay.semantics.config_keys import ConfigError
from event_replay.semantics.config import parse_config

# (changes to the base config, the key the error must name)
BAD = [
    ({"window.bogus": 1}, "window.bogus"),
    ({"window.type": DELETE}, "window.type"),
    ({"window.type": "global"}, "window.type"),
    ({"window.time": "wall"}, "window.time"),
    ({"window.size": DELETE}, "window.size"),
    ({"window.size": 0}, "window.size"),
    ({"window.slide": "5s"}, "window.slide"),
    ({"window.gap": "5s"}, "window.gap"),
    ({"window.offset": "10s"}, "window.offset"),
    ({"window.offset": -1}, "window.offset"),
    ({"window.allowed_lateness": "-1s"}, "window.allowed_lateness"),
    ({"window.type": "sliding"}, "window.slide"),
    ({"window.type": "sliding", "window.slide": "20s"}, "window.slide"),
    ({"window.type": "sliding", "window.slide": "5s", "window.offset": "5s"}, "window.offset"),
    ({"window.type": "session", "window.size": DELETE}, "window.gap"),
    ({"window.type": "session", "window.gap": "5s"}, "window.size"),
    ({"window.type": "session", "window.size": DELETE, "window.gap": "5s", "window.offset": 0}, "window.offset"),
    ({"window.type": "session", "window.size": DELETE, "window.gap": 0}, "window.gap"),
    ({"window.time": "processing", "window.allowed_lateness": "1s", "watermark.strategy": "monotonous",
      "watermark.max_out_of_orderness": DELETE, "watermark.emit": "per_event", "watermark.interval": DELETE},
     "window.allowed_lateness"),
    # Issue 7's rules, one case each where the list above had none: negative or zero durations where forbidden,
    # an unknown window type (case matters).
    ({"window.size": "-10s"}, "window.size"),
    ({"window.type": "sliding", "window.slide": 0}, "window.slide"),
    ({"window.type": "sliding", "window.slide": "-5s"}, "window.slide"),
    ({"window.type": "session", "window.size": DELETE, "window.gap": "-1s"}, "window.gap"),
    ({"window.type": "sliding", "window.size": "10s", "window.slide": "11s"}, "window.slide"),
    ({"window.type": "Tumbling"}, "window.type"),
]


test_each_error_names_its_key = each_error_names_its_key(BAD)


def test_defaults():
    cfg = parse_config(base())
    assert cfg.window.offset_ms == 0 and cfg.window.allowed_lateness_ms == 0 and cfg.window.time == "event"


def test_sliding_and_session_windows():
    s = parse_config(with_({"window.type": "sliding", "window.size": "1m", "window.slide": "10s",
                            "window.offset": "2s"})).window
    assert (s.size_ms, s.slide_ms, s.offset_ms) == (60_000, 10_000, 2000)
    g = parse_config(with_({"window.type": "session", "window.size": DELETE, "window.gap": "PT30S"})).window
    assert g.gap_ms == 30_000 and g.size_ms is None


def test_ingestion_time():
    ing = parse_config(with_({"window.time": "ingestion"}))
    assert ing.window.time == "ingestion"


def test_cumulate_windows():
    c = parse_config(with_({"window.type": "cumulate", "window.size": "1d", "window.step": "1h",
                            "window.offset": "2h", "window.allowed_lateness": "5m"}))
    assert (c.window.size_ms, c.window.step_ms, c.window.offset_ms) == (86_400_000, 3_600_000, 7_200_000)
    assert parse_config(to_raw(c)) == c


@pytest.mark.parametrize("change, key, why", [
    ({"window.type": "cumulate"}, "window.step", "required"),
    ({"window.type": "cumulate", "window.step": "3s"}, "window.size", "multiple of window.step"),
    ({"window.type": "cumulate", "window.step": "1s", "window.slide": "1s"}, "window.slide", "use step"),
    ({"window.type": "cumulate", "window.step": "1s", "window.offset": "10s"}, "window.offset", "smaller"),
    ({"window.type": "cumulate", "window.step": "1s", "window.time": "processing"}, "window.time", "event or"),
    ({"window.step": "1s"}, "window.step", "only to cumulate"),
])
def test_cumulate_refusals_name_their_key(change, key, why):
    with pytest.raises(ConfigError) as e:
        parse_config(with_(change))
    assert e.value.key == key and why in str(e.value)
