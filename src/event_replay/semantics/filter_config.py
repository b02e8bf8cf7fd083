"""The `filter` key of a job config: a Spark SQL boolean over the log's columns that decides which rows reach the
windows (docs/semantics.md, "Row filter").

The filter sits where a Flink job's `.filter(...)` sits between `assignTimestampsAndWatermarks` and
`keyBy(...).window(...)` (or a Flink SQL `WHERE` after the scan that assigned the watermark): every row still drives
its split's watermark, idleness and the replay clock; only a row whose predicate is true is windowed (or late). A
null predicate drops the row, as SQL's WHERE does.

`parse_filter` checks the text before Spark starts: it must parse as one Spark SQL expression (sqlglot's Spark
dialect), not a query, and hold no aggregate, window function, subquery or nondeterministic call (a replay must give
the same rows on every run). The columns and the type are checked against the source when the replay is planned
(io/row_filter.py). Every refusal is a ConfigError on `filter`. `filter_tree` gives the parsed expression, which the
reference model evaluates (row_filter.py).
"""
from __future__ import annotations

from functools import lru_cache
from typing import Any

import sqlglot
from sqlglot import exp

from .config_keys import ConfigError

KEY = "filter"
# Spark functions whose value changes from run to run (or row order to row order): a filter on them could not be
# replayed twice with one result.
_NONDETERMINISTIC = {"RAND", "RANDN", "RANDOM", "UUID", "SHUFFLE", "MONOTONICALLY_INCREASING_ID",
                     "SPARK_PARTITION_ID", "INPUT_FILE_NAME", "CURRENT_TIMESTAMP", "NOW", "CURRENT_DATE",
                     "LOCALTIMESTAMP", "UNIX_TIMESTAMP", "CURRENT_TIME"}


def parse_filter(raw: Any) -> str | None:
    """The filter as written (stripped), or None when absent; refused naming `filter` when it cannot be one."""
    if raw is None:
        return None
    if not isinstance(raw, str) or not raw.strip():
        raise ConfigError(KEY, "must be a Spark SQL boolean expression over the log's columns, "
                               "e.g. \"status_code = '403'\"")
    text = raw.strip()
    filter_tree(text)
    return text


@lru_cache(maxsize=64)
def filter_tree(text: str, key: str = KEY) -> exp.Expr:
    """The parsed filter (sqlglot, Spark dialect); ConfigError on `key` (`filter`, or `having`, which decides
    firings by the same rules over a firing's columns) when it is not a predicate of one row."""
    try:
        statements = [s for s in sqlglot.parse(text, read="spark") if s is not None]
    except sqlglot.errors.SqlglotError as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ConfigError(key, f"not a Spark SQL expression ({first}): {text!r}") from None
    if len(statements) != 1:
        raise ConfigError(key, f"must be one expression, not {len(statements)} statements: {text!r}")
    tree = statements[0]
    problem = _not_a_row_predicate(tree)
    if problem:
        raise ConfigError(key, f"{problem}: {text!r}")
    return tree


def _not_a_row_predicate(tree: exp.Expr) -> str | None:
    """Why the expression cannot decide one row on its own (None: it can)."""
    if isinstance(tree, (exp.Query, exp.Command, exp.DDL, exp.DML)) or tree.find(exp.Query) is not None:
        return "a query or statement, not a row predicate (write the condition only, as after WHERE)"
    if tree.find(exp.AggFunc) is not None:
        return "an aggregate decides groups, not rows (the filter is applied to each row before the windows)"
    if tree.find(exp.Window) is not None:
        return "a window function (OVER) depends on other rows: not a row predicate"
    if isinstance(tree, (exp.Literal, exp.Null)) or not list(tree.find_all(exp.Column)):
        return "reads no column of the log: it keeps every row or none"
    for node in tree.walk():
        name = node.name if isinstance(node, exp.Anonymous) else (
            node.sql_name() if isinstance(node, exp.Func) else None)
        if isinstance(node, (exp.CurrentTimestamp, exp.CurrentDate, exp.CurrentTime, exp.Rand, exp.Randn)) or \
                (name and name.upper() in _NONDETERMINISTIC):
            return f"{node.sql('spark')} is not the same on every run: a replay must select the same rows each time"
    return None


def filter_columns(text: str) -> list[str]:
    """The log's columns the filter reads, as written, in order of first use (`a.b`, a field of struct `a`: a)."""
    return list(dict.fromkeys(c.parts[0].name for c in filter_tree(text).find_all(exp.Column)))
