"""The window of a Flink SQL windowing query as `window.*`: the TVF's or legacy group window's arguments, positional
or named (`SIZE => INTERVAL ...`), INTERVAL literals as milliseconds, and the local time zone that aligns a
TIMESTAMP_LTZ rowtime's windows (a fixed-offset zone -> `window.offset`; a zone with daylight saving is refused).

TUMBLE -> tumbling, HOP -> sliding, SESSION -> session, CUMULATE -> cumulate (step, max size; Flink requires the
size to be a multiple of the step). An offset is taken modulo the slide (step, size): Flink's window start is the
same. Window aggregations have no allowed lateness in Flink SQL: `window.allowed_lateness` is 0.
"""
from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from sqlglot import exp

from ..semantics.durations import format_duration
from .rowtime import Rowtime
from .script import Window
from .script_text import line_of, user_text
from .settings import Derived, FlinkSettingsError

TVF_PARAMS = {  # positional order of the window TVFs' parameters (Flink's docs)
    "TUMBLE": ("DATA", "TIMECOL", "SIZE", "OFFSET"),
    "HOP": ("DATA", "TIMECOL", "SLIDE", "SIZE", "OFFSET"),
    "SESSION": ("DATA", "TIMECOL", "GAP"),
    "CUMULATE": ("DATA", "TIMECOL", "STEP", "SIZE", "OFFSET"),
}
LEGACY_PARAMS = {"TUMBLE": ("TIMECOL", "SIZE"), "HOP": ("TIMECOL", "SLIDE", "SIZE"), "SESSION": ("TIMECOL", "GAP")}
WINDOW_TYPES = {"TUMBLE": "tumbling", "HOP": "sliding", "SESSION": "session", "CUMULATE": "cumulate"}
_UNITS_MS = {"SECOND": 1000, "MINUTE": 60_000, "HOUR": 3_600_000, "DAY": 86_400_000}
_SPAN = ("DAY", "HOUR", "MINUTE", "SECOND")


def bind_arguments(window: Window) -> dict[str, exp.Expr]:
    """The window's arguments by parameter name, positional or named (`SIZE => INTERVAL ...`)."""
    name, line = window.name, window.line
    text = lambda n: user_text(n, window.statement)  # noqa: E731
    params, bound = (LEGACY_PARAMS if window.legacy else TVF_PARAMS)[name], {}
    for i, arg in enumerate(window.call.expressions):
        key = arg.this.name.upper() if isinstance(arg, exp.Kwarg) else (params[i] if i < len(params) else None)
        if key not in params or key in bound:
            why = "unexpected" if not window.legacy else "unexpected (a legacy group window has no offset: " \
                                                         "the TVF form takes one)"
            raise FlinkSettingsError(f"{name} argument {text(arg)}", f"{why} (parameters: {', '.join(params)})",
                                     line_of(arg, line))
        bound[key] = arg.expression if isinstance(arg, exp.Kwarg) else arg
    missing = [p for p in params if p not in bound and p != "OFFSET"]
    if missing:
        raise FlinkSettingsError(f"{text(window.call)}", f"missing {', '.join(missing)}", line)
    return bound


def interval_ms(node: exp.Expr, construct: str, line: int, *, signed: bool = False,
                statement=None) -> int:
    """`INTERVAL '10' MINUTES`, `INTERVAL '0.5' SECOND`, `INTERVAL '00:15:00' HOUR TO SECOND` as milliseconds."""
    shown = user_text(node, statement) if node is not None else "(none)"
    if not isinstance(node, exp.Interval) or not isinstance(node.this, exp.Literal):
        raise FlinkSettingsError(construct, f"{shown} is not an INTERVAL literal", line)
    text, unit = node.this.name.strip(), node.args.get("unit")
    if isinstance(unit, exp.IntervalSpan):
        units = _SPAN[_SPAN.index(unit.this.name.upper()):_SPAN.index(unit.expression.name.upper()) + 1] \
            if unit.this.name.upper() in _SPAN and unit.expression.name.upper() in _SPAN else ()
        fields = re.split(r"[ :]", text.lstrip("-"))
    else:
        units = (unit.name.upper().removesuffix("S"),) if unit is not None else ()
        fields = [text.lstrip("-")]
    if not units or units[0] not in _UNITS_MS or len(fields) != len(units):
        raise FlinkSettingsError(construct, f"{shown}: only DAY, HOUR, MINUTE, SECOND intervals (or spans of them) "
                                 "have a fixed length", line)
    try:
        ms = sum(float(f) * _UNITS_MS[u] for f, u in zip(fields, units))
    except ValueError:
        raise FlinkSettingsError(construct, f"{shown} is not a number of {units[-1]}s", line) from None
    if ms != int(ms):
        raise FlinkSettingsError(construct, f"{shown} is not a whole number of milliseconds", line)
    if text.startswith("-") and not signed:
        raise FlinkSettingsError(construct, f"{shown} is negative", line)
    return -int(ms) if text.startswith("-") else int(ms)


def _positive(node: exp.Expr, construct: str, window: Window) -> int:
    ms = interval_ms(node, construct, window.line, statement=window.statement)
    if ms <= 0:
        raise FlinkSettingsError(construct, f"{user_text(node, window.statement)} must be greater than zero",
                                 window.line)
    return ms


