"""The windowing query around a window: what it reads (a table, or views over one), its key and its aggregates.

A Flink window aggregation is `SELECT k, window_start, window_end, AGG(x) AS name, ... FROM TABLE(<TVF>)
GROUP BY k, window_start, window_end`, or in the legacy form `SELECT k, TUMBLE_START(ts, INTERVAL ...), AGG(x)
FROM t GROUP BY TUMBLE(ts, INTERVAL ...), k`. The replay keys by one column and computes Spark SQL aggregates, so:

- the data is a CREATE TABLE, or views over one that select, rename, compute or filter its columns
  (query_source.py, which refuses the others by name);
- the GROUP BY must hold the window (window_start, window_end [, window_time], or the legacy group-window call) and
  one key column, a column of the table, or none (one group per window: `source.columns.key: null`); for the
  SESSION TVF the key must be its `PARTITION BY` (Flink's sessions without it span all keys: keyless);
- the SELECT list may hold the key, the window columns (window_start/window_end/window_time, or
  TUMBLE_START/_END/_ROWTIME and the HOP_ and SESSION_ ones) and aggregates, alone or in expressions (typed.py);
  an aggregate is named by its alias, else by the sink column at its position (`INSERT INTO sink SELECT ...`),
  else `<function>_<column>` (`count_all` for COUNT(*)), else `expr_<position>`;
- the windowing query's WHERE is the replay's `filter` (where.py), its HAVING the replay's `having` (having.py);
  joins, GROUPING SETS / ROLLUP / CUBE and
  DISTINCT change which rows or groups count: refused; so is a window aggregation nested in a further query (window
  Top-N, ...): the replay's output is its own.
"""
from __future__ import annotations

import re

from sqlglot import exp

from .dialect import FlinkSQL
from .query_source import Source, clause_text, table_column
from .script import WINDOW_COLUMNS, Script, Window
from .script_text import line_of, user_text
from .settings import Derived, FlinkSettingsError
from .typed import FType, Spark, Translator, ftype

_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_REFUSED_CLAUSES = {
    "joins": "the replay windows one table",
}
LEGACY_AUX = {"START": "window_start", "END": "window_end", "ROWTIME": "window_time"}
_PROCESSING_TIME = {"PROCTIME", "NOW", "CURRENT_TIMESTAMP", "LOCALTIMESTAMP", "CURRENT_ROW_TIMESTAMP", "LOCALTIME",
                    "CURRENT_TIME", "CURRENT_DATE", "UNIX_TIMESTAMP"}


def processing_time_call(node: exp.Expr | None) -> exp.Expr | None:
    """The processing-time function in an expression (PROCTIME(), CURRENT_TIMESTAMP, NOW(), LOCALTIMESTAMP, ...)."""
    for n in node.walk() if node is not None else ():
        if isinstance(n, (exp.CurrentTimestamp, exp.CurrentTime, exp.CurrentDate)):
            return n
        if isinstance(n, exp.Anonymous) and n.name.upper() in _PROCESSING_TIME:
            return n
        if isinstance(n, exp.Column) and not n.table and n.name.upper() in _PROCESSING_TIME:
            return n  # LOCALTIMESTAMP, CURRENT_TIMESTAMP without parentheses
        if isinstance(n, exp.Func) and not isinstance(n, exp.Anonymous) and n.sql_name().upper() in _PROCESSING_TIME:
            return n
    return None


