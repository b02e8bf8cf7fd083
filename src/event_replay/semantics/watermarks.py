"""Watermark generation and combination (docs/semantics.md; SEMANTICS §2–4), shaped like Flink's `api.common.eventtime`.

Small interfaces: a generator sees events and is asked to emit; idleness is a decorator around any
generator; a multiplexer combines the splits' outputs into the stream's watermark.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from .watermark_config import WatermarkConfig
from .durations import NEG_INF, POS_INF


class WatermarkOutput(Protocol):
    def emit_watermark(self, watermark: int) -> None: ...

    def mark_idle(self) -> None: ...


class WatermarkGenerator(Protocol):
    def on_event(self, event_time: int) -> None: ...

    def on_periodic_emit(self, output: WatermarkOutput) -> None: ...


class FormulaGenerator:
    """bounded_out_of_orderness / sql / monotonous: watermark = max_ts - lag (Flink's BoundedOutOfOrdernessWatermarks)."""

    def __init__(self, lag_ms: int):
        self.lag = lag_ms
        self.max_ts = NEG_INF + lag_ms  # so that the first emitted value is -inf

    def on_event(self, event_time: int) -> None:
        self.max_ts = max(self.max_ts, event_time)

    def on_periodic_emit(self, output: WatermarkOutput) -> None:
        output.emit_watermark(self.max_ts - self.lag)


class SilenceAdvancingGenerator(FormulaGenerator):
    """The formula generator that, once its split has been silent for longer than `wait`, lets a logical clock
    advance by one interval per tick (SEMANTICS §2, silence advance). Before the split's first row there is no
    silence to measure, so it behaves as the plain formula."""

    def __init__(self, lag_ms: int, interval_ms: int, wait_ms: int):
        super().__init__(lag_ms)
        self.interval = interval_ms
        self.wait = wait_ms
        self.last: int | None = None  # max_ts at the latest row
        self.logical: int | None = None

    def on_event(self, event_time: int) -> None:
        super().on_event(event_time)
        self.last = self.max_ts
        self.logical = self.max_ts

    def on_periodic_emit(self, output: WatermarkOutput) -> None:
        if self.last is None:
            super().on_periodic_emit(output)
            return
        self.logical += self.interval
        if self.logical - self.last > self.wait:
            output.emit_watermark(self.logical - self.lag)
            self.max_ts = self.logical
        else:
            super().on_periodic_emit(output)


class SideInputGenerator:
    """A side input that never produces watermarks must not hold the stream back: it counts as +inf."""

    def on_event(self, event_time: int) -> None:
        pass

    def on_periodic_emit(self, output: WatermarkOutput) -> None:
        output.emit_watermark(POS_INF)


class IdlenessTimer:
    """Flink's IdlenessTimer on the replay clock: idle once no row came for longer than the timeout."""

    def __init__(self, timeout_ms: int):
        self.timeout = timeout_ms
        self.counter = 0
        self.last_counter = 0
        self.inactivity_start: int | None = None

    def activity(self) -> None:
        self.counter += 1

    def check_if_idle(self, now: int) -> bool:
        if self.counter != self.last_counter:
            self.last_counter = self.counter
            self.inactivity_start = None
            return False
        if self.inactivity_start is None:
            self.inactivity_start = now
            return False
        return now - self.inactivity_start > self.timeout


class WithIdleness:
    """Decorator: marks the split idle instead of emitting once its timer says so (Flink's WatermarksWithIdleness)."""

    def __init__(self, inner: WatermarkGenerator, timeout_ms: int):
        self.inner = inner
        self.timer = IdlenessTimer(timeout_ms)
        self.idle_now = False
        self.now = NEG_INF  # set by the replay clock before each periodic emit

    def on_event(self, event_time: int) -> None:
        self.inner.on_event(event_time)
        self.timer.activity()
        self.idle_now = False

    def on_periodic_emit(self, output: WatermarkOutput) -> None:
        if self.timer.check_if_idle(self.now):
            if not self.idle_now:
                output.mark_idle()
                self.idle_now = True
        else:
            self.inner.on_periodic_emit(output)


def make_generator(cfg: WatermarkConfig) -> WatermarkGenerator:
    gen: WatermarkGenerator
    if cfg.advance_after_silence_ms is not None:
        gen = SilenceAdvancingGenerator(cfg.lag_ms, cfg.interval_ms, cfg.advance_after_silence_ms)
    else:
        gen = FormulaGenerator(cfg.lag_ms)
    if cfg.idle_timeout_ms is not None:
        gen = WithIdleness(gen, cfg.idle_timeout_ms)
    return gen


@dataclass
class PartialWatermark:
    watermark: int = NEG_INF
    idle: bool = False

    def set_watermark(self, watermark: int) -> bool:
        """Publishing makes the split active; its value never goes back. True if it went up."""
        self.idle = False
        if watermark > self.watermark:
            self.watermark = watermark
            return True
        return False


class WatermarkMultiplexer:
    """Combines the splits (SEMANTICS §4, Flink's WatermarkOutputMultiplexer + CombinedWatermarkStatus).

    Immediate outputs combine at once (rows, per-event emission); deferred outputs only record, and
    `on_periodic_emit` combines (ticks)."""

    def __init__(self, splits: list[str]):
        self.partials = {s: PartialWatermark() for s in splits}
        self.combined = NEG_INF
        self.idle = False

    def immediate(self, split: str) -> WatermarkOutput:
        return _ImmediateOutput(self, self.partials[split])

    def deferred(self, split: str) -> WatermarkOutput:
        return _DeferredOutput(self.partials[split])

    def on_periodic_emit(self) -> None:
        self._update()

    def _update(self) -> None:
        active = [p.watermark for p in self.partials.values() if not p.idle]
        self.idle = not active
        # All idle: move to the largest published watermark (Flink 2.3); else the minimum of the active ones.
        candidate = max(p.watermark for p in self.partials.values()) if self.idle else min(active)
        if candidate > self.combined:
            self.combined = candidate


class _ImmediateOutput:
    def __init__(self, mux: WatermarkMultiplexer, partial: PartialWatermark):
        self.mux, self.partial = mux, partial

    def emit_watermark(self, watermark: int) -> None:
        if self.partial.set_watermark(watermark) and watermark > self.mux.combined:
            self.mux._update()

    def mark_idle(self) -> None:
        self.partial.idle = True
        self.mux._update()


class _DeferredOutput:
    def __init__(self, partial: PartialWatermark):
        self.partial = partial

    def emit_watermark(self, watermark: int) -> None:
        self.partial.set_watermark(watermark)

    def mark_idle(self) -> None:
        self.partial.idle = True
