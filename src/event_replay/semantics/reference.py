"""The reference model: docs/semantics.md (SEMANTICS §1–7) walked row by row, tick by tick. The executable spec.
Processing-time windows have their own walk (processing_time.py): the Replayer hands them over.

Sequential and readable on purpose; it need not be fast. The Spark engine must equal it, and it must equal
Flink's own classes (tests/flink).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

from .aggregates import compile_aggregates
from .config import JobConfig
from .durations import NEG_INF, POS_INF
from .model import (FIRE_END_OF_INPUT, FIRE_LATE_ROW, FIRE_WATERMARK, Firing, LateRow, LogRow, ReplayResult,
                    WatermarkChange)
from .processing_time import ProcessingTimeReplayer
from .row_filter import FiringFilter, RowFilter
from .watermarks import SideInputGenerator, WatermarkMultiplexer, WithIdleness, make_generator
from .windows import Window, assign, cleanup_time, max_timestamp, merge_into


@dataclass
class WindowState:
    rows: list[LogRow] = field(default_factory=list)
    timer_pending: bool = False  # an event-time timer at max_timestamp is registered and has not fired


def declared_splits_of(rows: Sequence[LogRow], cfg: JobConfig, declared: Sequence[str] | None = None) -> list[str]:
    names = set(declared if declared is not None else (cfg.source.splits or ()))
    names |= {r.split for r in rows} | set(cfg.source.side_inputs)
    return sorted(names)


class Replayer:
    """The whole state of a replay; feed it ranges of the log in order, then `finish`."""

    def __init__(self, cfg: JobConfig, splits: Sequence[str]):
        self.cfg = cfg
        self.wm_cfg = cfg.watermark
        self.win_cfg = cfg.window
        self.lateness = cfg.window.allowed_lateness_ms
        self.splits = sorted(splits)
        self.side_inputs = set(cfg.source.side_inputs)
        self.mux = WatermarkMultiplexer(self.splits)
        self.generators = {s: (SideInputGenerator() if s in self.side_inputs else make_generator(self.wm_cfg))
                           for s in self.splits}
        self.aggregate = compile_aggregates(cfg.aggregations)
        self.row_filter = RowFilter(cfg.filter, cfg.source.columns) if cfg.filter is not None else None
        self.having = FiringFilter(cfg.having) if cfg.having is not None else None
        self.windows: dict[Any, dict[Window, WindowState]] = {}  # key -> open windows
        self.fire_counts: dict[tuple[Any, int, int], int] = {}
        self.result = ReplayResult(firings=[], late_rows=[], watermarks=[])
        self._last_split_state = {s: (NEG_INF, False) for s in self.splits if s not in self.side_inputs}
        self._last_stream_state = (NEG_INF, False)
        # A side input counts as +inf from the start.
        for s in self.side_inputs:
            self.generators[s].on_periodic_emit(self.mux.immediate(s))
        # Processing time: windows on the replay clock, no watermarks at all.
        self.processing = ProcessingTimeReplayer(cfg) if cfg.window.time == "processing" else None
        if self.processing is not None:
            self.result = self.processing.result

    # -- the replay clock -------------------------------------------------------------------------

    def replay_range(self, rows: Iterable[LogRow], start: int, end: int) -> None:
        """The rows of one range, in replay order, interleaved with the ticks T of the range (start <= T < end).
        The caller picks the rows: [start, end) on arrival, or up to the last row when the end is implicit."""
        if self.processing is not None:
            self.processing.replay_range(rows, start, end)
            return
        ordered = sorted(rows, key=LogRow.replay_order)
        if not self.wm_cfg.periodic:
            for row in ordered:
                self._on_row(row)
                self._publish_per_event(row)
            return
        interval = self.wm_cfg.interval_ms
        tick = -(-start // interval) * interval  # first multiple of the interval at or after start
        i = 0
        while tick < end:
            while i < len(ordered) and ordered[i].arrival_time <= tick:
                self._on_row(ordered[i])
                i += 1
            self._on_tick(tick)
            tick += interval
        for row in ordered[i:]:
            self._on_row(row)

    def finish(self, end_of_input: str | None = None) -> ReplayResult:
        if self.processing is not None:
            return self.processing.finish(end_of_input)
        if (end_of_input or self.cfg.replay.end_of_input) == "flush":
            self._advance_windows(POS_INF, flush=True)
        return self.result

    # -- watermarks ---------------------------------------------------------------------------------

    def _on_tick(self, tick: int) -> None:
        for split in self.splits:  # in split order, each publishes (or goes idle) ...
            gen = self.generators[split]
            if isinstance(gen, WithIdleness):
                gen.now = tick
            gen.on_periodic_emit(self.mux.deferred(split))
        before = self.mux.combined
        self.mux.on_periodic_emit()  # ... then the splits are combined
        self._record_changes(tick, self.splits)
        if self.mux.combined > before:
            self._advance_windows(self.mux.combined)

    def _publish_per_event(self, row: LogRow) -> None:
        before = self.mux.combined
        self.generators[row.split].on_periodic_emit(self.mux.immediate(row.split))
        self._record_changes(row.arrival_time, [row.split])
        if self.mux.combined > before:
            self._advance_windows(self.mux.combined)

    def _record_changes(self, replay_time: int, splits: Iterable[str]) -> None:
        for split in splits:
            if split in self.side_inputs:
                continue  # always +inf: nothing to report
            p = self.mux.partials[split]
            state = (p.watermark, p.idle)
            if state != self._last_split_state[split]:
                self._last_split_state[split] = state
                self.result.watermarks.append(WatermarkChange(replay_time, "split", split,
                                                              None if p.idle else p.watermark, p.idle))
        stream = (self.mux.combined, self.mux.idle)
        if stream != self._last_stream_state:
            if stream[0] != self._last_stream_state[0]:
                self.result.stream_values.append(stream[0])
            self._last_stream_state = stream
            self.result.watermarks.append(WatermarkChange(replay_time, "stream", None,
                                                          None if self.mux.idle else self.mux.combined,
                                                          self.mux.idle))

    # -- windows ------------------------------------------------------------------------------------

    def _on_row(self, row: LogRow) -> None:
        # The filter reads the row as the log has it (under ingestion time, its own event time too).
        windowed = self.row_filter is None or self.row_filter.keeps(row)
        row = row.timed_by(self.win_cfg.time)
        self.generators[row.split].on_event(row.event_time)
        wm = self.mux.combined  # the stream's watermark as it stood just before the row
        self.result.wm_before[(row.split, row.offset)] = wm
        if not windowed:
            # Flink's filter runs after the watermark assigner, before the window operator: the row has driven its
            # split's watermark and activity (above) and never reaches a window, so it is never late either.
            self.result.filtered.append((row.split, row.offset))
            return
        open_windows = self.windows.setdefault(row.key, {})
        if self.win_cfg.type == "session":
            accepted = self._add_to_session(row, wm, open_windows)
        else:
            accepted = False
            for window in assign(row.event_time, self.win_cfg):
                if cleanup_time(window, self.lateness) <= wm:
                    continue  # late for this window
                accepted = True
                state = open_windows.setdefault(window, WindowState())
                state.rows.append(row)
                self._fire_on_element(row.key, window, state, wm)
        if not accepted:
            self.result.late_rows.append(LateRow(row, wm))

    def _add_to_session(self, row: LogRow, wm: int, open_windows: dict[Window, WindowState]) -> bool:
        own = assign(row.event_time, self.win_cfg)[0]
        merged, swallowed = merge_into(own, list(open_windows))
        if cleanup_time(merged, self.lateness) <= wm:
            return False  # the merged window is late: retired, the row is dropped
        if swallowed != [merged]:
            # Growing (or new): states merge into one window whose timer is set if its end is still ahead.
            state = WindowState()
            for w in sorted(swallowed):
                state.rows.extend(open_windows.pop(w).rows)
            state.timer_pending = max_timestamp(merged) > wm
            open_windows[merged] = state
        state = open_windows[merged]
        state.rows.append(row)
        self._fire_on_element(row.key, merged, state, wm)
        return True

    def _fire_on_element(self, key: Any, window: Window, state: WindowState, wm: int) -> None:
        if max_timestamp(window) <= wm:
            self._fire(key, window, state, wm, FIRE_LATE_ROW)  # a late firing with everything the window holds
        else:
            state.timer_pending = True

    def _advance_windows(self, wm: int, flush: bool = False) -> None:
        """The stream's watermark moved to `wm`: fire due windows in ascending max timestamp, then drop expired ones."""
        due = sorted(((max_timestamp(w), str(k), k, w) for k, ws in self.windows.items() for w in ws), key=lambda x: x[:2])
        for _, _, key, window in due:
            state = self.windows[key][window]
            if state.timer_pending and max_timestamp(window) <= wm:
                state.timer_pending = False
                self._fire(key, window, state, None if flush else wm, FIRE_END_OF_INPUT if flush else FIRE_WATERMARK)
            if cleanup_time(window, self.lateness) <= wm:
                del self.windows[key][window]

    def _fire(self, key: Any, window: Window, state: WindowState, wm: int | None, reason: str) -> None:
        index = self.fire_counts.get((key, *window), 0)
        self.fire_counts[(key, *window)] = index + 1
        aggregates = self.aggregate(state.rows)
        if self.having is not None and not self.having.keeps({"key": key, **aggregates}):
            return  # HAVING stands after the window operator: the firing happened (its index is used), unwritten
        self.result.firings.append(Firing(
            key=key, window_start=window[0], window_end=window[1], fire_index=index, fire_watermark=wm,
            fire_reason=reason, aggregates=aggregates, rows=tuple(sorted((r.split, r.offset) for r in state.rows))))


def replay_range_of(rows: Sequence[LogRow], cfg: JobConfig) -> tuple[int, int, list[LogRow]]:
    """[start, end) on arrival time and the rows in it: the configured range, else first to last arrival,
    every row in and no tick after the last row (SEMANTICS §1)."""
    start, end = cfg.replay.start_ms, cfg.replay.end_ms
    rows = [r for r in rows if (start is None or r.arrival_time >= start) and (end is None or r.arrival_time < end)]
    if start is None:
        start = min((r.arrival_time for r in rows), default=0)
    if end is None:
        end = max((r.arrival_time for r in rows), default=start)
    return start, end, rows


def replay(rows: Iterable[LogRow], cfg: JobConfig, *, declared_splits: Sequence[str] | None = None) -> ReplayResult:
    """Replay a whole history in one go (SEMANTICS §1–7)."""
    start, end, in_range = replay_range_of(list(rows), cfg)
    replayer = Replayer(cfg, declared_splits_of(in_range, cfg, declared_splits))
    replayer.replay_range(in_range, start, end)
    return replayer.finish()