def window_into(derived: Derived, window: Window, args: dict[str, exp.Expr], rowtime: Rowtime) -> None:
    name, line = window.name, window.line
    form = f"GROUP BY {user_text(window.call, window.statement)}" if window.legacy else name
    kind = WINDOW_TYPES[name]
    derived.set("window.type", kind, f"{form} (line {line})")
    if kind == "session":
        derived.set("window.gap", format_duration(_positive(args["GAP"], f"{name} gap", window)), f"gap of {name}")
    else:
        size = _positive(args["SIZE"], f"{name} size", window)
        derived.set("window.size", format_duration(size), f"size of {name}")
        period = size
        if kind == "sliding":
            period = _positive(args["SLIDE"], f"{name} slide", window)
            derived.set("window.slide", format_duration(period), f"slide of {name}")
        if kind == "cumulate":
            step = _positive(args["STEP"], f"{name} step", window)
            if size % step:
                raise FlinkSettingsError(f"{name} size", f"{user_text(args['SIZE'], window.statement)} is not a "
                                         "multiple of the step (Flink refuses it too)", line)
            derived.set("window.step", format_duration(step), f"step of {name}")
        offset, why = 0, []
        if "OFFSET" in args:
            offset = interval_ms(args["OFFSET"], f"{name} offset", line, signed=True, statement=window.statement)
            why.append(f"offset {user_text(args['OFFSET'], window.statement)} of {name}")
        zone = _zone_offset(window, rowtime, period)
        if zone is None and "table.local-time-zone" in window.settings:
            value, zline = window.settings["table.local-time-zone"]
            derived.notes.append(f"SET 'table.local-time-zone' = '{value}' (line {zline}): no effect on the windows "
                                 f"of the TIMESTAMP rowtime {rowtime.name} (only a TIMESTAMP_LTZ's are aligned to "
                                 "local time)")
        if zone is not None:
            zone_ms, zone_why = zone
            offset -= zone_ms
            why.append(zone_why)
        if why:
            derived.set("window.offset", format_duration(offset % period),
                        "; ".join(why) + " (modulo the slide: same windows)")
    derived.set("window.allowed_lateness", "0ms", "Flink SQL window aggregations have no allowed lateness")
    derived.set("window.time", "event", f"{rowtime.name} is the rowtime (WATERMARK FOR) of the table")


# -- the local time zone ---------------------------------------------------------------------------------------

_FIXED = re.compile(r"^(?:UTC|GMT|UT)?([+-])(\d{1,2})(?::?(\d{2}))?$", re.IGNORECASE)


def _zone_offset(window: Window, rowtime: Rowtime, period: int) -> tuple[int, str] | None:
    """(the zone's UTC offset in ms, why) when Flink aligns the windows in the local time zone: a TIMESTAMP_LTZ
    rowtime. None when the zone does not matter (a TIMESTAMP rowtime) or is UTC by assumption and unset."""
    value, line = window.settings.get("table.local-time-zone", (None, None))
    if rowtime.kind != "TIMESTAMP_LTZ":
        return None
    if value is None or value.strip().lower() == "default":
        set_text = "absent" if value is None else "'default'"
        return 0, (f"table.local-time-zone {set_text}: Flink aligns the windows of the TIMESTAMP_LTZ rowtime in the "
                   "JVM's zone; assumed UTC (SET 'table.local-time-zone' = 'UTC' to say so)")
    construct = f"SET 'table.local-time-zone' = '{value}'"
    ms, since = zone_fixed_offset(value.strip(), construct, line)
    held = f" since {since}" if since else ""
    return ms, (f"{construct} (line {line}): {_utc(ms)}{held}, Flink aligns the TIMESTAMP_LTZ rowtime's windows "
                "to local time")


def _utc(ms: int) -> str:
    hours, minutes = divmod(abs(ms) // 60_000, 60)
    return f"UTC{'+' if ms >= 0 else '-'}{hours:02d}:{minutes:02d}"


def zone_fixed_offset(zone: str, construct: str, line: int | None) -> tuple[int, str | None]:
    """(UTC offset in ms, the date from which it holds or None) of a zone whose offset is fixed; refused when the
    zone has daylight saving or changed its offset since 2000."""
    if zone.upper() in ("UTC", "GMT", "Z", "UT"):
        return 0, None
    m = _FIXED.match(zone)
    if m:
        ms = (int(m.group(2)) * 60 + int(m.group(3) or 0)) * 60_000
        return (-ms if m.group(1) == "-" else ms), None
    try:
        tz = ZoneInfo(zone)
    except (ValueError, ZoneInfoNotFoundError):
        raise FlinkSettingsError(construct, "unknown time zone", line) from None
    start, end = datetime(1970, 1, 1, tzinfo=timezone.utc), datetime(2100, 1, 1, tzinfo=timezone.utc)
    since_2000 = datetime(2000, 1, 1, tzinfo=timezone.utc)
    step, t, last_change = timedelta(days=7), start, None
    previous = start.astimezone(tz).utcoffset()
    offsets_since_2000 = []
    while t < end:
        nxt = t + step
        off = nxt.astimezone(tz).utcoffset()
        if nxt >= since_2000 and off not in offsets_since_2000:
            offsets_since_2000.append(off)
        if off != previous and nxt < since_2000:
            lo, hi = t, nxt  # the change is in (lo, hi]: bisect to the second
            while hi - lo > timedelta(seconds=1):
                mid = lo + (hi - lo) / 2
                lo, hi = (mid, hi) if mid.astimezone(tz).utcoffset() == previous else (lo, mid)
            last_change = hi
        previous = off
        t = nxt
    if len(offsets_since_2000) > 1:
        shown = ", ".join(_utc(int(o.total_seconds() * 1000)) for o in offsets_since_2000[:4])
        raise FlinkSettingsError(construct, f"{zone} changes its UTC offset ({shown} since 2000: daylight saving or "
                                 "a change of zone): Flink aligns the windows to local time on each side of a "
                                 "change, one window.offset cannot: not mapped", line)
    ms = int(previous.total_seconds() * 1000)
    return ms, (str(last_change.date()) if last_change is not None else None)


# -- settings --------------------------------------------------------------------------------------------------
