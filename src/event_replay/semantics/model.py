"""The records the semantics speak of: log rows in, firings, late rows and watermark changes out."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

FIRE_WATERMARK = "watermark"
FIRE_LATE_ROW = "late_row"
FIRE_END_OF_INPUT = "end_of_input"


@dataclass(frozen=True)
class LogRow:
    split: str
    offset: int
    arrival_time: int  # ms since epoch: the replay clock
    event_time: int  # ms since epoch
    key: Any
    payload: Mapping[str, Any] = field(default_factory=dict)

    def replay_order(self) -> tuple[int, str, int]:
        return (self.arrival_time, self.split, self.offset)

    def timed_by(self, time: str) -> "LogRow":
        """The row as the windows see it under `window.time`: ingestion and processing time take the event time
        from the arrival time (docs/semantics.md, "Time notions")."""
        if time == "event":
            return self
        return LogRow(self.split, self.offset, self.arrival_time, self.arrival_time, self.key, self.payload)


@dataclass(frozen=True)
class Firing:
    key: Any
    window_start: int
    window_end: int
    fire_index: int
    fire_watermark: int | None  # None for an end-of-input firing
    fire_reason: str
    aggregates: Mapping[str, Any]
    rows: tuple[tuple[str, int], ...] = ()  # (split, offset) of every row the window held, sorted


@dataclass(frozen=True)
class LateRow:
    row: LogRow
    late_watermark: int


@dataclass(frozen=True)
class WatermarkChange:
    replay_time: int  # the tick (periodic) or the row's arrival time (per-event)
    scope: str  # "split" or "stream"
    split: str | None  # None for the stream
    watermark: int | None  # None while idle
    idle: bool


@dataclass
class ReplayResult:
    firings: list[Firing]
    late_rows: list[LateRow]
    watermarks: list[WatermarkChange]
    # The stream watermark each row saw just before it, by (split, offset): what the windows read.
    wm_before: dict[tuple[str, int], int] = field(default_factory=dict)
    # Every value the stream watermark moved to, ascending (excluding the flush's +inf).
    stream_values: list[int] = field(default_factory=list)
    # (split, offset) of every row the job's filter dropped (docs/semantics.md, "Row filter"), in replay order.
    filtered: list[tuple[str, int]] = field(default_factory=list)
