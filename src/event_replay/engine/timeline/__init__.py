"""Stage 1 of the Spark engine: the watermark timeline (docs/semantics.md, "Watermarks"), set-based.

Nothing walks the rows one by one. The timeline is small next to the rows: under periodic emission a split
changes only at ticks, so one aggregate per (split, tick with rows) gives everything (`periodic.py`): on the
driver with numpy when that table is small (`driver.py`, `split_changes.py`, `stream.py`), else as DataFrames
(`periodic_spark.py`, the same closed forms). Per-event emission has a change point per row and its own path
(`per_event.py`). Each row then needs only the stream watermark just before it (`wm_before`).

Partition replay (`hold`) continues from a `TimelineCarry`: per split its last row group before the previous
partition's last tick, as (t, M) with M the max timestamp after it, plus its group at the tick just after (rows
that arrived after the last tick, raw max E), and the stream's watermark and idle flag. The closed forms
regenerate every split's changes from those pseudo-groups; the ones before the partition's first tick only seed
each split's state there (they were already emitted), so the outputs are exactly those of one replay of the
whole history.

The semantics follow the reference model (`event_replay.semantics.reference`), including its side-input rule:
side inputs publish +inf from the start and are never idle, so with a side input declared the stream is never
idle, and when every other split is idle the stream moves to +inf.
"""
from __future__ import annotations

from pyspark.sql import DataFrame

from ...io.read_order import TickPartials
from ...semantics.config import JobConfig
from ..contract import NEG_INF, POS_INF, Timeline
from .carry import TimelineCarry, TimelineEnd
from .per_event import per_event
from .periodic import periodic

__all__ = ["TimelineCarry", "TimelineEnd", "compute_timeline", "compute_timeline_carried"]


def compute_timeline(rows: DataFrame, cfg: JobConfig, splits: list[str], start_ms: int, end_ms: int,
                     tick_partials: TickPartials | None = None) -> Timeline:
    """The stream watermark before every row, the watermark changes and the values the stream moved to.

    `splits` is the full declared split list (sorted, with side inputs); `rows` are cut to the range.
    `tick_partials`: the rows' per-(split, tick) event times, if the read took them (driver.py)."""
    return compute_timeline_carried(rows, cfg, splits, start_ms, end_ms, None, tick_partials)[0]


def compute_timeline_carried(rows: DataFrame, cfg: JobConfig, splits: list[str], start_ms: int, end_ms: int,
                             carry: TimelineCarry | None,
                             tick_partials: TickPartials | None = None) -> tuple[Timeline, TimelineEnd]:
    """compute_timeline continuing from `carry` (None: the start of a history), and the state it ends in.
    With a carry, only the changes at or after the range's first tick (rows: at or after start_ms) come out and
    stream_values holds only values above the carried stream watermark."""
    side = set(cfg.source.side_inputs)
    main_splits = sorted(s for s in splits if s not in side)
    has_side = any(s in side for s in splits)
    # A side input publishes +inf when it is created; with no other split that is the stream's value at once.
    initial = POS_INF if (not main_splits and has_side) else NEG_INF
    if cfg.watermark.periodic:
        return periodic(rows, cfg, main_splits, has_side, initial, start_ms, end_ms, carry, tick_partials)
    return per_event(rows, cfg, main_splits, side, initial, start_ms, carry)