def aggregation_into(derived: Derived, window: Window, source: Source, script: Script, key_hint: str | None = None
                     ) -> tuple[str | None, dict[str, exp.Expr]]:
    """source.columns.key and aggregations from the windowing query; returns the key as the query names it (None:
    no key) and each output column's expression as the query writes it (what a HAVING may repeat: having.py)."""
    select, line = window.select, window.line
    text = lambda n: user_text(n, window.statement)  # noqa: E731
    if select is None:
        raise FlinkSettingsError(f"{window.name} window", "not in a SELECT", line)
    if select.parent is not None and not isinstance(select.parent, (exp.Insert, exp.Create)):
        raise FlinkSettingsError(f"{window.name} window", "aggregated in a subquery of a further query (Top-N, "
                                 "join, ...): the replay reproduces a window aggregation's own output only", line)
    for clause, why in _REFUSED_CLAUSES.items():
        if select.args.get(clause):
            node = select.args[clause]
            node = node[0] if isinstance(node, list) else node
            raise FlinkSettingsError(clause_text(clause, node, window.statement), f"in the windowing query: {why}",
                                     line_of(node, line))
    if select.args.get("distinct"):
        raise FlinkSettingsError("SELECT DISTINCT", "in the windowing query: not mapped", line)
    key_visible, key = _key(window, select, source)
    group_line = line_of(select.args['group'], line)
    if key is None:
        derived.set("source.columns.key", None, f"GROUP BY {user_text(select.args['group'], window.statement)} "
                    f"(line {group_line}) has no key: one group per window")
    else:
        derived.set("source.columns.key", key, f"GROUP BY {key_visible} (line {group_line})"
                    + (f", column {key} of table {source.table.name}" if key != key_visible else ""))
    names = _sink_columns(select, script)
    seen: set[str] = set()
    outputs: dict[str, exp.Expr] = {}
    for i, item in enumerate(select.expressions):
        inner = item.unalias()
        item_line = line_of(item, line)
        if isinstance(inner, exp.Column) and inner.name.lower() in WINDOW_COLUMNS and not window.legacy:
            if inner.name.lower() == "window_time":
                derived.notes.append(f"{text(item)} (line {item_line}): window_end - 1 ms, from the output's "
                                     "window_end")
            continue
        if key_visible is not None and isinstance(inner, exp.Column) and inner.name.lower() == key_visible.lower():
            continue
        if window.legacy and _legacy_aux(inner, window, text, item_line):
            part = inner.name.upper().rpartition("_")[2]
            what = {"START": "the output's window_start", "END": "the output's window_end",
                    "ROWTIME": "window_end - 1 ms, from the output's window_end"}[part]
            derived.notes.append(f"{text(item)} (line {item_line}): {what}")
            continue
        if isinstance(inner, exp.Star):
            raise FlinkSettingsError(text(item), "SELECT * of a window aggregation: not valid Flink SQL", item_line)
        translator = Translator(column_resolver(source, window, item_line), text, item_line)
        out = translator.item(inner)
        name = item.alias if isinstance(item, exp.Alias) else names[i] if names else _default_name(inner, out, i)
        if not _IDENT.match(name):
            raise FlinkSettingsError(text(item), f"output column {name!r}: the replay's output columns are "
                                     "identifiers ([A-Za-z_][A-Za-z0-9_]*): give it an alias", item_line)
        if name in seen:
            raise FlinkSettingsError(text(item), f"a second output column named {name!r}", item_line)
        seen.add(name)
        outputs[name] = inner
        why = f": {out.why}" if out.why else ""
        derived.set(f"aggregations.{name}", out.sql, f"{text(inner)} (line {item_line}) -> {out.type}{why}")
    if not seen:
        raise FlinkSettingsError("SELECT list", "no aggregate (COUNT, SUM, MIN, MAX, AVG) of the window", line)
    return key_visible, outputs


def _default_name(node: exp.Expr, out: Spark, i: int) -> str:
    arg = node.this if isinstance(node, exp.AggFunc) else None
    if isinstance(arg, exp.Distinct) and len(arg.expressions) == 1:
        arg = arg.expressions[0]
    if isinstance(node, exp.AggFunc) and (isinstance(arg, exp.Star) or isinstance(arg, exp.Column)):
        fn = type(node).__name__.lower()
        return f"{fn}_{'all' if isinstance(arg, exp.Star) else arg.name}"
    return f"expr_{i}"


def column_resolver(source: Source, window: Window, line: int, statement=None):
    """The Spark SQL and Flink type of a column the window's query (or `statement`, a view's) reads from `source`:
    a table column, a computed column's expression, or a view's expression (typed.py translates those)."""
    def resolve(column: exp.Column, src: Source = source) -> tuple[str, FType]:
        value = src.columns.get(column.name.lower())
        if value is None:
            if column.name.lower() in WINDOW_COLUMNS:
                raise FlinkSettingsError(column.name, "a window column inside an aggregate: not mapped", line)
            raise FlinkSettingsError(user_text(column, statement or window.statement), f"{column.name} is not a "
                                     f"column of {src.describe()}", line)
        if isinstance(value, str):
            table = src.table
            computed = table.computed(value)
            if computed is None:
                return spark_column(value), ftype(table.type_of(value))
            pt = processing_time_call(computed)
            if pt is not None:
                raise FlinkSettingsError(f"{value} AS {user_text(computed, table.statement)}", "processing time "
                                         f"(column of {table.name}, line {line_of(computed, table.line)}): its value "
                                         "differs from run to run: not mapped", line)
            sub = Translator(lambda c: resolve(c, Source(table, {k: col.name for k, col in table.columns.items()})),
                             lambda n: user_text(n, table.statement), line)
            out = sub.expr(computed, in_aggregate=True)
            return out.sql, out.type
        expr, inner, view = value
        sub = Translator(lambda c: resolve(c, inner), lambda n: user_text(n, view.statement), line)
        out = sub.expr(expr, in_aggregate=True)
        return out.sql, out.type
    return resolve


def _legacy_aux(node: exp.Expr, window: Window, text, line: int) -> bool:
    """TUMBLE_START(ts, INTERVAL ...) and the like: the replay's window_start / window_end / window_end - 1 ms."""
    if not isinstance(node, exp.Anonymous):
        return False
    name = node.name.upper()
    prefix, _, part = name.rpartition("_")
    if prefix not in ("TUMBLE", "HOP", "SESSION") or part not in LEGACY_AUX | {"PROCTIME": ""}:
        return False
    if part == "PROCTIME":
        raise FlinkSettingsError(text(node), "the processing time of a window: not mapped", line)
    if prefix != window.name or [a.sql() for a in node.expressions] != [a.sql() for a in window.call.expressions]:
        raise FlinkSettingsError(text(node), f"does not name the GROUP BY's {text(window.call)}: not valid Flink SQL",
                                 line)
    return True


