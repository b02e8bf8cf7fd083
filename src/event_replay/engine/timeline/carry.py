"""What a timeline computation starts from and ends in: the range's ticks, the stream before the range, the state
carried from the partition before (`TimelineCarry`) and the state it leaves (`TimelineEnd`); see the package doc."""
from __future__ import annotations

from dataclasses import dataclass

from pyspark.sql import DataFrame


@dataclass
class TimelineCarry:
    """What the timeline continues from (engine/carry.py carries it): see the module doc."""
    origin_tick: int | None  # the history's first tick: a split with no rows yet goes idle counting from it
    stream_wm: int
    stream_idle: bool
    splits: DataFrame  # split, t, m (periodic: pseudo-groups; per-event: t null, m = the split's watermark)


@dataclass
class TimelineEnd:
    """The timeline's part of the state a partition leaves."""
    splits: DataFrame  # SPLIT_STATE_SCHEMA
    origin_tick: int | None
    stream_last: DataFrame | None  # at most one row, `s_idle`: the stream's idle flag at the end (None: unchanged)


@dataclass(frozen=True)
class Ticks:
    """The range's tick timeline: ticks first..last every `interval`, `end_bound` the next range's first tick,
    `origin` the history's first tick."""
    interval: int
    first: int
    last: int
    origin: int

    @property
    def end_bound(self) -> int:
        return self.last + self.interval

    @property
    def count(self) -> int:
        return (self.last - self.first) // self.interval + 1


@dataclass(frozen=True)
class StreamBefore:
    """The stream before the range: `initial` its floor (carried value, or the side inputs' +inf), `value` and
    `idle` as the carried history left it (-inf, not idle: a new history)."""
    initial: int
    value: int
    idle: bool
