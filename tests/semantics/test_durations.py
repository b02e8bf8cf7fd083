"""Durations as people read them (semantics/durations.py): ISO-8601 as java.time.Duration.parse reads it, the
config's spelling and the spoken one of the why-report's page and plot."""
from __future__ import annotations

import pytest

from event_replay.semantics.durations import format_duration, iso_duration_ms, parse_duration_ms, spoken_duration


@pytest.mark.parametrize("text, ms", [
    ("PT5S", 5000), ("pt5s", 5000), ("Pt1H30m", 5_400_000), ("P2D", 172_800_000), ("p1dT2h3M4s", 93_784_000),
    ("PT0.25S", 250), ("PT0,25S", 250), ("PT5.S", 5000), ("PT0.123000000S", 123), ("P0D", 0), ("PT0S", 0),
    ("P1Dt", 86_400_000),  # the JDK's check for a T without time is for an upper-case T only
])
def test_iso_durations_in_either_case(text, ms):
    assert iso_duration_ms(text) == ms and parse_duration_ms(f" {text} ") == ms


@pytest.mark.parametrize("text, why", [
    ("P1W", "no years, months or weeks"), ("P1M", "no years, months or weeks"), ("P1Y2D", "no years"),
    ("P", "not a duration"), ("PT", "not a duration"), ("P1DT", "not a duration"), ("PT1.5M", "not a duration"),
    ("PT.5S", "not a duration"), ("PT-5S", "not a duration"), ("PT1S2M", "not a duration"),
    ("PT0.0005S", "finer than a millisecond"), ("PT\u0661S", "not a duration"),
])
def test_what_java_refuses_is_refused(text, why):
    text = text.encode().decode("unicode_escape")  # an Arabic-Indic digit: Java reads ASCII digits only
    with pytest.raises(ValueError, match=why):
        iso_duration_ms(text)


def test_spoken_duration_says_each_length_in_its_unit():
    assert spoken_duration(25) == "25 ms" and spoken_duration(999) == "999 ms"
    assert spoken_duration(1000) == "1.0 s" and spoken_duration(74_400) == "74.4 s" and spoken_duration(119_900) == "119.9 s"
    assert spoken_duration(120_000) == "2.0 min" and spoken_duration(240_000) == "4.0 min"
    assert spoken_duration(5_400_000) == "90.0 min" and spoken_duration(7_200_000) == "2.0 h"
    assert spoken_duration(90_000_000) == "25.0 h" and spoken_duration(216_000_000) == "2.5 d"
    assert spoken_duration(250.4) == "250 ms" and spoken_duration(None) == "-"


def test_format_duration_is_the_configs_exact_spelling():
    assert [format_duration(ms) for ms in (500, 5000, 120_000, 3_600_000, 86_400_000, 1500)] == \
        ["500ms", "5s", "2m", "1h", "1d", "1500ms"]