def _key(window: Window, select: exp.Select, source: Source) -> tuple[str | None, str | None]:
    """(the key as the query names it, the table column it is); (None, None) for a query grouped by the window
    alone (one group per window: a keyless replay)."""
    group, line = select.args.get("group"), window.line
    text = lambda n: user_text(n, window.statement)  # noqa: E731
    if group is None:
        raise FlinkSettingsError(f"{window.name} window", "without GROUP BY window_start, window_end: not a window "
                                 "aggregation (window assignment, Top-N, joins and deduplication are not replayed)",
                                 line)
    grouped = [g for g in group.expressions if isinstance(g, (exp.GroupingSets, exp.Rollup, exp.Cube))]
    for extra in ("grouping_sets", "rollup", "cube"):
        grouped += [g for g in (group.args.get(extra) or []) if isinstance(g, exp.Expr)]
    if grouped:
        raise FlinkSettingsError(f"GROUP BY ... {grouped[0].sql(FlinkSQL)}", "several groupings of one window: "
                                 "the replay groups by one key", line_of(group, line))
    columns = []
    for g in group.expressions:
        if window.legacy and g is window.call:
            continue
        if not isinstance(g, exp.Column):
            raise FlinkSettingsError(f"GROUP BY {text(g)}", "only columns are mapped", line_of(g, line))
        columns.append(g.name)
    if window.legacy:
        window_cols = [c for c in columns if c.lower() in WINDOW_COLUMNS]
        if window_cols:
            raise FlinkSettingsError(f"GROUP BY {window_cols[0]}", "no such column with a legacy group window",
                                     line_of(group, line))
    elif not {"window_start", "window_end"} <= {c.lower() for c in columns}:
        raise FlinkSettingsError(f"GROUP BY {', '.join(columns)}", "without window_start and window_end: not a "
                                 "window aggregation", line_of(group, line))
    keys = [c for c in columns if c.lower() not in WINDOW_COLUMNS]
    if not keys:
        if window.name == "SESSION" and not window.legacy:
            _check_session_partition(window, None)
        return None, None
    if len(keys) != 1:
        shown = ", ".join([text(window.call)] + columns if window.legacy else columns)
        raise FlinkSettingsError(f"GROUP BY {shown}", f"{len(keys)} key columns: the replay keys by one column "
                                 "(or none)", line_of(group, line))
    key = table_column(source, keys[0], f"GROUP BY {keys[0]}", line_of(group, line))
    if source.table.computed(key) is not None:
        raise FlinkSettingsError(f"GROUP BY {keys[0]}", f"a computed column of {source.table.name}: the replay keys "
                                 "by a column of the log", line_of(group, line))
    if window.name == "SESSION" and not window.legacy:
        _check_session_partition(window, keys[0])
    return keys[0], key


def _check_session_partition(window: Window, key: str | None) -> None:
    data = window.call.expressions[0]
    data = data.expression if isinstance(data, exp.Kwarg) else data
    partition = [c.name.lower() for c in data.args.get("partition_by") or []]
    if key is None and partition:
        raise FlinkSettingsError(f"SESSION(TABLE {data.name} PARTITION BY {', '.join(partition)} ...)", "sessions "
                                 "per key grouped by the window alone: not mapped (GROUP BY the key too)", window.line)
    if key is not None and partition != [key.lower()]:
        got = f"PARTITION BY {', '.join(partition)}" if partition else "no PARTITION BY"
        raise FlinkSettingsError(f"SESSION(TABLE {data.name} ...)", f"{got}: Flink's sessions then span "
                                 f"{'all keys' if not partition else 'other keys'}, the replay's are per {key} "
                                 f"(write TABLE {data.name} PARTITION BY {key})", window.line)


def spark_column(name: str) -> str:
    """A column as a Spark SQL expression names it (backquoted unless a plain identifier)."""
    return name if _IDENT.match(name) else f"`{name.replace('`', '``')}`"


def _sink_columns(select: exp.Select, script: Script) -> list[str] | None:
    """The sink's column names by position when the query is `INSERT INTO sink SELECT ...` of a known sink."""
    insert = select.parent
    if not isinstance(insert, exp.Insert):
        return None
    target = insert.this
    if isinstance(target, exp.Schema):
        names = [c.name for c in target.expressions]
    else:
        sink = script.tables.get(target.name.lower()) if isinstance(target, exp.Table) else None
        names = [c.name for c in sink.columns.values()] if sink else []
    return names if len(names) == len(select.expressions) else None
