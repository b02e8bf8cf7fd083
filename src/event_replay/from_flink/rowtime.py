"""The window's time attribute in a Flink SQL script: which column of the log is the rowtime the replay reads
(`source.columns.event_time`), from the window's DESCRIPTOR or legacy time column through views to the table.

A physical `TIMESTAMP(3)` / `TIMESTAMP_LTZ(3)` column is read as it is; a computed rowtime only when it is a pure
conversion of a source column (`TO_TIMESTAMP_LTZ(ms, 3)`, `TO_TIMESTAMP(text)`, `CAST(text AS TIMESTAMP(3))`);
processing time (`PROCTIME()`, `CURRENT_TIMESTAMP`, a table without WATERMARK) and any other computed rowtime are
refused, naming the construct.
"""
from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp

from .query import processing_time_call
from .query_source import Source
from .script import Table, Window
from .script_text import line_of, user_text
from .settings import FlinkSettingsError
from .typed import INTEGRAL, ftype


@dataclass
class Rowtime:
    column: str  # the log's column the replay reads (source.columns.event_time)
    kind: str  # TIMESTAMP or TIMESTAMP_LTZ: Flink aligns the windows of the latter in the local time zone
    comment: str
    name: str  # the rowtime column of the table (the WATERMARK FOR column)


def _time_column(window: Window) -> exp.Expr | None:
    args = window.call.expressions
    if window.legacy:
        return args[0] if args else None
    for i, arg in enumerate(args):
        if isinstance(arg, exp.Kwarg) and arg.this.name.upper() == "TIMECOL":
            return arg.expression
        if not isinstance(arg, exp.Kwarg) and i == 1:
            return arg
    return None


def time_attribute(window: Window, source: Source) -> Rowtime:
    """The event-time column of the window: processing time and missing watermarks refused first."""
    text = lambda n: user_text(n, window.statement)  # noqa: E731
    line, table = window.line, source.table
    node = _time_column(window)
    if window.legacy:
        if not isinstance(node, exp.Column):
            raise FlinkSettingsError(f"{text(window.call)}", "the time argument is not a column", line)
        shown = f"the time column {node.name} of GROUP BY {text(window.call)}"
    else:
        if not (isinstance(node, exp.Anonymous) and node.name.upper() == "DESCRIPTOR" and len(node.expressions) == 1
                and isinstance(node.expressions[0], exp.Column)):
            shown = text(node) if node is not None else "(none)"
            raise FlinkSettingsError(f"{window.name} time column {shown}", "expected DESCRIPTOR(column)", line)
        node = node.expressions[0]
        shown = f"DESCRIPTOR({node.name})"
    value = source.columns.get(node.name.lower())
    if value is None:
        raise FlinkSettingsError(shown, f"{node.name} is not a column of {source.describe()}", line)
    if not isinstance(value, str):
        expr, _, view = value
        pt = processing_time_call(expr)
        what = f"{node.name} is {user_text(expr, view.statement)} in view {view.name} (line {view.line})"
        if pt is not None:
            raise FlinkSettingsError(shown, f"{what}: processing time, not mapped (the replay replays event time)",
                                     line)
        raise FlinkSettingsError(shown, f"{what}: not a time attribute (Flink windows a table's rowtime)", line)
    column = value
    computed = table.computed(column)
    where = f"{table.name}, line {line_of(computed, table.line) if computed is not None else table.line}"
    if processing_time_call(computed) is not None:
        raise FlinkSettingsError(shown, f"{column} is {user_text(computed, table.statement)} ({where}): processing "
                                 "time, not mapped (the replay replays event time)", line)
    wm = table.watermark
    if wm is None:
        raise FlinkSettingsError(f"CREATE TABLE {table.name}", "has no WATERMARK FOR clause: its windows have no "
                                 "event time to replay (processing-time windows are not mapped)", table.line)
    wm_line, wm_col = line_of(wm, table.line), wm.this.name
    if wm_col.lower() != column.lower():
        raise FlinkSettingsError(shown, f"is not the watermark column of {table.name} (WATERMARK FOR {wm_col}, "
                                 f"line {wm_line})", line)
    via = f" (through {source.describe()})" if source.views else ""
    if computed is None:
        t = ftype(table.type_of(column))
        if t.kind not in ("TIMESTAMP", "TIMESTAMP_LTZ"):
            raise FlinkSettingsError(f"WATERMARK FOR {wm_col}", f"{column} is a {t}: a rowtime is a TIMESTAMP(3) or "
                                     "TIMESTAMP_LTZ(3)", wm_line)
        return Rowtime(column, t.kind, f"{_where(shown, window)}{via}: the rowtime {column} {t}", column)
    src, kind, how = _pure_conversion(computed, table, column)
    return Rowtime(src, kind, f"{_where(shown, window)}{via}: the rowtime {column} AS "
                              f"{user_text(computed, table.statement)} ({where}): {how}", column)


