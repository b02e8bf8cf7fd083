"""Durations as people read them (semantics/durations.py): the config's spelling and the spoken one of the
why-report's page and plot."""
from __future__ import annotations

from event_replay.semantics.durations import format_duration, spoken_duration


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
