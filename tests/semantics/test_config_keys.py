"""semantics/config_keys.py: one key read or refused; the error's form; durations in each accepted spelling."""
from __future__ import annotations

import pytest

from config_cases import with_
from event_replay.semantics.config import parse_config
from event_replay.semantics.config_keys import (ConfigError, read_choice, read_duration, read_instant, read_mapping,
                                                refuse_unknown)


def refused(read, *args, **kwargs) -> ConfigError:
    with pytest.raises(ConfigError) as exc:
        read(*args, **kwargs)
    return exc.value


def test_an_error_says_its_key_and_why():
    e = ConfigError("window.size", "is required")
    assert (e.key, e.why, str(e)) == ("window.size", "is required", "config key 'window.size': is required")


def test_a_section_is_a_mapping_or_absent():
    assert read_mapping(None, "replay") == {}
    e = refused(read_mapping, ["a"], "replay")
    assert (e.key, e.why) == ("replay", "must be a mapping, got list")


def test_an_unknown_key_is_refused_with_the_allowed_ones():
    refuse_unknown({"a": 1}, {"a", "b"}, "sec")
    e = refused(refuse_unknown, {"a": 1, "zz": 2}, {"b", "a"}, "sec")
    assert (e.key, e.why) == ("sec.zz", "unknown key (allowed: a, b)")
    assert refused(refuse_unknown, {"zz": 2}, {"a"}, "").key == "zz"  # at the root, no dot


def test_a_choice_is_one_of_the_list_or_its_default():
    assert read_choice({}, "emit", ("periodic", "per_event"), "periodic", "w") == "periodic"
    assert read_choice({"emit": "per_event"}, "emit", ("periodic", "per_event"), "periodic", "w") == "per_event"
    e = refused(read_choice, {}, "type", ("a", "b"), None, "window")
    assert (e.key, e.why) == ("window.type", "is required (one of a, b)")
    e = refused(read_choice, {"type": "A"}, "type", ("a", "b"), None, "window")
    assert (e.key, e.why) == ("window.type", "unknown value 'A' (one of a, b)")


def test_a_duration_is_checked_against_its_bounds():
    assert read_duration({}, "gap", "window", default=7) == 7
    assert read_duration({"gap": None}, "gap", "window") is None
    assert read_duration({"gap": 0}, "gap", "window") == 0
    assert refused(read_duration, {}, "gap", "window", required=True).key == "window.gap"
    assert "greater than zero" in refused(read_duration, {"gap": 0}, "gap", "window", strictly_positive=True).why
    assert "at least 5 ms" in refused(read_duration, {"gap": 4}, "gap", "window", minimum=5).why
    assert refused(read_duration, {"gap": "soon"}, "gap", "window").key == "window.gap"


def test_an_instant_is_utc_ms_or_absent():
    assert read_instant({}, "start", "replay") is None
    assert read_instant({"start": "2024-01-01T00:00:00Z"}, "start", "replay") == 1_704_067_200_000
    assert refused(read_instant, {"start": "not a time"}, "start", "replay").key == "replay.start"


@pytest.mark.parametrize("text,ms", [("500ms", 500), ("5s", 5000), ("1m", 60_000), ("2min", 120_000),
                                     ("PT5S", 5000), ("PT0.25S", 250), ("PT1M30S", 90_000), ("1h", 3_600_000),
                                     ("1d", 86_400_000), (750, 750), ("0ms", 0)])
def test_durations(text, ms):
    cfg = parse_config(with_({"watermark.max_out_of_orderness": text}))
    assert cfg.watermark.max_out_of_orderness_ms == ms