def _where(shown: str, window: Window) -> str:
    return f"{shown} (line {window.line})" if window.legacy else f"{shown} of {window.name} (line {window.line})"


def _pure_conversion(expr: exp.Expr, table: Table, column: str) -> tuple[str, str, str]:
    """(the log column, TIMESTAMP or TIMESTAMP_LTZ, how) of a computed rowtime that only converts a column."""
    construct = f"{column} AS {user_text(expr, table.statement)}"
    line = line_of(expr, table.line)

    def refuse(why: str):
        raise FlinkSettingsError(construct, f"a computed rowtime {why}: not mapped (mapped: TO_TIMESTAMP_LTZ(ms, 3), "
                                 "TO_TIMESTAMP(text), CAST(text AS TIMESTAMP(3)) of a column)", line)

    def physical(node: exp.Expr) -> tuple[str, object]:
        if not isinstance(node, exp.Column) or node.name.lower() not in table.columns:
            refuse("that converts an expression, not a column of the table")
        if table.computed(node.name) is not None:
            refuse(f"over the computed column {node.name}")
        return table.columns[node.name.lower()].name, ftype(table.type_of(node.name))

    if isinstance(expr, exp.Anonymous) and expr.name.upper() == "TO_TIMESTAMP_LTZ":
        args = expr.expressions
        if not args or len(args) > 2:
            refuse("TO_TIMESTAMP_LTZ with other arguments")
        src, t = physical(args[0])
        precision = args[1].name if len(args) == 2 else "3"
        if len(args) == 2 and not (isinstance(args[1], exp.Literal) and not args[1].is_string):
            refuse("with a precision that is not a constant")
        if t.kind not in INTEGRAL:
            refuse(f"of a {t} column (epoch milliseconds are an integer)")
        if precision == "0":
            refuse("of epoch seconds (precision 0): the replay reads the event time as epoch milliseconds")
        if precision != "3":
            refuse(f"with precision {precision}")
        return src, "TIMESTAMP_LTZ", f"the replay reads {src} ({t}, epoch milliseconds)"
    if isinstance(expr, exp.Anonymous) and expr.name.upper() == "TO_TIMESTAMP":
        args = expr.expressions
        if len(args) != 1 and not (len(args) == 2 and isinstance(args[1], exp.Literal)
                                   and args[1].name == "yyyy-MM-dd HH:mm:ss"):
            refuse("with a format other than 'yyyy-MM-dd HH:mm:ss'")
        src, t = physical(args[0])
        if t.kind != "STRING":
            refuse(f"of a {t} column")
        return src, "TIMESTAMP", f"the replay reads {src} ('yyyy-MM-dd HH:mm:ss[.SSS]' text, as UTC wall clock)"
    if isinstance(expr, exp.Cast) and not isinstance(expr, exp.TryCast):
        target = ftype(expr.args.get("to"))
        if target.kind != "TIMESTAMP":
            refuse(f"CAST to {target} (only CAST(text AS TIMESTAMP(3)) is a pure conversion)")
        if target.precision != 3:
            refuse(f"CAST to TIMESTAMP({target.precision}) (the replay's event time is in milliseconds: "
                   "TIMESTAMP(3))")
        src, t = physical(expr.this)
        if t.kind == "STRING":
            return src, "TIMESTAMP", f"the replay reads {src} ('yyyy-MM-dd HH:mm:ss[.SSS]' text, as UTC wall clock)"
        if t.kind == "TIMESTAMP":
            return src, "TIMESTAMP", f"the replay reads {src} ({t})"
        if t.kind == "TIMESTAMP_LTZ":
            refuse(f"CAST of a {t} to TIMESTAMP (a shift by the local time zone)")
        refuse(f"CAST of a {t} (Flink refuses a number cast to TIMESTAMP: TO_TIMESTAMP_LTZ(x, 3) maps)")
    refuse("that is not a pure conversion of a column")
