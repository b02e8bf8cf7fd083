"""A Flink SQL job's replay config: `replay config from-flink-sql FILE.sql`.

The mapping (docs/flink_settings.md has it as tables, with every refusal and why):

- The window's time column -> `source.columns.event_time`: a physical `TIMESTAMP(3)` / `TIMESTAMP_LTZ(3)` column,
  or the source column of a computed rowtime that is a pure conversion (`TO_TIMESTAMP_LTZ(ms, 3)`,
  `TO_TIMESTAMP(text)`, `CAST(text AS TIMESTAMP(3))`); any other computed rowtime is refused, and processing time
  (`PROCTIME()`, `CURRENT_TIMESTAMP`, `NOW()`, `LOCALTIMESTAMP`, a table without WATERMARK) is refused first.
- `WATERMARK FOR c AS c - INTERVAL 'd' unit` -> `watermark.strategy: sql`, `max_out_of_orderness: d`
  (Flink SQL emits max - d: a row at the watermark is not late), `WATERMARK FOR c AS c` -> `sql` with 0.
- The SETs in force where the query is written (a SET after it does not apply to it):
  `pipeline.auto-watermark-interval` -> `watermark.interval` (Flink's default 200 ms; 0 is refused);
  `table.exec.source.idle-timeout`, or the table's `'scan.watermark.idle-timeout'` option, ->
  `watermark.idle_timeout`; `'scan.watermark.emit.strategy' = 'on-event'` -> `watermark.emit: per_event`;
  `execution.runtime-mode` batch is refused (no watermarks); `table.local-time-zone` aligns the windows of a
  TIMESTAMP_LTZ rowtime (a fixed-offset zone -> `window.offset`; a zone with daylight saving is refused); settings
  with no effect on a window's output are listed in the header; any other setting is refused, naming it.
- `TUMBLE(TABLE t, DESCRIPTOR(c), size [, offset])` / `GROUP BY TUMBLE(c, size)` -> tumbling;
  `HOP(TABLE t, DESCRIPTOR(c), slide, size [, offset])` / `GROUP BY HOP(c, slide, size)` -> sliding;
  `SESSION(TABLE t PARTITION BY k, DESCRIPTOR(c), gap)` / `GROUP BY SESSION(c, gap), k` -> session; named
  arguments (`SIZE => ...`) too. An offset is taken modulo the slide (Flink's window start is the same).
  CUMULATE is refused: the engine has no cumulating windows.
- The windowing query's key and aggregates (query.py, typed.py). Window aggregations have no allowed lateness in
  Flink SQL: `window.allowed_lateness` is 0.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

from sqlglot import exp

from ..semantics.config import JobConfig
from ..semantics.durations import format_duration
from .dialect import FlinkSQL
from .query import Source, aggregation_into, clause_text, processing_time_call, resolve_source, table_column
from .script import Script, Table, Window, line_of, read_script, user_text
from .settings import SPLITS_COMMENT, Derived, FlinkSettingsError, flink_duration_ms, render
from .typed import INTEGRAL, ftype

TVF_PARAMS = {  # positional order of the window TVFs' parameters (Flink's docs)
    "TUMBLE": ("DATA", "TIMECOL", "SIZE", "OFFSET"),
    "HOP": ("DATA", "TIMECOL", "SLIDE", "SIZE", "OFFSET"),
    "SESSION": ("DATA", "TIMECOL", "GAP"),
}
LEGACY_PARAMS = {"TUMBLE": ("TIMECOL", "SIZE"), "HOP": ("TIMECOL", "SLIDE", "SIZE"), "SESSION": ("TIMECOL", "GAP")}
WINDOW_TYPES = {"TUMBLE": "tumbling", "HOP": "sliding", "SESSION": "session"}
_UNITS_MS = {"SECOND": 1000, "MINUTE": 60_000, "HOUR": 3_600_000, "DAY": 86_400_000}
_SPAN = ("DAY", "HOUR", "MINUTE", "SECOND")

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
# SETs that do not change what a window aggregation computes: read, and listed in the config's header.
_NO_EFFECT_KEYS = {
    "parallelism.default", "pipeline.name", "pipeline.jars", "pipeline.classpaths", "pipeline.object-reuse",
    "pipeline.operator-chaining", "execution.buffer-timeout", "table.dml-sync", "table.exec.resource.default-parallelism",
    "table.exec.state.ttl", "table.generated-code.max-length", "table.exec.window-agg.buffer-size-limit",
    "table.sql-dialect", "table.exec.emit.early-fire.delay", "table.exec.emit.late-fire.delay",
}
_NO_EFFECT_PREFIXES = ("sql-client.", "execution.checkpointing.", "state.", "table.exec.mini-batch.",
                       "table.optimizer.", "taskmanager.", "jobmanager.", "rest.", "restart-strategy.",
                       "high-availability.", "table.display.", "execution.target", "yarn.", "kubernetes.",
                       "metrics.", "table.exec.async-lookup.")
_NO_EFFECT_WHY = {"table.exec.state.ttl": "window aggregations clear their state when a window fires, not by TTL",
                  "table.sql-dialect": "only 'default' is read"}
_TABLE_WATERMARK_OPTIONS = ("scan.watermark.emit.strategy", "scan.watermark.idle-timeout")


def config_from_flink_sql(path: str | Path, *, source_path: str, output_path: str, table: str | None = None,
                          query_window: int | None = None, splits: list[str] | None = None) -> tuple[str, JobConfig]:
    """The YAML text (commented) and the JobConfig of the Flink SQL script at `path`; FlinkSettingsError if a
    construct it needs cannot be mapped (its line named)."""
    script = read_script(Path(path).read_text())
    origin = f"generated by `replay config from-flink-sql {Path(path).name}`: the replay of the Flink SQL job's window"

    def convert(window: Window) -> tuple[str, JobConfig]:
        return _convert(script, window, origin, source_path, output_path, splits)

    return choose_window(script, table, query_window, convert)


def choose_window(script: Script, table: str | None, query_window: int | None, convert):
    """The converted config of the one windowing query the replay reproduces: the only one, or the N-th (1-based)
    of those reading `table` (all when None). Several: each is tried, and --query-window is offered only for those
    that map; when every one is refused, the first refusal is told."""
    windows = script.windows
    if table is not None:
        if table.lower() not in script.tables:
            raise FlinkSettingsError(f"--table {table}", "no CREATE TABLE of that name in the script"
                                     + _unparsed_hint(script))
        windows = [w for w in windows if _table_of(w, script) == table.lower()]
    if not windows and table is None:
        for tree, st in script.queries:
            over = next((n for n in tree.walk() if isinstance(n, exp.Window)), None)
            if over is not None:
                raise FlinkSettingsError(user_text(over, st), "an OVER aggregation, one result per row, not a window "
                                         "aggregation: not mapped (the script has no windowing query)",
                                         line_of(over, st.line))
    if not windows:
        raise FlinkSettingsError("windowing query", "none found (a query over TABLE(TUMBLE|HOP|SESSION(TABLE t, "
                                 "DESCRIPTOR(col), INTERVAL ...)) or GROUP BY TUMBLE|HOP|SESSION(col, INTERVAL ...))"
                                 + (f" reading {table}" if table else "") + _unparsed_hint(script),
                                 _first_query_line(script))
    if query_window is not None:
        if not 1 <= query_window <= len(windows):
            raise FlinkSettingsError(f"--query-window {query_window}", f"out of range: the script has "
                                     f"{len(windows)} windowing queries" + (f" reading {table}" if table else ""))
        return convert(windows[query_window - 1])
    if len(windows) == 1:
        return convert(windows[0])
    results = []
    for w in windows:
        try:
            results.append(convert(w))
        except FlinkSettingsError as e:
            results.append(e)
    mapped = [i for i, r in enumerate(results, 1) if not isinstance(r, FlinkSettingsError)]
    if not mapped:
        first = results[0]
        others = len(windows) - 1
        raise FlinkSettingsError(first.construct, f"{first.why} (and the script's {others} other windowing "
                                 f"{'query is' if others == 1 else 'queries are'} refused too)", first.line)
    found = ", ".join(f"{i} = {w.name} on line {w.line}" + ("" if i in mapped else " (refused)")
                      for i, w in enumerate(windows, 1))
    raise FlinkSettingsError("windowing query", f"{len(windows)} found ({found}): choose one with --query-window N "
                             f"({', '.join(map(str, mapped))} map{'s' if len(mapped) == 1 else ''})",
                             windows[1].line)


def _unparsed_hint(script: Script) -> str:
    if not script.unparsed:
        return ""
    line, words, why = script.unparsed[0]
    return f" (line {line}, {words} ..., could not be parsed: {why})"


def _first_query_line(script: Script) -> int | None:
    return script.queries[0][1].line if script.queries else (script.unparsed[0][0] if script.unparsed else None)


def _table_of(window: Window, script: Script) -> str | None:
    name = _data_name(window)
    if name is None:
        return None
    try:
        return resolve_source(name, script, "", window.line).table.name.lower()
    except FlinkSettingsError:
        return name.lower()


def _data_name(window: Window) -> str | None:
    if window.legacy:
        src = window.select.args.get("from") or window.select.args.get("from_") if window.select else None
        node = src.this if src is not None else None
    else:
        args = window.call.expressions
        node = args[0].expression if args and isinstance(args[0], exp.Kwarg) else (args[0] if args else None)
    return node.name if isinstance(node, exp.Table) and not isinstance(node.this, exp.Anonymous) else None


# -- the conversion, the fundamental reasons first -------------------------------------------------------------

def _convert(script: Script, window: Window, origin: str, source_path: str, output_path: str,
             splits: list[str] | None) -> tuple[str, JobConfig]:
    derived = Derived(origin=origin)
    derived.set("source.path", source_path, "--source-path")
    if splits:
        derived.set("source.splits", list(splits), SPLITS_COMMENT)
    _runtime_mode(window)
    source = _data_source(window, script)
    rowtime = _time_attribute(window, source)
    params = _bind(window)
    _review_settings(derived, window, source.table)
    derived.set("source.columns.event_time", rowtime.column, rowtime.comment)
    _window_into(derived, window, params, rowtime)
    aggregation_into(derived, window, source, script)
    _watermark_into(derived, source.table, rowtime, window)
    _later_settings(derived, script, window)
    derived.set("output.path", output_path, "--output-path")
    return render(derived)


def _runtime_mode(window: Window) -> None:
    value, line = window.settings.get("execution.runtime-mode", ("streaming", None))
    mode = value.strip().lower()
    if mode == "streaming":
        return
    construct = f"SET 'execution.runtime-mode' = '{value}'"
    if mode == "batch":
        raise FlinkSettingsError(construct, "a batch job has no watermarks: every window fires once at the end of "
                                 "the input with all its rows, none late; the replay reproduces a streaming job's "
                                 "watermarks and firings: not mapped", line)
    if mode == "automatic":
        raise FlinkSettingsError(construct, "Flink runs the job in batch mode when every source is bounded: not "
                                 "mapped (SET 'streaming' for a streaming job)", line)
    raise FlinkSettingsError(construct, "unknown runtime mode (streaming, batch, automatic)", line)


def _data_source(window: Window, script: Script) -> Source:
    text = lambda n: user_text(n, window.statement)  # noqa: E731
    if window.legacy:
        select = window.select
        src = (select.args.get("from") or select.args.get("from_")) if select is not None else None
        if select is not None and select.args.get("joins"):
            join = select.args["joins"][0]
            raise FlinkSettingsError(clause_text("joins", join, window.statement), "in the windowing query: the "
                                     "replay windows one table", line_of(join, window.line))
        node = src.this if src is not None else None
        if not isinstance(node, exp.Table) or isinstance(node.this, exp.Anonymous):
            raise FlinkSettingsError(f"FROM {text(node) if node is not None else '(none)'}", "the legacy group "
                                     "window reads no table or view of the script", window.line)
        return resolve_source(node.name, script, f"FROM {node.name}", window.line)
    name = window.name
    if name not in TVF_PARAMS and name != "CUMULATE":
        raise FlinkSettingsError(f"window function {name}", "unknown: the window TVFs are TUMBLE, HOP, SESSION "
                                 "(and CUMULATE, not replayed)", window.line)
    args = window.call.expressions
    data = args[0].expression if args and isinstance(args[0], exp.Kwarg) else (args[0] if args else None)
    if not isinstance(data, exp.Table) or isinstance(data.this, exp.Anonymous):
        shown = text(data) if data is not None else "(none)"
        raise FlinkSettingsError(f"{name} data {shown}", "not TABLE t of a table or view of the script (queries "
                                 "and CTEs are not followed)", window.line)
    return resolve_source(data.name, script, f"TABLE {data.name}", window.line)


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


def _time_attribute(window: Window, source: Source) -> Rowtime:
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


def _bind(window: Window) -> dict[str, exp.Expr]:
    """The window's arguments by parameter name, positional or named (`SIZE => INTERVAL ...`)."""
    name, line = window.name, window.line
    text = lambda n: user_text(n, window.statement)  # noqa: E731
    if name == "CUMULATE" and not window.legacy:
        raise FlinkSettingsError("CUMULATE window", "the replay engine has no cumulating windows (it has "
                                 "tumbling, sliding and session windows): not mapped", line)
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


