"""Durations and instants as integer milliseconds (the unit of SEMANTICS)."""
from __future__ import annotations

import datetime as dt
import re

import pendulum

NEG_INF = -(2**63)
POS_INF = 2**63 - 1

_UNIT_MS = {"ms": 1, "s": 1000, "m": 60_000, "min": 60_000, "h": 3_600_000, "d": 86_400_000}
_SHORT = re.compile(r"^\s*(\d+)\s*(ms|s|min|m|h|d)\s*$")


def parse_duration_ms(value: object) -> int:
    """`500ms`, `5s`, `1m`, `2h`, `1d`, ISO-8601 `PT5S` (as `iso_duration_ms` reads it), or an int of milliseconds."""
    if isinstance(value, bool):
        raise ValueError(f"not a duration: {value!r}")
    if isinstance(value, int):
        return value
    if isinstance(value, dt.timedelta):
        return _timedelta_ms(value)
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"not a duration: {value!r}")
    m = _SHORT.match(value)
    if m:
        return int(m.group(1)) * _UNIT_MS[m.group(2)]
    text = value.strip()
    if text.upper().startswith("P"):
        return iso_duration_ms(text)
    raise ValueError(f"not a duration: {value!r} (use e.g. 500ms, 5s, 1m, PT5S)")


# java.time.Duration.parse's grammar, PnDTnHnMn.nS with its letters in either case (what Flink's options and the
# JDK accept), without its signs: a negative duration means nothing in a config.
_ISO = re.compile(r"P(?:([0-9]+)D)?(T(?:([0-9]+)H)?(?:([0-9]+)M)?(?:([0-9]+)(?:[.,]([0-9]{0,9}))?S)?)?", re.IGNORECASE)


def iso_duration_ms(text: str) -> int:
    """`PT5S`, `pt0.5s`, `P1DT2H30M`, ... as milliseconds; refused as java.time.Duration.parse refuses (years, months
    and weeks, `PT`, fractions of minutes), and a fraction finer than a millisecond (it has no replay equivalent)."""
    m = _ISO.fullmatch(text)
    days, t_part, hours, minutes, seconds, fraction = m.groups() if m else (None,) * 6
    no_time = (hours, minutes, seconds) == (None, None, None)
    # `P`, `PT`, `P1DT` are refused; the JDK checks for a bare upper-case T only, so it reads `P1Dt` as one day.
    if m is None or (days is None and no_time) or (t_part == "T" and no_time):
        raise ValueError(f"not a duration: {text!r} (ISO-8601 durations are PnDTnHnMn.nS, as java.time.Duration "
                         "reads them: no years, months or weeks)")
    nanos = (fraction or "").ljust(9, "0")
    if nanos[3:].strip("0"):
        raise ValueError(f"duration {text!r} is finer than a millisecond, the replay's unit")
    return ((int(days or 0) * 24 + int(hours or 0)) * 60 + int(minutes or 0)) * 60_000 + int(seconds or 0) * 1000 \
        + int(nanos[:3])


def _timedelta_ms(td: dt.timedelta) -> int:
    return (td.days * 86_400 + td.seconds) * 1000 + td.microseconds // 1000


def parse_instant_ms(value: object) -> int:
    """An instant as epoch milliseconds: an int, an ISO-8601 timestamp (UTC if no offset)."""
    if isinstance(value, bool):
        raise ValueError(f"not an instant: {value!r}")
    if isinstance(value, int):
        return value
    if isinstance(value, dt.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=dt.timezone.utc)
        return _timedelta_ms(value - dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc))
    if isinstance(value, dt.date):
        return parse_instant_ms(dt.datetime(value.year, value.month, value.day))
    if isinstance(value, str) and value.strip():
        try:
            parsed = pendulum.parse(value.strip(), tz="UTC")
        except Exception as exc:
            raise ValueError(f"not an instant: {value!r} ({exc})") from None
        if isinstance(parsed, dt.datetime):
            return parse_instant_ms(parsed)
        if isinstance(parsed, dt.date):
            return parse_instant_ms(parsed)
    raise ValueError(f"not an instant: {value!r} (use ISO-8601, e.g. 2024-01-01T00:00:00Z)")


def format_duration(ms: int) -> str:
    """The shortest exact spelling of a duration, as a config writes it: 500ms, 5s, 2m, 1h, 1d."""
    for unit, size in (("d", 86_400_000), ("h", 3_600_000), ("m", 60_000), ("s", 1000)):
        if ms and ms % size == 0:
            return f"{ms // size}{unit}"
    return f"{ms}ms"


def spoken_duration(ms: float | None) -> str:
    """A duration as a person says it, to a tenth of its unit: 250 ms, 4.1 s, 3.9 min, 1.2 h, 2.5 d ('-': none)."""
    if ms is None:
        return "-"
    if ms < 1000:
        return f"{ms:.0f} ms"
    for unit, size, below in (("s", 1000, 120_000), ("min", 60_000, 7_200_000), ("h", 3_600_000, 172_800_000)):
        if ms < below:
            return f"{ms / size:.1f} {unit}"
    return f"{ms / 86_400_000:.1f} d"
