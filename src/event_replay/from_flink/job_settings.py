"""The SETs and table options in force for a Flink SQL window, as the replay's `watermark.*`: the WATERMARK FOR
clause (`sql` strategy and its delay), `pipeline.auto-watermark-interval`, the idle timeout (SET or table option),
the table's emit strategy; settings that change a window aggregation's output without a replay equivalent are
refused, settings with no effect listed in the header, and a mapped SET written after the query noted as not
applying to it.
"""
from __future__ import annotations


from sqlglot import exp

from ..semantics.durations import format_duration
from .query import processing_time_call
from .script import Script, Table, Window
from .script_text import line_of, user_text
from .rowtime import Rowtime
from .settings import Derived, FlinkSettingsError, flink_duration_ms, no_effect
from .window_tvf import interval_ms

# SETs that change what a window aggregation emits and have no replay equivalent (Flink refuses the first two
# with window TVFs too).
_REFUSED_SETTINGS = {
    "table.exec.emit.early-fire.enabled": "early firings are not replayed",
    "table.exec.emit.late-fire.enabled": "late firings of window aggregations are not replayed",
    "table.exec.emit.allow-lateness": "the replay of a Flink SQL window has no allowed lateness",
}
# SETs the replay reads (sql.py maps them).
_MAPPED_SETTINGS = ("pipeline.auto-watermark-interval", "table.exec.source.idle-timeout", "execution.runtime-mode",
                    "table.local-time-zone")
_TABLE_WATERMARK_OPTIONS = ("scan.watermark.emit.strategy", "scan.watermark.idle-timeout")


def review_settings(derived: Derived, window: Window, table: Table) -> None:
    """Every SET in force at the query: mapped, refused by name, or of no effect (listed in the header)."""
    for key, (value, line) in window.settings.items():
        construct = f"SET '{key}' = '{value}'"
        if key in _REFUSED_SETTINGS:
            if value.strip().lower() not in ("false", "0", "0 s", "0s", "0 ms", "0ms"):
                raise FlinkSettingsError(construct, f"{_REFUSED_SETTINGS[key]}: not mapped", line)
            derived.notes.append(f"{construct} (line {line}): off, as by default")
        elif key in _MAPPED_SETTINGS:
            continue
        elif key == "table.sql-dialect":
            if value.strip().lower() != "default":
                raise FlinkSettingsError(construct, "the converter reads Flink's default dialect only", line)
            derived.notes.append(f"{construct} (line {line}): Flink's default dialect")
        elif no_effect(key):
            derived.notes.append(f"{construct} (line {line}): {no_effect(key)}")
        else:
            raise FlinkSettingsError(construct, "a setting the converter does not know: it may change what the job "
                                     "computes, so it is not ignored (docs/flink_settings.md lists those read)", line)
    for key in table.options:
        if key.startswith("scan.watermark.") and key not in _TABLE_WATERMARK_OPTIONS:
            raise FlinkSettingsError(f"'{key}' = '{table.options[key]}' of CREATE TABLE {table.name}",
                                     "a watermark option the converter does not map (watermark alignment pauses "
                                     "splits, which changes the order rows are read in)", table.line)


def later_settings(derived: Derived, script: Script, window: Window) -> None:
    """SETs written after the query: Flink does not apply them to it; said in the header so it is not a surprise."""
    start = window.statement.line if window.statement is not None else window.line
    for key, value, line in script.sets:
        if line > start and (key in _MAPPED_SETTINGS or key in _REFUSED_SETTINGS or key == "*"):
            what = f"SET '{key}' = '{value}'" if value is not None else ("RESET" if key == "*" else f"RESET '{key}'")
            derived.notes.append(f"{what} (line {line}) comes after the query (line {start}): not applied to it "
                                 "(a SET applies to the statements after it)")


def watermark_into(derived: Derived, table: Table, rowtime: Rowtime, window: Window) -> None:
    wm = table.watermark
    wm_line, wm_col = line_of(wm, table.line), wm.this.name
    expr = wm.expression
    shown = f"WATERMARK FOR {wm_col} AS {user_text(expr, table.statement)}"
    if processing_time_call(expr) is not None:
        raise FlinkSettingsError(shown, "a watermark from processing time: not mapped", wm_line)
    if isinstance(expr, exp.Column) and expr.name.lower() == wm_col.lower():
        delay = 0
    elif isinstance(expr, exp.Sub) and isinstance(expr.this, exp.Column) and expr.this.name.lower() == \
            wm_col.lower() and isinstance(expr.expression, exp.Interval):
        delay = interval_ms(expr.expression, shown, wm_line, statement=table.statement)
    else:
        raise FlinkSettingsError(shown, f"not mapped: only `{wm_col} - INTERVAL '...' unit` (max - d) or `{wm_col}` "
                                 "(max) have a replay strategy", wm_line)
    derived.set("watermark.strategy", "sql", f"{shown} (line {wm_line}): max - d")
    derived.set("watermark.max_out_of_orderness", format_duration(delay), "d of the WATERMARK expression")
    emit_into(derived, table, window)


def emit_into(derived: Derived, table: Table, window: Window) -> None:
    """emit, interval and idle timeout: the table's scan.watermark.* options, else the SETs before the query."""
    settings = window.settings
    where = f"of CREATE TABLE {table.name} (line {table.line})"
    emit = table.options.get("scan.watermark.emit.strategy", "on-periodic").strip().lower()
    if emit not in ("on-periodic", "on-event"):
        raise FlinkSettingsError(f"'scan.watermark.emit.strategy' = '{emit}'", "unknown (on-periodic, on-event)",
                                 table.line)
    if emit == "on-event":
        derived.set("watermark.emit", "per_event", f"'scan.watermark.emit.strategy' = 'on-event' {where}")
    else:
        value, line = settings.get("pipeline.auto-watermark-interval", ("200ms", None))
        construct = f"SET 'pipeline.auto-watermark-interval' = '{value}'"
        interval = flink_duration_ms(value, construct, line)
        if interval == 0:
            raise FlinkSettingsError(construct, "0 turns periodic watermarks off: not mapped", line)
        derived.set("watermark.emit", "periodic", "Flink SQL watermarks are periodic unless on-event")
        derived.set("watermark.interval", format_duration(interval),
                    f"{construct} (line {line})" if line else "pipeline.auto-watermark-interval: Flink's default")
    if "scan.watermark.idle-timeout" in table.options:
        value, line = table.options["scan.watermark.idle-timeout"], table.line
        construct = f"'scan.watermark.idle-timeout' = '{value}' {where}"
    elif "table.exec.source.idle-timeout" in settings:
        value, line = settings["table.exec.source.idle-timeout"]
        construct = f"SET 'table.exec.source.idle-timeout' = '{value}' (line {line})"
    else:
        return  # Flink's default 0: sources never go idle
    idle = flink_duration_ms(value, construct, line)
    if idle and emit == "on-event":
        raise FlinkSettingsError(construct, "an idle timeout with on-event watermarks is not mapped (the replay "
                                 "detects idleness at periodic ticks)", line)
    if idle:
        derived.set("watermark.idle_timeout", format_duration(idle), construct)
