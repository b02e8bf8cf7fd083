"""The `window` section of a job config: tumbling, sliding, cumulate or session windows, their size, slide, step,
offset or gap,
the allowed lateness, and the time notion they are assigned and fired by (event, ingestion or processing).

`parse_window` refuses a bad key, or a key the window type has no use for, with a ConfigError naming it;
`window_raw` writes the section back in the shape `parse_window` reads.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, Mapping, get_args

from .config_keys import ConfigError, read_choice, read_duration, refuse_unknown

WindowType = Literal["tumbling", "sliding", "cumulate", "session"]
TimeNotion = Literal["event", "ingestion", "processing"]
# The values each accepts, in the order error messages list them.
WINDOW_TYPES: tuple[str, ...] = get_args(WindowType)
TIME_NOTIONS: tuple[str, ...] = get_args(TimeNotion)


@dataclass(frozen=True)
class WindowConfig:
    type: WindowType = "tumbling"
    size_ms: int | None = None
    slide_ms: int | None = None
    offset_ms: int = 0
    gap_ms: int | None = None
    step_ms: int | None = None  # cumulate: windows [start, start + k*step) up to size (Flink SQL's CUMULATE)
    allowed_lateness_ms: int = 0
    time: TimeNotion = "event"


def parse_window(raw: Mapping[str, Any]) -> WindowConfig:
    p = "window"
    refuse_unknown(raw, {"type", "size", "slide", "step", "offset", "gap", "allowed_lateness", "time"}, p)
    wtype = read_choice(raw, "type", WINDOW_TYPES, None, p)
    time = read_choice(raw, "time", TIME_NOTIONS, "event", p)
    lateness = read_duration(raw, "allowed_lateness", p, default=0)
    size = slide = gap = step = None
    offset = 0
    if "step" in raw and wtype != "cumulate":
        raise ConfigError(f"{p}.step", f"does not apply to {wtype} windows (only to cumulate)")
    if wtype == "session":
        for k in ("size", "slide", "offset"):
            if k in raw:
                raise ConfigError(f"{p}.{k}", "does not apply to session windows (use gap)")
        gap = read_duration(raw, "gap", p, required=True, strictly_positive=True)
    else:
        if "gap" in raw:
            raise ConfigError(f"{p}.gap", f"does not apply to {wtype} windows")
        size = read_duration(raw, "size", p, required=True, strictly_positive=True)
        offset = read_duration(raw, "offset", p, default=0)
        if wtype == "sliding":
            slide = read_duration(raw, "slide", p, required=True, strictly_positive=True)
            if slide > size:
                raise ConfigError(f"{p}.slide", f"must not exceed window.size ({slide} ms > {size} ms)")
            if offset >= slide:
                raise ConfigError(f"{p}.offset", "must be smaller than window.slide")
        elif wtype == "cumulate":
            if "slide" in raw:
                raise ConfigError(f"{p}.slide", "does not apply to cumulate windows (use step)")
            step = read_duration(raw, "step", p, required=True, strictly_positive=True)
            if size % step:  # Flink's CUMULATE refuses it too: the windows of a max-size window end on its steps
                raise ConfigError(f"{p}.size", f"must be a multiple of window.step ({size} ms, step {step} ms)")
            if offset >= size:
                raise ConfigError(f"{p}.offset", "must be smaller than window.size")
            if time == "processing":
                raise ConfigError(f"{p}.time", "cumulate windows are replayed on event or ingestion time only")
        else:
            if "slide" in raw:
                raise ConfigError(f"{p}.slide", "does not apply to tumbling windows")
            if offset >= size:
                raise ConfigError(f"{p}.offset", "must be smaller than window.size")
    if time == "processing" and lateness:
        raise ConfigError(f"{p}.allowed_lateness", "processing-time windows have no lateness")
    return WindowConfig(type=wtype, size_ms=size, slide_ms=slide, offset_ms=offset, gap_ms=gap, step_ms=step,
                        allowed_lateness_ms=lateness, time=time)


def window_raw(win: WindowConfig) -> dict[str, Any]:
    raw: dict[str, Any] = {"type": win.type, "allowed_lateness": win.allowed_lateness_ms, "time": win.time}
    if win.type == "session":
        raw["gap"] = win.gap_ms
    else:
        raw["size"] = win.size_ms
        raw["offset"] = win.offset_ms
        if win.type == "sliding":
            raw["slide"] = win.slide_ms
        if win.type == "cumulate":
            raw["step"] = win.step_ms
    return raw
