"""engine/timeline/carry.py: the range's tick timeline (`Ticks`). (Not test_carry.py: pytest imports test files
by their base name, and tests/engine/test_carry.py has it.)"""
from __future__ import annotations

import dataclasses

import pytest

from event_replay.engine.timeline.carry import StreamBefore, Ticks


def test_ticks_count_both_ends_and_bound_the_next_range():
    ticks = Ticks(interval=200, first=1000, last=1800, origin=400)
    assert ticks.count == 5  # 1000, 1200, ..., 1800
    assert ticks.end_bound == 2000


def test_a_range_of_one_tick():
    ticks = Ticks(interval=50, first=-100, last=-100, origin=-100)
    assert (ticks.count, ticks.end_bound) == (1, -50)


def test_ticks_and_the_stream_before_are_values():
    ticks = Ticks(interval=1, first=0, last=0, origin=0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        ticks.last = 5
    assert StreamBefore(initial=3, value=1, idle=False) == StreamBefore(3, 1, False)
