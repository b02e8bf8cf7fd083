"""The `watermark` section of a job config: the strategy (SEMANTICS §2), its out-of-orderness bound, periodic or
per-event emission, idleness and advance after silence; with processing-time windows, none of it applies.

`parse_watermark` refuses a bad key with a ConfigError naming it; `processing_time_watermark` accepts the section
and warns of each key it ignores; `watermark_raw` writes the section back in the shape `parse_watermark` reads.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any, Literal, Mapping, get_args

from .config_keys import ConfigError, ConfigWarning, read_choice, read_duration, refuse_unknown

Strategy = Literal["bounded_out_of_orderness", "sql", "monotonous"]
Emit = Literal["periodic", "per_event"]
# The values each accepts, in the order error messages list them.
STRATEGIES: tuple[str, ...] = get_args(Strategy)
EMITS: tuple[str, ...] = get_args(Emit)
DEFAULT_INTERVAL_MS = 200  # Flink's default autoWatermarkInterval


@dataclass(frozen=True)
class WatermarkConfig:
    strategy: Strategy = "bounded_out_of_orderness"
    max_out_of_orderness_ms: int = 0
    emit: Emit = "periodic"
    interval_ms: int = DEFAULT_INTERVAL_MS  # 0 when emit == per_event
    idle_timeout_ms: int | None = None
    advance_after_silence_ms: int | None = None

    @property
    def periodic(self) -> bool:
        return self.emit == "periodic"

    @property
    def lag_ms(self) -> int:
        """watermark = max_ts - lag_ms; a fresh generator starts at max_ts = -inf + lag_ms."""
        return {"bounded_out_of_orderness": self.max_out_of_orderness_ms + 1,
                "sql": self.max_out_of_orderness_ms,
                "monotonous": 1}[self.strategy]


def parse_watermark(raw: Mapping[str, Any]) -> WatermarkConfig:
    p = "watermark"
    refuse_unknown(raw, {"strategy", "max_out_of_orderness", "emit", "interval", "idle_timeout",
                         "advance_after_silence"}, p)
    strategy = read_choice(raw, "strategy", STRATEGIES, "bounded_out_of_orderness", p)
    if strategy == "monotonous":
        delay = read_duration(raw, "max_out_of_orderness", p, default=0)
        if delay:
            raise ConfigError(f"{p}.max_out_of_orderness", "must be absent or 0 with strategy monotonous")
    else:
        delay = read_duration(raw, "max_out_of_orderness", p, required=True)
    emit = read_choice(raw, "emit", EMITS, "periodic", p)
    if emit == "periodic":
        interval = read_duration(raw, "interval", p, default=DEFAULT_INTERVAL_MS, strictly_positive=True)
    else:
        interval = read_duration(raw, "interval", p, default=0)
        if interval:
            raise ConfigError(f"{p}.interval", "must be absent or 0 with emit per_event (no ticks)")
    idle = read_duration(raw, "idle_timeout", p, strictly_positive=True)
    silence = read_duration(raw, "advance_after_silence", p)
    if emit == "per_event" and idle is not None:
        raise ConfigError(f"{p}.idle_timeout", "needs emit periodic: idleness is detected at ticks")
    if emit == "per_event" and silence is not None:
        raise ConfigError(f"{p}.advance_after_silence", "needs emit periodic: silence is measured at ticks")
    return WatermarkConfig(strategy=strategy, max_out_of_orderness_ms=delay, emit=emit, interval_ms=interval,
                           idle_timeout_ms=idle, advance_after_silence_ms=silence)


# Processing-time windows fire on the replay clock (docs/semantics.md, "Time notions"): no watermark setting
# changes what they compute, so the section is accepted and ignored, with a warning naming each key it holds.
PROCESSING_TIME_WATERMARK = WatermarkConfig(strategy="monotonous", emit="per_event", interval_ms=0)


def processing_time_watermark(raw: Mapping[str, Any]) -> WatermarkConfig:
    for k in raw:
        # stacklevel 3: the warning points at whoever called parse_config, not at the config's own modules.
        warnings.warn(ConfigWarning(f"config key 'watermark.{k}' is ignored with window.time processing: "
                                    "processing-time windows fire on the replay clock, without watermarks"),
                      stacklevel=3)
    return PROCESSING_TIME_WATERMARK


def watermark_raw(w: WatermarkConfig) -> dict[str, Any]:
    raw: dict[str, Any] = {"strategy": w.strategy, "max_out_of_orderness": w.max_out_of_orderness_ms,
                           "emit": w.emit, "interval": w.interval_ms}
    if w.idle_timeout_ms is not None:
        raw["idle_timeout"] = w.idle_timeout_ms
    if w.advance_after_silence_ms is not None:
        raw["advance_after_silence"] = w.advance_after_silence_ms
    return raw