def _window_into(derived: Derived, window: Window, args: dict[str, exp.Expr], rowtime: Rowtime) -> None:
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
        from zoneinfo import ZoneInfo, ZoneInfoNotFoundError
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

def _review_settings(derived: Derived, window: Window, table: Table) -> None:
    """Every SET in force at the query: mapped, refused by name, or of no effect (listed in the header)."""
    for key, (value, line) in window.settings.items():
        construct = f"SET '{key}' = '{value}'"
        if key in _REFUSED_SETTINGS:
            if value.strip().lower() not in ("false", "0", "0 s", "0s", "0 ms", "0ms"):
                raise FlinkSettingsError(construct, f"{_REFUSED_SETTINGS[key]}: not mapped", line)
            derived.notes.append(f"{construct} (line {line}): off, as by default")
        elif key in _MAPPED_SETTINGS:
            continue
        elif key == "table.sql-dialect" and value.strip().lower() != "default":
            raise FlinkSettingsError(construct, "the converter reads Flink's default dialect only", line)
        elif key in _NO_EFFECT_KEYS or key.startswith(_NO_EFFECT_PREFIXES):
            why = _NO_EFFECT_WHY.get(key, "no effect on what a window aggregation computes")
            derived.notes.append(f"{construct} (line {line}): {why}")
        else:
            raise FlinkSettingsError(construct, "a setting the converter does not know: it may change what the job "
                                     "computes, so it is not ignored (docs/flink_settings.md lists those read)", line)
    for key in table.options:
        if key.startswith("scan.watermark.") and key not in _TABLE_WATERMARK_OPTIONS:
            raise FlinkSettingsError(f"'{key}' = '{table.options[key]}' of CREATE TABLE {table.name}",
                                     "a watermark option the converter does not map (watermark alignment pauses "
                                     "splits, which changes the order rows are read in)", table.line)


def _later_settings(derived: Derived, script: Script, window: Window) -> None:
    """SETs written after the query: Flink does not apply them to it; said in the header so it is not a surprise."""
    start = window.statement.line if window.statement is not None else window.line
    for key, value, line in script.sets:
        if line > start and (key in _MAPPED_SETTINGS or key in _REFUSED_SETTINGS or key == "*"):
            what = f"SET '{key}' = '{value}'" if value is not None else ("RESET" if key == "*" else f"RESET '{key}'")
            derived.notes.append(f"{what} (line {line}) comes after the query (line {start}): not applied to it "
                                 "(a SET applies to the statements after it)")


def _watermark_into(derived: Derived, table: Table, rowtime: Rowtime, window: Window) -> None:
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
    _emit_into(derived, table, window)


def _emit_into(derived: Derived, table: Table, window: Window) -> None:
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


__all__ = ["config_from_flink_sql", "choose_window", "interval_ms", "zone_fixed_offset", "FlinkSQL",
           "table_column"]
