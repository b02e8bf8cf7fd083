"""The windowing query around a window TVF: its key (GROUP BY) and its aggregates (SELECT list).

A Flink window aggregation is `SELECT k, window_start, window_end, AGG(x) AS name, ... FROM TABLE(<TVF>)
GROUP BY k, window_start, window_end`. The replay keys by one column and computes Spark SQL aggregates, so:

- the GROUP BY must hold window_start, window_end (window_time may be there too) and exactly one key column,
  and for SESSION that column must be the TVF's `PARTITION BY` (Flink's sessions without it span all keys);
- the SELECT list may hold the key, the window columns and COUNT(*), COUNT(x), SUM(x), MIN(x), MAX(x), AVG(x) of
  a column of the table; an aggregate is named by its alias, else by the sink column at its position
  (`INSERT INTO sink SELECT ...`), else `<function>_<column>` (`count_all` for COUNT(*));
- WHERE, HAVING, joins, GROUPING SETS / ROLLUP / CUBE, DISTINCT and FILTER change which rows count: refused;
  so is a window aggregation nested in a further query (window Top-N, ...): the replay's output is its own.
"""
from __future__ import annotations

import re

from sqlglot import exp

from .dialect import FlinkSQL
from .script import WINDOW_COLUMNS, Table, Window, line_of
from .settings import Derived, FlinkSettingsError

AGGREGATES = {exp.Count: "count", exp.Sum: "sum", exp.Min: "min", exp.Max: "max", exp.Avg: "avg"}
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_REFUSED_CLAUSES = {
    "where": "the replay aggregates every row of the log (filter the log instead)",
    "having": "the replay fires every window (no HAVING filter)",
    "joins": "the replay windows one table",
}


def aggregation_into(derived: Derived, window: Window, table: Table, tables: dict[str, Table]) -> None:
    select, line = window.select, window.line
    if select is None:
        raise FlinkSettingsError(f"{window.name} window", "not in a SELECT", line)
    if select.parent is not None and not isinstance(select.parent, (exp.Insert, exp.Create)):
        raise FlinkSettingsError(f"{window.name} window", "aggregated in a subquery of a further query (Top-N, "
                                 "join, ...): the replay reproduces a window aggregation's own output only", line)
    for clause, why in _REFUSED_CLAUSES.items():
        if select.args.get(clause):
            node = select.args[clause]
            node = node[0] if isinstance(node, list) else node
            raise FlinkSettingsError(node.sql(FlinkSQL)[:60], f"in the windowing query: {why}", line_of(node, line))
    key = _key(window, select, table)
    derived.set("source.columns.key", key, f"GROUP BY {key} (line {line_of(select.args['group'], line)})")
    names = _sink_columns(select, tables)
    seen = set()
    for i, item in enumerate(select.expressions):
        inner = item.unalias()
        if isinstance(inner, exp.Column) and inner.name.lower() in WINDOW_COLUMNS | {key.lower()}:
            continue
        item_line = line_of(item, line)
        fn, arg = _aggregate(inner, table, item_line)
        name = item.alias if isinstance(item, exp.Alias) else \
            names[i] if names else f"{fn}_{'all' if arg == '*' else arg.strip('`')}"
        if name in seen:
            raise FlinkSettingsError(item.sql(FlinkSQL), f"a second output column named {name!r}", item_line)
        seen.add(name)
        derived.set(f"aggregations.{name}", f"{fn}({arg})", f"{inner.sql(FlinkSQL)} (line {item_line})")
    if not seen:
        raise FlinkSettingsError("SELECT list", "no aggregate (COUNT, SUM, MIN, MAX, AVG) of the window", line)


def _key(window: Window, select: exp.Select, table: Table) -> str:
    group, line = select.args.get("group"), window.line
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
        if not isinstance(g, exp.Column):
            raise FlinkSettingsError(f"GROUP BY {g.sql(FlinkSQL)}", "only columns are mapped", line_of(g, line))
        columns.append(g.name)
    if not {"window_start", "window_end"} <= {c.lower() for c in columns}:
        raise FlinkSettingsError(f"GROUP BY {', '.join(columns)}", "without window_start and window_end: not a "
                                 "window aggregation", line_of(group, line))
    keys = [c for c in columns if c.lower() not in WINDOW_COLUMNS]
    if len(keys) != 1:
        why = "no key column: the replay's windows are keyed (GROUP BY k, window_start, window_end)" if not keys \
            else f"{len(keys)} key columns: the replay keys by one column"
        raise FlinkSettingsError(f"GROUP BY {', '.join(columns)}", why, line_of(group, line))
    key = keys[0]
    if key.lower() not in table.columns:
        raise FlinkSettingsError(f"GROUP BY {key}", f"not a column of {table.name}", line_of(group, line))
    if window.name == "SESSION":
        _check_session_partition(window, key)
    return key


def _check_session_partition(window: Window, key: str) -> None:
    data = window.call.expressions[0]
    data = data.expression if isinstance(data, exp.Kwarg) else data
    partition = [c.name.lower() for c in data.args.get("partition_by") or []]
    if partition != [key.lower()]:
        got = f"PARTITION BY {', '.join(partition)}" if partition else "no PARTITION BY"
        raise FlinkSettingsError(f"SESSION(TABLE {data.name} ...)", f"{got}: Flink's sessions then span "
                                 f"{'all keys' if not partition else 'other keys'}, the replay's are per {key} "
                                 f"(write TABLE {data.name} PARTITION BY {key})", window.line)


def _aggregate(node: exp.Expr, table: Table, line: int) -> tuple[str, str]:
    """(function, Spark SQL argument) of an aggregate of a plain column, or refused."""
    fn = AGGREGATES.get(type(node))
    if fn is None:
        raise FlinkSettingsError(node.sql(FlinkSQL), "not mapped: the SELECT list may hold the key, window_start, "
                                 "window_end and COUNT(*), COUNT(x), SUM(x), MIN(x), MAX(x), AVG(x)", line)
    arg = node.this
    if fn == "count" and isinstance(arg, exp.Star):
        return fn, "*"
    if not isinstance(arg, exp.Column) or node.expressions:
        raise FlinkSettingsError(node.sql(FlinkSQL), "only an aggregate of a plain column is mapped"
                                 + (" (DISTINCT is not)" if isinstance(arg, exp.Distinct) else ""), line)
    if arg.name.lower() not in table.columns:
        raise FlinkSettingsError(node.sql(FlinkSQL), f"{arg.name} is not a column of {table.name}", line)
    return fn, spark_column(arg.name)


def spark_column(name: str) -> str:
    """A column as a Spark SQL expression names it (backquoted unless a plain identifier)."""
    return name if _IDENT.match(name) else f"`{name.replace('`', '``')}`"


def _sink_columns(select: exp.Select, tables: dict[str, Table]) -> list[str] | None:
    """The sink's column names by position when the query is `INSERT INTO sink SELECT ...` of a known sink."""
    insert = select.parent
    if not isinstance(insert, exp.Insert):
        return None
    target = insert.this
    if isinstance(target, exp.Schema):
        names = [c.name for c in target.expressions]
    else:
        sink = tables.get(target.name.lower()) if isinstance(target, exp.Table) else None
        names = [c.name for c in sink.columns.values()] if sink else []
    return names if len(names) == len(select.expressions) else None
