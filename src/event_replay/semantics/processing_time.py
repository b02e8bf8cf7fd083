"""Processing-time windows on the replay clock (docs/semantics.md, "Time notions"): the reference model's part.

A row's processing time is its arrival time. Each window [s, e) has a processing-time timer at e - 1 (Flink's
ProcessingTimeTrigger at maxTimestamp()), which fires when the replay clock reaches it, with or without later rows:
watermarks, splits and idleness play no part, and nothing is ever late. At one replay time the rows arriving then
come before the timers due then (as a periodic tick comes after the rows at its time), so a window holds exactly the
rows that arrived in [s, e). A fired window is purged (its cleanup time is its max timestamp), so a session ends at
its timer: a row arriving at or after e - 1 + 1 starts a new one.
"""
from __future__ import annotations

from typing import Any, Iterable

from .aggregates import compile_aggregates
from .config import JobConfig
from .model import FIRE_END_OF_INPUT, FIRE_WATERMARK, Firing, LogRow, ReplayResult
from .row_filter import FiringFilter, RowFilter
from .windows import Window, assign, max_timestamp, merge_into


class ProcessingTimeReplayer:
    """Feed it ranges of the log in order, then `finish` (the same interface as reference.Replayer)."""

    def __init__(self, cfg: JobConfig):
        self.cfg = cfg
        self.aggregate = compile_aggregates(cfg.aggregations)
        self.row_filter = RowFilter(cfg.filter, cfg.source.columns) if cfg.filter is not None else None
        self.having = FiringFilter(cfg.having) if cfg.having is not None else None
        self.windows: dict[Any, dict[Window, list[LogRow]]] = {}  # key -> open windows and their rows
        self.fire_counts: dict[tuple[Any, int, int], int] = {}
        self.result = ReplayResult(firings=[], late_rows=[], watermarks=[])

    def replay_range(self, rows: Iterable[LogRow], start: int, end: int) -> None:
        """The rows of [start, end) in replay order; the timers due before each row fire first, and every timer
        due in the range (e - 1 < end) fires by its end."""
        for row in sorted(rows, key=LogRow.replay_order):
            self._fire_due(before=row.arrival_time)  # timers at T fire after the rows at T
            if self.row_filter is not None and not self.row_filter.keeps(row):
                self.result.filtered.append((row.split, row.offset))  # filtered before the window operator
                continue
            self._add(row.timed_by("processing"))
        self._fire_due(before=end)

    def finish(self, end_of_input: str | None = None) -> ReplayResult:
        if (end_of_input or self.cfg.replay.end_of_input) == "flush":
            self._fire_due(before=None)
        return self.result

    def _add(self, row: LogRow) -> None:
        open_windows = self.windows.setdefault(row.key, {})
        if self.cfg.window.type != "session":
            for window in assign(row.arrival_time, self.cfg.window):
                open_windows.setdefault(window, []).append(row)
            return
        merged, swallowed = merge_into(assign(row.arrival_time, self.cfg.window)[0], list(open_windows))
        rows = [r for w in sorted(swallowed) for r in open_windows.pop(w)]
        open_windows[merged] = rows + [row]

    def _fire_due(self, before: int | None) -> None:
        """Fire (and purge) every open window whose timer is before `before` (None: all, at the end of input), in
        ascending max timestamp, then key."""
        due = sorted((max_timestamp(w), str(k), k, w) for k, ws in self.windows.items() for w in ws
                     if before is None or max_timestamp(w) < before)
        for fire_time, _, key, window in due:
            rows = self.windows[key].pop(window)
            index = self.fire_counts.get((key, *window), 0)
            self.fire_counts[(key, *window)] = index + 1
            flush = before is None
            aggregates = self.aggregate(rows)
            if self.having is not None and not self.having.keeps({"key": key, **aggregates}):
                continue  # HAVING, after the window operator: fired (and purged), not written
            self.result.firings.append(Firing(
                key=key, window_start=window[0], window_end=window[1], fire_index=index,
                fire_watermark=None if flush else fire_time, fire_reason=FIRE_END_OF_INPUT if flush else FIRE_WATERMARK,
                aggregates=aggregates, rows=tuple(sorted((r.split, r.offset) for r in rows))))
